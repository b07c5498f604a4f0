"""Ingest benchmark: throughput, latency, cost against call length, storage, push latency.

Starts its own daphne (one worker) on a fresh database and drives it over
real HTTP and websockets from this process, so the load generator shares
the machine, as in the figures quoted in the README.

    make bench                                    # SQLite, in-memory layer
    make bench BENCH_ARGS=--postgres              # a throwaway PostgreSQL cluster (root, Debian's postgresql)
    make bench BENCH_ARGS="--database-url postgres://user:pass@host:5432/db"

Prints medians and ratios; nothing here asserts a timing.
"""

import argparse
import asyncio
import contextlib
import glob
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calls.synthetic import synthetic_call  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


class Http:
    """A minimal keep-alive HTTP/1.1 client on asyncio streams: cheap enough
    that the load generator does not drown the server it measures."""

    def __init__(self, port):
        self.port = port
        self.reader = self.writer = None

    async def request(self, method, path, body=b"", headers=None):
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {len(body)}"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        await self.writer.drain()
        status = int((await self.reader.readline()).split()[1])
        length, close = 0, False
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
            if name.lower() == "connection" and "close" in value.lower():
                close = True
        content = await self.reader.readexactly(length)
        if close:
            self.close()
        return status, content

    def close(self):
        if self.writer is not None:
            self.writer.close()
            self.writer = None


