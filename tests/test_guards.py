"""The ASGI guards: ingest bodies capped as they arrive, websockets same-origin only."""

import asyncio
import json
from dataclasses import dataclass, field

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connections
from django.test import Client

from calls.guards import BodyLimit, SameOriginValidator
from calls.models import Call
from dashboard.asgi import application
from tests.conftest import sample_bodies

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 100
API_PATH = "/api/v1/calls/c1/requests"


@pytest.fixture(autouse=True)
async def _close_thread_db_connections():
    # ORM calls made from asgiref's worker thread keep a connection open,
    # which stalls PostgreSQL's DROP DATABASE at the end of the session.
    yield
    await sync_to_async(connections.close_all)()


@pytest.fixture
def small_limit(settings):
    settings.CALLSCOPE_MAX_BODY_BYTES = LIMIT
    return LIMIT


# --- A hand-driven HTTP exchange ------------------------------------------------


@dataclass
class Exchange:
    """What an ASGI server saw: messages the app sent, body chunks it pulled."""

    sent: list[dict] = field(default_factory=list)
    chunks_pulled: int = 0

    @property
    def status(self) -> int:
        return self.sent[0]["status"]

    @property
    def headers(self) -> dict[bytes, bytes]:
        return dict(self.sent[0]["headers"])

    @property
    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.sent[1:])

    def json(self) -> dict:
        return json.loads(self.body)


def http_scope(path: str, headers: list[tuple[bytes, bytes]]) -> dict:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1:8000"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


async def run_http(app, path: str, chunks: list[bytes], headers=()) -> Exchange:
    """Run one request through `app` the way an ASGI server would."""
    exchange = Exchange()
    pending = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    ]

    async def receive():
        if pending:
            exchange.chunks_pulled += 1
            return pending.pop(0)
        # A real server has nothing more until the client goes away.
        await asyncio.Event().wait()

    async def send(message):
        exchange.sent.append(message)

    await asyncio.wait_for(app(http_scope(path, list(headers)), receive, send), timeout=5)
    return exchange


@dataclass
class Inner:
    """An inner app that reads the whole body, then answers with an echo of it."""

    calls: int = 0
    received: list[dict] = field(default_factory=list)
    send_attempts: int = 0

    @property
    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.received)

    async def __call__(self, scope, receive, send):
        self.calls += 1
        while True:
            message = await receive()
            self.received.append(message)
            if message["type"] == "http.disconnect" or not message.get("more_body"):
                break
        self.send_attempts += 1
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"echo:" + self.body})


def content_length(n) -> tuple[bytes, bytes]:
    return (b"content-length", str(n).encode())


# --- BodyLimit on its own ------------------------------------------------------


async def test_an_oversize_content_length_gets_413_json_without_calling_the_app(small_limit):
    inner = Inner()
    exchange = await run_http(
        BodyLimit(inner), API_PATH, [b"x" * (LIMIT + 1)], [content_length(LIMIT + 1)]
    )
    assert exchange.status == 413
    assert exchange.headers[b"content-type"] == b"application/json"
    assert exchange.headers[b"content-length"] == str(len(exchange.body)).encode()
    assert exchange.json() == {
        "error": {
            "code": "body_too_large",
            "message": f"The body is larger than the limit of {LIMIT} bytes.",
        }
    }
    assert inner.calls == 0
    assert exchange.chunks_pulled == 0


async def test_a_chunked_body_over_the_limit_gets_413_and_the_apps_answer_is_dropped(
    small_limit,
):
    inner = Inner()
    chunks = [b"a" * 40] * 5  # no Content-Length; 120 bytes > 100 on the third chunk
    exchange = await run_http(BodyLimit(inner), API_PATH, chunks)

    assert exchange.status == 413
    assert exchange.json()["error"]["code"] == "body_too_large"
    assert len(exchange.sent) == 2  # only our response; the app's 200 went nowhere
    assert inner.send_attempts == 1
    assert [m["type"] for m in inner.received] == ["http.request"] * 2 + ["http.disconnect"]
    assert exchange.chunks_pulled == 3  # stopped reading at the overflow


