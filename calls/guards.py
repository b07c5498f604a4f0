"""ASGI guards that run in front of Django and Channels.

`BodyLimit` refuses oversize ingest bodies while they arrive: Django's ASGI
handler spools the whole body to a temp file before any view runs, so the
check in `calls.api` alone would let an unauthenticated client fill the disk.

`SameOriginValidator` only lets a websocket in when the page that opened it
has the same host and port as the socket. `AllowedHostsOriginValidator`
compares hostnames only, so another service on the same machine (a different
port) could otherwise open our sockets with the viewer's session cookie, which
browsers share across ports.
"""

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import SplitResult, urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

API_PREFIX = "/api/"
DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}
OWS = b" \t"  # optional whitespace around a header value (RFC 9110)


def header_values(scope: Scope, name: bytes) -> list[bytes]:
    # Servers lowercase names, but a hand-built scope (tests, other
    # middleware) may not, and a missed duplicate would be a bypass.
    return [value for key, value in scope.get("headers", []) if key.lower() == name]


async def send_json_error(send: Send, status: int, code: str, message: str) -> None:
    """The API's error shape, sent without Django (which never sees this request)."""
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"x-content-type-options", b"nosniff"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def too_large_message(limit: int) -> str:
    # Same wording as calls.api, so clients see one message whichever check fires.
    return f"The body is larger than the limit of {limit} bytes."


class BodyLimit:
    """Refuse `/api/` request bodies over `CALLSCOPE_MAX_BODY_BYTES` with a JSON 413."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self._is_api(scope):
            await self.app(scope, receive, send)
            return
        # Read per request, not in __init__: tests and deploys override settings.
        limit: int = settings.CALLSCOPE_MAX_BODY_BYTES

        lengths = header_values(scope, b"content-length")
        if lengths:
            declared = self._parse_length(lengths)
            if declared is None:
                await send_json_error(
                    send, 400, "invalid_header", "Content-Length must be one whole number."
                )
                return
            if declared > limit:
                # Answer before reading a byte: the inner app would spool it all.
                await send_json_error(send, 413, "body_too_large", too_large_message(limit))
                return

        # Count even when Content-Length was fine: chunked bodies have none,
        # and it costs nothing to not trust the server's framing.
        received = 0
        refused = False
        response_started = False

        async def guarded_receive() -> Message:
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    refused = True
                    # If the app already answered (it streamed before reading
                    # everything) a second response start would be invalid; just
                    # cut the request off.
                    if not response_started:
                        await send_json_error(
                            send, 413, "body_too_large", too_large_message(limit)
                        )
                    # Django then gives up on the request as an aborted client.
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal response_started
            if refused:
                return  # our 413 already went out; the app's answer would corrupt it
            if message["type"] == "http.response.start":
                response_started = True
            await send(message)

        await self.app(scope, guarded_receive, guarded_send)

    @staticmethod
    def _is_api(scope: Scope) -> bool:
        # `path` includes `root_path` when mounted under a prefix; Django strips it too.
        path: str = scope.get("path", "")
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        return path.startswith(API_PREFIX)

    @staticmethod
    def _parse_length(values: list[bytes]) -> int | None:
        # int() would also take "+5", "1_000" or "٣"; only ASCII digits are a
        # length. Repeats are allowed only when they agree (RFC 9110 8.6).
        parsed = {value.strip(OWS) for value in values}
        if len(parsed) != 1:
            return None
        (value,) = parsed
        if not value.isdigit():  # bytes.isdigit is ASCII-only, and False for b""
            return None
        return int(value)


def parse_authority(value: str, scheme: str | None) -> tuple[str, int | None] | None:
    """(hostname, port) of a bare `host[:port]`, or None if it is not one.

    The port is the explicit one, else `scheme`'s default, else None.
    """
    try:
        parts: SplitResult = urlsplit(f"//{value}")
        port = parts.port  # raises on a non-numeric or out-of-range port
    except ValueError:
        return None
    # Userinfo, a path or an empty port is not something a browser sends;
    # refuse rather than guess which part is the host.
    if not parts.hostname or "@" in value or value.endswith(":") or value != parts.netloc:
        return None
    if port is None and scheme is not None:
        port = DEFAULT_PORTS[scheme]
    return parts.hostname, port  # urlsplit lowercases the hostname


def same_origin(origin: str, host: str) -> bool:
    """Whether the page at `origin` is on exactly the host and port in `host`."""
    scheme, sep, authority = origin.partition("://")
    scheme = scheme.lower()
    # `null` (sandboxed frames, file://) and non-web schemes have no host:port.
    if not sep or scheme not in DEFAULT_PORTS:
        return False
    page = parse_authority(authority, scheme)
    server = parse_authority(host.strip(), None)
    if page is None or server is None:
        return False
    page_host, page_port = page
    server_host, server_port = server
    if page_host != server_host:
        return False
    if server_port is None:
        # A port-less Host means the client used its scheme's default port;
        # behind a TLS-terminating proxy we cannot tell ws from wss, so a page
        # on either default port counts.
        return page_port in (80, 443)
    return page_port == server_port


class SameOriginValidator:
    """Deny websockets whose Origin is not exactly this server's Host (host and port)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        origins = header_values(scope, b"origin")
        hosts = header_values(scope, b"host")
        # Browsers always send one Origin on a websocket; a missing or repeated
        # one is not a page we served, so it gets no benefit of the doubt.
        if len(origins) == 1 and len(hosts) == 1 and self._matches(origins[0], hosts[0]):
            await self.app(scope, receive, send)
            return
        # Same denial as channels' OriginValidator: close in answer to connect.
        await WebsocketDenier()(scope, receive, send)

    @staticmethod
    def _matches(origin: bytes, host: bytes) -> bool:
        try:
            return same_origin(origin.decode("ascii"), host.decode("ascii"))
        except UnicodeDecodeError:
            return False