@contextlib.contextmanager
def temporary_postgres():
    """A throwaway PostgreSQL cluster (as CI starts one); yields its URL."""
    binaries = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    if not binaries:
        raise SystemExit("--postgres needs Debian's postgresql package (apt-get install postgresql)")
    pg, port = binaries[-1], free_port()
    data = tempfile.mkdtemp(prefix="callscope-bench-pg-")
    os.chmod(data, 0o755)
    shutil.chown(data, "postgres")
    run = lambda *cmd: subprocess.run(["runuser", "-u", "postgres", "--", *cmd], check=True, capture_output=True)  # noqa: E731
    run(f"{pg}/initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
    options = f"-p {port} -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off"
    run(f"{pg}/pg_ctl", "-D", data, "-l", f"{data}/log", "-w", "-o", options, "start")
    try:
        run(f"{pg}/psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-qc", "CREATE DATABASE bench")
        yield f"postgres://postgres@127.0.0.1:{port}/bench"
    finally:
        run(f"{pg}/pg_ctl", "-D", data, "-m", "fast", "stop")
        shutil.rmtree(data, ignore_errors=True)


def start_server(port, env):
    server = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "dashboard.asgi:application"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(os.environ.get("CALLSCOPE_BENCH_SERVER_LOG", os.devnull), "w"),
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/login/", timeout=1).close()
            return server
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("daphne did not start")
            time.sleep(0.2)


async def post_call(http, key, call_id, bodies, latencies=None):
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    for number, body in enumerate(bodies, start=1):
        started = time.perf_counter()
        status, content = await http.request("POST", f"/api/v1/calls/{call_id}/requests", body, headers)
        if status != 201:
            raise SystemExit(f"ingest failed: {status} {content[:200]!r}")
        if latencies is not None:
            latencies.append((number, time.perf_counter() - started))


async def throughput(port, key, agents, turns, calls_per_agent):
    """Concurrent agents, each posting whole calls turn by turn."""
    corpus = [synthetic_call(turns, seed=seed) for seed in range(8)]
    latencies = []

    async def agent(index):
        http = Http(port)
        for n in range(calls_per_agent):
            await post_call(http, key, f"tp-{index}-{n}", corpus[(index + n) % len(corpus)], latencies)
        http.close()

    started = time.perf_counter()
    await asyncio.gather(*(agent(i) for i in range(agents)))
    elapsed = time.perf_counter() - started
    values = [latency for _n, latency in latencies]
    return len(values) / elapsed, statistics.median(values), percentile(values, 99)


async def length_scaling(port, key, turns, repeats):
    """One agent, sequential: latency of a request at turn 10 against turn `turns`."""
    early, late = [], []
    for r in range(repeats):
        latencies = []
        http = Http(port)
        await post_call(http, key, f"long-{r}", synthetic_call(turns, seed=100 + r), latencies)
        http.close()
        early += [t for n, t in latencies if 5 <= n <= 15]
        late += [t for n, t in latencies if turns - 10 <= n <= turns]
    return statistics.median(early), statistics.median(late)


async def push_latency(port, key, session, watchers, posts):
    import websockets

    bodies = synthetic_call(posts + 1, seed=42)
    http = Http(port)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    await http.request("POST", "/api/v1/calls/push/requests", bodies[0], headers)
    sockets = []
    for _ in range(watchers):
        ws = await websockets.connect(
            f"ws://127.0.0.1:{port}/ws/p/bench/",
            origin=f"http://127.0.0.1:{port}",
            additional_headers={"Cookie": f"sessionid={session}"},
        )
        await ws.send(json.dumps({"resync": True}))
        await ws.recv()
        sockets.append(ws)
    delays = []
    for body in bodies[1:]:
        started = time.perf_counter()
        receive = [asyncio.ensure_future(ws.recv()) for ws in sockets]
        await http.request("POST", "/api/v1/calls/push/requests", body, headers)
        for done in asyncio.as_completed(receive):
            await done
            delays.append(time.perf_counter() - started)
    for ws in sockets:
        await ws.close()
    http.close()
    return statistics.median(delays), percentile(delays, 99)


async def floor(port, repeats=50):
    """A request refused before any work (no key): what Django on daphne costs alone."""
    http, times = Http(port), []
    for _ in range(repeats):
        started = time.perf_counter()
        await http.request("POST", "/api/v1/calls/x/requests", b"{}", {"Content-Type": "application/json"})
        times.append(time.perf_counter() - started)
    http.close()
    return statistics.median(times)


async def page_open(port, session, call_id, repeats):
    http = Http(port)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        status, _ = await http.request(
            "GET", f"/p/bench/calls/{call_id}/", headers={"Cookie": f"sessionid={session}"}
        )
        assert status == 200, status
        times.append(time.perf_counter() - started)
    http.close()
    return statistics.median(times)


def stored_bytes(call_id):
    from calls.models import Call, CallTip, Message, Turn

    call = Call.objects.get(external_id=call_id)
    total = sum(
        len(bytes(blob)) + len(json.dumps(changes)) + len(json.dumps(snapshot or []))
        for blob, changes, snapshot in Turn.objects.filter(call=call).values_list(
            "raw_blob", "changes", "snapshot"
        )
    )
    total += sum(len(b.encode()) for b in Message.objects.filter(call=call).values_list("body", flat=True))
    tip = CallTip.objects.get(call=call)
    return total + len(bytes(tip.raw)) + len(json.dumps(tip.messages))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    parser.add_argument("--postgres", action="store_true", help="start a throwaway PostgreSQL")
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL", ""))
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--turns", type=int, default=40, help="turns per call in the throughput run")
    parser.add_argument("--calls-per-agent", type=int, default=3)
    parser.add_argument("--long-turns", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--watchers", type=int, default=10)
    parser.add_argument("--posts", type=int, default=100)
    args = parser.parse_args()
    if args.postgres:
        with temporary_postgres() as url:
            args.database_url = url
            run(args)
    else:
        run(args)


def run(args):
    workdir = tempfile.mkdtemp(prefix="callscope-bench-")
    database_url = args.database_url or f"sqlite:///{workdir}/bench.sqlite3"
    env = {**os.environ, "DATABASE_URL": database_url, "SECRET_KEY": "bench-only-secret"}
    env.pop("REDIS_URL", None)
    if args.redis_url:
        env["REDIS_URL"] = args.redis_url
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from calls.keys import create_key
    from calls.models import Membership, Project

    call_command("migrate", verbosity=0)
    project, _ = Project.objects.get_or_create(slug="bench", defaults={"name": "Bench"})
    key = create_key(project)[1]
    user, _ = get_user_model().objects.get_or_create(username="bench")
    Membership.objects.get_or_create(project=project, user=user)
    client = Client()
    client.force_login(user)
    session = client.cookies["sessionid"].value
    from django.db import connection

    backend = connection.vendor + (" + redis" if args.redis_url else " + in-memory layer")
    connection.close()

    port = free_port()
    server = start_server(port, env)
    try:
        print(f"Callscope ingest benchmark: {backend}, 1 daphne worker, {os.cpu_count()} cores")
        print(f"framework floor {asyncio.run(floor(port)) * 1e3:6.1f} ms for a request refused before any work (median)")
        rate, p50, p99 = asyncio.run(throughput(port, key, args.agents, args.turns, args.calls_per_agent))
        print(
            f"throughput      {rate:8.0f} requests/s stored  ({args.agents} concurrent agents, "
            f"{args.turns}-turn calls)"
        )
        print(f"latency         p50 {p50 * 1e3:6.1f} ms   p99 {p99 * 1e3:6.1f} ms  (under that load)")
        early, late = asyncio.run(length_scaling(port, key, args.long_turns, args.repeats))
        print(
            f"call length     turn 10: {early * 1e3:5.1f} ms   turn {args.long_turns}: "
            f"{late * 1e3:5.1f} ms   ratio {late / early:4.2f}  (median, one agent)"
        )
        raw_total = sum(len(b) for b in synthetic_call(args.long_turns, seed=100))
        stored = stored_bytes("long-0")
        print(
            f"storage         {stored / 1024:8.0f} KiB stored for {raw_total / 1024:.0f} KiB of raw "
            f"bodies ({args.long_turns} turns): ratio {stored / raw_total:.3f}"
        )
        p50, p99 = asyncio.run(push_latency(port, key, session, args.watchers, args.posts))
        print(
            f"POST-to-screen  p50 {p50 * 1e3:6.1f} ms   p99 {p99 * 1e3:6.1f} ms  "
            f"({args.watchers} watchers, {args.posts} posts)"
        )
        opened = asyncio.run(page_open(port, session, "long-0", 10))
        print(f"call page       {opened * 1e3:6.1f} ms to serve a {args.long_turns}-turn call page (median)")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