async def test_the_app_sees_a_disconnect_on_every_receive_after_a_refusal(small_limit):
    seen = []

    async def stubborn(scope, receive, send):
        for _ in range(4):
            seen.append((await receive())["type"])
        await send({"type": "http.response.start", "status": 500, "headers": []})

    exchange = await run_http(BodyLimit(stubborn), API_PATH, [b"z" * (LIMIT + 1), b"more"])
    assert seen == ["http.disconnect"] * 4
    assert exchange.status == 413 and len(exchange.sent) == 2
    assert exchange.chunks_pulled == 1


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
async def test_a_body_within_the_limit_reaches_the_app_byte_for_byte(small_limit, declared):
    body = bytes(range(256))[:LIMIT]  # every byte value we can fit, exactly at the limit
    chunks = [body[:1], b"", body[1:37], body[37:]]
    headers = [content_length(len(body))] if declared else []
    inner = Inner()
    exchange = await run_http(BodyLimit(inner), API_PATH, chunks, headers)

    assert inner.calls == 1
    assert inner.received == [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    ]
    assert inner.body == body
    assert exchange.status == 200
    assert exchange.body == b"echo:" + body


async def test_the_limit_is_read_per_request(settings):
    guard = BodyLimit(Inner())
    settings.CALLSCOPE_MAX_BODY_BYTES = 10
    assert (await run_http(guard, API_PATH, [b"x" * 11])).status == 413
    settings.CALLSCOPE_MAX_BODY_BYTES = 11
    assert (await run_http(guard, API_PATH, [b"x" * 11])).status == 200


@pytest.mark.parametrize("path", ["/login/", "/p/clinic/", "/api", "/apiv1/x", "/static/api/"])
async def test_other_paths_pass_straight_through(small_limit, path):
    seen = {}

    async def inner(scope, receive, send):
        seen.update(scope=scope, receive=receive, send=send)
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    exchange = Exchange()

    async def receive():
        raise AssertionError("the guard must not read bodies off /api/")

    async def send(message):
        exchange.sent.append(message)

    scope = http_scope(path, [content_length(10 * LIMIT)])
    await BodyLimit(inner)(scope, receive, send)
    assert seen == {"scope": scope, "receive": receive, "send": send}
    assert exchange.status == 204


async def test_non_http_scopes_pass_straight_through(small_limit):
    seen = []

    async def inner(scope, receive, send):
        seen.append((scope, receive, send))

    async def receive():
        return {}

    async def send(message):
        pass

    for scope in ({"type": "lifespan"}, {"type": "websocket", "path": "/api/x", "headers": []}):
        await BodyLimit(inner)(scope, receive, send)
    assert [s[0]["type"] for s in seen] == ["lifespan", "websocket"]
    assert all(r is receive and s is send for _, r, s in seen)


@pytest.mark.parametrize(
    "values",
    [[b"abc"], [b"-1"], [b"+5"], [b"1_0"], [b""], [b"1.5"], [b"5, 5"], [b"5", b"6"]],
    ids=repr,
)
async def test_a_malformed_content_length_gets_400_invalid_header(small_limit, values):
    inner = Inner()
    headers = [(b"content-length", value) for value in values]
    exchange = await run_http(BodyLimit(inner), API_PATH, [b"12345"], headers)
    assert exchange.status == 400
    assert exchange.json()["error"]["code"] == "invalid_header"
    assert inner.calls == 0


async def test_agreeing_repeated_content_lengths_and_whitespace_are_fine(small_limit):
    inner = Inner()
    headers = [(b"Content-Length", b" 5\t"), (b"content-length", b"5")]
    exchange = await run_http(BodyLimit(inner), API_PATH, [b"12345"], headers)
    assert exchange.status == 200 and inner.body == b"12345"


# --- BodyLimit in the real application ----------------------------------------


async def test_the_application_refuses_an_oversize_upload_before_reading_it(small_limit):
    exchange = await run_http(
        application, API_PATH, [b"{}" * LIMIT], [content_length(2 * LIMIT)]
    )
    assert exchange.status == 413
    assert exchange.json()["error"]["code"] == "body_too_large"
    assert exchange.chunks_pulled == 0


async def test_the_application_cuts_off_an_oversize_chunked_upload(small_limit):
    exchange = await run_http(application, API_PATH, [b" " * 60] * 10)
    assert exchange.status == 413
    assert exchange.json()["error"]["code"] == "body_too_large"
    assert len(exchange.sent) == 2
    assert exchange.chunks_pulled == 2


