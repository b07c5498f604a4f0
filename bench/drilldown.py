"""How long the turn page's tabs take to render: a 300-turn call, and a 5 MB request.

Ingests through the real API into a throwaway SQLite database, then renders each
tab of the last turn through Django's test client (one process, no network) and
prints the median of several renders.

    SECRET_KEY=x .venv/bin/python bench/drilldown.py
"""

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-secret")
os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite3"
os.environ["CALLSCOPE_MAX_BODY_BYTES"] = str(64 * 1024 * 1024)

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

from calls.keys import create_key  # noqa: E402
from calls.models import Membership, Project  # noqa: E402
from calls.synthetic import synthetic_call  # noqa: E402

TABS = ("messages", "raw", "diff", "model", "export")
RUNS = 5


def big_body() -> bytes:
    """About 5 MB: a long Telugu conversation whose tool results carry large payloads."""
    messages = [{"role": "system", "content": "You are Sita."}]
    for n in range(120):
        messages.append({"role": "user", "content": "శుక్రవారం మధ్యాహ్నం ఖాళీ ఉందా? " * 20})
        call_id = f"call_{n:024d}"
        messages.append({"role": "assistant", "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"day": "శుక్రవారం", "n": n})}}]})
        payload = json.dumps({"rows": [{"day": "శుక్రవారం", "slot": f"{h}:00", "note": "ఖాళీ " * 40} for h in range(40)]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": payload})
    return json.dumps({"model": "gpt-4.1-mini", "messages": messages}).encode()


def timed(client: Client, url: str) -> float:
    runs = []
    for _ in range(RUNS):
        started = time.perf_counter()
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


def main():
    call_command("migrate", verbosity=0)
    project = Project.objects.create(slug="bench", name="Bench")
    user = get_user_model().objects.create_user("bench")
    Membership.objects.create(project=project, user=user, role=Membership.Role.ADMIN)
    _row, key = create_key(project)
    agent, person = Client(HTTP_HOST="localhost"), Client(HTTP_HOST="localhost")
    person.force_login(user)
    headers = {"Authorization": f"Bearer {key}"}
    for body in synthetic_call(300, seed=1):
        agent.post("/api/v1/calls/long/requests", data=body, content_type="application/json", headers=headers)
    big = big_body()
    agent.post("/api/v1/calls/big/requests", data=big, content_type="application/json", headers=headers)
    print("Turn page render time, median of 5 (Django test client, SQLite)")
    for name, url, label in (
        ("long", "/p/bench/calls/long/turns/300/", "300-turn call, turn 300"),
        ("big", "/p/bench/calls/big/turns/1/", f"one {len(big) / 1e6:.1f} MB request"),
    ):
        print(f"  {label}:")
        for tab in TABS:
            print(f"    {tab:9s} {timed(person, f'{url}?tab={tab}') * 1000:7.0f} ms")


if __name__ == "__main__":
    main()
