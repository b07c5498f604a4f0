import io
import tempfile
from pathlib import Path

import pytest
from channels.testing import ChannelsLiveServerTestCase
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command

from calls import keys
from calls.models import Call, Event, IngestKey, Project
from tests.conftest import sample_bodies


def test_create_ingest_key_prints_the_key_alone_on_the_last_line(db):
    out, err = io.StringIO(), io.StringIO()
    call_command("create_ingest_key", "new-team", stdout=out, stderr=err)
    secret = out.getvalue().strip().splitlines()[-1]
    key = keys.authenticate(secret)
    assert key is not None and key.project.slug == "new-team"
    assert secret not in err.getvalue()
    call_command("create_ingest_key", "new-team", stdout=io.StringIO(), stderr=io.StringIO())
    assert Project.objects.count() == 1 and IngestKey.objects.count() == 2


def test_create_ingest_key_refuses_a_bad_slug(db):
    with pytest.raises(CommandError):
        call_command("create_ingest_key", "Not A Slug", stdout=io.StringIO(), stderr=io.StringIO())


def test_demo_setup_creates_a_login_that_works_and_a_key_file(db, tmp_path):
    out = io.StringIO()
    call_command("demo_setup", key_file=str(tmp_path / "key"), stdout=out)
    assert "demo / callscope-demo" in out.getvalue()
    user = authenticate(username="demo", password="callscope-demo")
    assert user is not None and user.projects.get().slug == "demo"
    assert keys.authenticate((tmp_path / "key").read_text().strip()).project.slug == "demo"


class ReplaySamplesTest(ChannelsLiveServerTestCase):
    """`make run` fills the dashboard through the real ingest API."""

    def test_it_replays_the_bundled_calls_byte_for_byte(self):
        project = Project.objects.create(slug="demo", name="Demo")
        secret = keys.create_key(project)[1]
        with tempfile.TemporaryDirectory() as directory:
            key_file = Path(directory) / "key"
            key_file.write_text(secret)
            call_command(
                "replay_samples",
                url=self.live_server_url,
                key_file=str(key_file),
                speed=20,
                stagger=0.05,
                stdout=io.StringIO(),
                stderr=io.StringIO(),
            )
        calls = {c.external_id.rsplit("-", 1)[0]: c for c in Call.objects.all()}
        assert sorted(calls) == sorted(
            f"demo-{name}" for name in ["sync_tool", "async_tool_user_speaks", "interruption_sync_tool", "fix_in_place"]
        )
        from calls import history

        for name, call in calls.items():
            bodies = sample_bodies(name.removeprefix("demo-"))
            turns = list(call.turns.order_by("number"))
            assert [history.raw_body(t) for t in turns] == bodies
            assert call.ended_at is not None
            assert Event.objects.filter(call=call, type="response").count() == len(bodies)