async def test_the_application_still_ingests_a_chunked_body(key):
    body = sample_bodies("sync_tool")[0]
    chunks = [body[i : i + 1000] for i in range(0, len(body), 1000)]
    headers = [
        (b"authorization", f"Bearer {key}".encode()),
        (b"content-type", b"application/json"),
    ]
    exchange = await run_http(application, API_PATH, chunks, headers)
    assert exchange.status == 201, exchange.body
    assert await Call.objects.filter(external_id="c1").aexists()


# --- SameOriginValidator -------------------------------------------------------


async def accept(scope, receive, send):
    """Accept any websocket: whatever is refused was refused by the guard."""
    assert (await receive())["type"] == "websocket.connect"
    await send({"type": "websocket.accept"})
    while (await receive())["type"] != "websocket.disconnect":
        pass


async def ws_connect(app, headers, path="/ws/p/clinic/"):
    communicator = WebsocketCommunicator(app, path, headers=headers)
    connected, _ = await communicator.connect(timeout=3)
    if connected:
        await communicator.disconnect()
    return connected


@pytest.mark.parametrize(
    "origin, host",
    [
        ("http://127.0.0.1:8000", "127.0.0.1:8000"),
        ("https://callscope.example", "callscope.example"),
        ("https://callscope.example", "callscope.example:443"),
        ("http://callscope.example", "callscope.example"),
        ("http://callscope.example", "callscope.example:80"),
        ("http://callscope.example:80", "callscope.example"),
        ("HTTP://CallScope.Example:8000", "callscope.EXAMPLE:8000"),
        ("http://[::1]:8000", "[::1]:8000"),
    ],
)
async def test_a_same_origin_websocket_is_let_through(origin, host):
    headers = [(b"origin", origin.encode()), (b"host", host.encode())]
    assert await ws_connect(SameOriginValidator(accept), headers)


@pytest.mark.parametrize(
    "origin, host",
    [
        pytest.param("http://127.0.0.1:9999", "127.0.0.1:8000", id="other port"),
        pytest.param("http://127.0.0.1", "127.0.0.1:8000", id="default port vs 8000"),
        pytest.param("http://127.0.0.1:8000", "127.0.0.1", id="8000 vs default port"),
        pytest.param("https://example.com", "example.com:80", id="https vs 80"),
        pytest.param("http://evil.example:8000", "127.0.0.1:8000", id="other host"),
        pytest.param("http://127.0.0.1.evil.example:8000", "127.0.0.1:8000", id="suffixed"),
        pytest.param(None, "127.0.0.1:8000", id="missing origin"),
        pytest.param("null", "127.0.0.1:8000", id="null origin"),
        pytest.param("http://127.0.0.1:8000", None, id="missing host"),
        pytest.param("http://x@127.0.0.1:8000", "127.0.0.1:8000", id="userinfo"),
        pytest.param("file://127.0.0.1:8000", "127.0.0.1:8000", id="non-web scheme"),
    ],
)
async def test_any_other_websocket_is_refused(origin, host):
    pairs = [(b"origin", origin), (b"host", host)]
    headers = [(name, value.encode()) for name, value in pairs if value is not None]
    assert not await ws_connect(SameOriginValidator(accept), headers)


async def test_a_second_origin_header_is_refused():
    headers = [
        (b"origin", b"http://evil.example"),
        (b"origin", b"http://127.0.0.1:8000"),
        (b"host", b"127.0.0.1:8000"),
    ]
    assert not await ws_connect(SameOriginValidator(accept), headers)


async def test_the_validator_leaves_http_alone():
    inner = Inner()
    exchange = await run_http(SameOriginValidator(inner), "/", [b"hi"])
    assert exchange.status == 200 and inner.body == b"hi"


# --- SameOriginValidator in the real application ------------------------------


def session_cookie(user) -> tuple[bytes, bytes]:
    client = Client()
    client.force_login(user)
    return (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())


async def test_the_application_refuses_a_page_on_another_port(alice):
    # 127.0.0.1 is in ALLOWED_HOSTS, so only the port tells these apart.
    headers = [
        (b"origin", b"http://127.0.0.1:9999"),
        (b"host", b"127.0.0.1:8000"),
        await sync_to_async(session_cookie)(alice),
    ]
    assert not await ws_connect(application, headers)


async def test_the_application_accepts_its_own_page(alice):
    headers = [
        (b"origin", b"http://127.0.0.1:8000"),
        (b"host", b"127.0.0.1:8000"),
        await sync_to_async(session_cookie)(alice),
    ]
    assert await ws_connect(application, headers)
