import json
import multiprocessing
from pathlib import Path

import pytest
from django.test import Client
from django.contrib.auth import get_user_model

from calls.keys import create_key
from calls.models import Membership, Project

SAMPLES = Path(__file__).resolve().parent.parent / "calls" / "demo_data" / "pipecat-1.1.0"


def pytest_configure(config):
    # Live-server tests run daphne in a child process; forking after asgiref
    # started threads breaks its websockets (and PostgreSQL): spawn instead.
    multiprocessing.set_start_method("spawn", force=True)


def sample_bodies(name: str) -> list[bytes]:
    """The exact request bodies of one bundled Pipecat capture, in order."""
    lines = (SAMPLES / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["raw"].encode("utf-8") for line in lines]


@pytest.fixture
def project(db):
    return Project.objects.create(slug="clinic", name="Clinic")


@pytest.fixture
def other_project(db):
    return Project.objects.create(slug="other", name="Other team")


@pytest.fixture
def key(project):
    return create_key(project)[1]


@pytest.fixture
def other_key(other_project):
    return create_key(other_project)[1]


@pytest.fixture
def alice(project):
    """A member (admin) of `project`."""
    user = get_user_model().objects.create_user("alice", password="alice-password-1")
    Membership.objects.create(project=project, user=user, role=Membership.Role.ADMIN)
    return user


@pytest.fixture
def charlie(other_project):
    """A member of another project only."""
    user = get_user_model().objects.create_user("charlie", password="charlie-password-1")
    Membership.objects.create(project=other_project, user=user, role=Membership.Role.ADMIN)
    return user


@pytest.fixture
def alice_client(alice):
    """A browser session of alice's (a separate client from the agents' `client`)."""
    client = Client()
    client.force_login(alice)
    return client


@pytest.fixture
def post_request(client):
    """POST a model request body to the ingest API, as an agent would."""

    def post(key, call_id, body, content_type="application/json", **headers):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        return client.post(
            f"/api/v1/calls/{call_id}/requests",
            data=body,
            content_type=content_type,
            headers={"Authorization": f"Bearer {key}", **headers},
        )

    return post


@pytest.fixture
def post_events(client):
    def post(key, call_id, body, **headers):
        return client.post(
            f"/api/v1/calls/{call_id}/events",
            data=json.dumps(body).encode() if not isinstance(body, bytes) else body,
            content_type="application/json",
            headers={"Authorization": f"Bearer {key}", **headers},
        )

    return post


@pytest.fixture(autouse=True)
def _no_webhook_thread(settings):
    """Tests send due webhook deliveries themselves (triage.webhooks.deliver_due)."""
    settings.CALLSCOPE_WEBHOOK_SENDER = False
