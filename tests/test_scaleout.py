"""Several daphne workers behind one Redis: a post to one reaches pages on another."""

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client

from tests.conftest import sample_bodies

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not os.environ.get("REDIS_URL"), reason="needs REDIS_URL: workers share the Redis layer"
    ),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def database_url() -> str:
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings['NAME']}"
    return (
        f"postgres://{settings['USER']}:{settings['PASSWORD']}@{settings['HOST']}:"
        f"{settings['PORT']}/{settings['NAME']}"
    )


@pytest.fixture
def workers():
    env = {**os.environ, "DATABASE_URL": database_url()}
    ports, processes = [free_port(), free_port()], []
    for port in ports:
        processes.append(
            subprocess.Popen(
                [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "dashboard.asgi:application"],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    try:
        for port in ports:
            deadline = time.monotonic() + 20
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/login/", timeout=1).close()
                    break
                except OSError:
                    assert time.monotonic() < deadline, f"daphne on {port} did not start"
                    time.sleep(0.2)
        yield ports
    finally:
        for process in processes:
            # No graceful shutdown needed, and a lingering worker would keep
            # the test database open past its teardown.
            process.kill()
            process.wait(timeout=10)


def test_a_request_posted_to_one_worker_reaches_a_page_on_another(alice, key, workers):
    import websockets

    client = Client()
    client.force_login(alice)
    session = client.cookies["sessionid"].value
    page_port, ingest_port = workers

    async def watch_and_post():
        async with websockets.connect(
            f"ws://127.0.0.1:{page_port}/ws/p/clinic/",
            origin=f"http://127.0.0.1:{page_port}",
            additional_headers={"Cookie": f"sessionid={session}"},
        ) as ws:
            await ws.send(json.dumps({"resync": True}))
            await ws.recv()  # the (empty) snapshot: we are in the group now
            request = urllib.request.Request(
                f"http://127.0.0.1:{ingest_port}/api/v1/calls/across-workers/requests",
                data=sample_bodies("sync_tool")[0],
                headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
            )
            urllib.request.urlopen(request, timeout=10).close()
            return await ws.recv()

    import asyncio

    message = asyncio.run(asyncio.wait_for(watch_and_post(), timeout=20))
    assert "across-workers" in message


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL connection pool")
def test_database_connections_do_not_pile_up_across_requests(key, workers):
    """Each request runs in a new thread under ASGI; without a pool every one
    of them used to leave a connection open until PostgreSQL refused clients."""

    def server_connections() -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            )
            return cursor.fetchone()[0]

    port = workers[1]
    before = server_connections()

    def agent(index: int) -> None:
        for number in range(12):
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/api/v1/calls/many-{index}/requests",
                data=json.dumps({"messages": [{"role": "user", "content": f"line {number}"}]}).encode(),
                headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
            )
            urllib.request.urlopen(request, timeout=20).close()

    threads = [threading.Thread(target=agent, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    peak = 0
    while any(t.is_alive() for t in threads):
        peak = max(peak, server_connections())
        time.sleep(0.05)
    # At most the pool's size, not one connection per request in flight or finished.
    assert peak - before <= 20
    assert server_connections() - before <= 20
