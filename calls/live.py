"""The live path: websocket consumers, group names, and broadcasts after commit.

Pages open one socket each (htmx's ws extension). A message is one or more
server-rendered partials whose root elements carry stable ids; the browser
inserts or replaces them (static/callscope/live.js). After (re)connecting the
browser says what it already shows and the consumer sends what it missed,
so a dropped connection loses nothing.
"""

import asyncio
import json
import logging
import threading
import time

from asgiref.sync import SyncToAsync, async_to_sync
from channels.generic.websocket import WebsocketConsumer
from channels.layers import get_channel_layer
from django.db import close_old_connections
from django.http import QueryDict
from django.template.loader import render_to_string

from . import access, fragments
from .callfilters import CallFilter
from .models import Call, Event, Turn

RESYNC_TURN_LIMIT = 100
TIMELINE_EVERY = 5  # turns between redraws of the call's picture when no slot changed
PICTURE_COALESCE_SECONDS = 1.0  # a burst of slot changes in a second is one redraw
logger = logging.getLogger(__name__)


def project_group(project_id: int) -> str:
    return f"project-{project_id}"


def call_group(call_id: int) -> str:
    return f"call-{call_id}"


def send_fragment(group: str, html: str) -> None:
    async_to_sync(get_channel_layer().group_send)(group, {"type": "live.fragment", "html": html})


def broadcast_turn(call: Call, turn: Turn, changed_tool_calls: set[str]) -> None:
    """Push a new turn to the calls list and the call page (called after commit).

    Only what changed is rendered (the turn, the header, the tool slots it
    touched), so a broadcast costs the same at turn 300 as at turn 3.
    """
    send_fragment(project_group(call.project_id), fragments.call_row(call))
    html = fragments.call_header(call) + fragments.turns(call, [turn])
    if changed_tool_calls:
        html += fragments.tool_rows(call, changed_tool_calls)
    send_fragment(call_group(call.pk), html)
    # The picture is redrawn whole: when a tool slot changed, and every few turns.
    if changed_tool_calls or turn.number % TIMELINE_EVERY == 0:
        picture_changed(call.pk)


def broadcast_events(call: Call, events: list[Event], changed_tool_calls: set[str] = frozenset()) -> None:
    """Push new events to the calls list and the call page (called after commit)."""
    send_fragment(project_group(call.project_id), fragments.call_row(call))
    html = fragments.call_header(call) + fragments.events(call, events)
    if changed_tool_calls:
        html += fragments.tool_rows(call, changed_tool_calls)
    send_fragment(call_group(call.pk), html)
    if changed_tool_calls or any(e.type.startswith("hold.") or e.type == "call.ended" for e in events):
        picture_changed(call.pk)


# The call's picture costs time in proportion to the call, so it is never drawn on the
# ingest path: ingest marks the call, and one thread per process redraws each marked
# call once (a burst of requests is one redraw) and pushes it to the call's page.
_dirty: dict[int, object] = {}  # call id -> the server's event loop that asked, if any
_dirty_lock = threading.Lock()
_wake = threading.Event()
_painter: threading.Thread | None = None


def picture_changed(call_id: int) -> None:
    global _painter
    # Sent on the server's own loop when there is one: the in-memory channel layer's
    # queues belong to it (a loop made up in the painter thread would not wake them).
    loop = getattr(SyncToAsync.threadlocal, "main_event_loop", None)
    with _dirty_lock:
        _dirty[call_id] = loop
        if _painter is None or not _painter.is_alive():
            _painter = threading.Thread(target=_paint, name="callscope-pictures", daemon=True)
            _painter.start()
    _wake.set()


def _paint() -> None:
    while True:
        _wake.wait()
        time.sleep(PICTURE_COALESCE_SECONDS)
        with _dirty_lock:
            due = sorted(_dirty.items(), key=lambda item: item[0])
            _dirty.clear()
            _wake.clear()
        for call_id, loop in due:
            try:
                call = Call.objects.select_related("project").filter(pk=call_id).first()
                if call is None:
                    continue
                html = fragments.timeline(call)
                if loop is not None and loop.is_running():
                    message = {"type": "live.fragment", "html": html}
                    send = get_channel_layer().group_send(call_group(call_id), message)
                    asyncio.run_coroutine_threadsafe(send, loop).result(timeout=10)
                else:
                    send_fragment(call_group(call_id), html)
            except Exception:  # a failed redraw must not stop the next ones
                logger.exception("redrawing the picture of call %s failed", call_id)
            finally:
                close_old_connections()


class LiveConsumer(WebsocketConsumer):
    """Joins its groups after checking the user may see them; forwards their fragments.

    Subclasses say which groups (`groups_for`, empty: not this user's) and what a page
    that (re)connected has missed (`resync`); `joined` and `left` run after the socket
    opened and when it closed (presence)."""

    groups_joined: tuple[str, ...] = ()

    def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            self.close(code=4401)
            return
        groups = tuple(self.groups_for(user))
        if not groups:
            self.close(code=4404)
            return
        self.groups_joined = groups
        for group in groups:
            async_to_sync(self.channel_layer.group_add)(group, self.channel_name)
        self.accept()
        self.joined(user)

    def disconnect(self, code):
        for group in self.groups_joined:
            async_to_sync(self.channel_layer.group_discard)(group, self.channel_name)
        if self.groups_joined:
            self.left()

    def receive(self, text_data=None, bytes_data=None):
        try:
            request = json.loads(text_data or "")
        except ValueError:
            return
        if isinstance(request, dict) and request.get("resync"):
            html = self.resync(request)
            if html:
                self.send(text_data=html)

    def live_fragment(self, event):
        self.send(text_data=event["html"])

    def groups_for(self, user) -> list[str]:
        raise NotImplementedError

    def resync(self, request: dict) -> str:
        return ""

    def joined(self, user) -> None:
        pass

    def left(self) -> None:
        pass


class ProjectConsumer(LiveConsumer):
    """The calls list of one project."""

    def groups_for(self, user) -> list[str]:
        self.project = access.project_for(user, self.scope["url_route"]["kwargs"]["slug"])
        return [project_group(self.project.pk)] if self.project else []

    def resync(self, request: dict) -> str:
        query = request.get("filter") if isinstance(request.get("filter"), str) else ""
        only = CallFilter.from_query(QueryDict(query.lstrip("?")))
        calls = access.newest_calls(self.project, only=only)
        return fragments.call_rows(calls, matched=True)


class CallConsumer(LiveConsumer):
    """One call's page."""

    def groups_for(self, user) -> list[str]:
        self.call = access.call_by_pk_for(user, self.scope["url_route"]["kwargs"]["call_pk"])
        return [call_group(self.call.pk)] if self.call else []

    def resync(self, request: dict) -> str:
        call = Call.objects.select_related("project").get(pk=self.call.pk)
        after = _int(request.get("after"), 0)
        first = _int(request.get("first"), after + 1)
        turns = list(
            Turn.objects.filter(call=call, number__gt=after)
            .order_by("number")
            .defer("raw_blob", "snapshot")[: RESYNC_TURN_LIMIT + 1]
        )
        if len(turns) > RESYNC_TURN_LIMIT:
            # Too far behind to patch up: have the page load afresh.
            return render_to_string("calls/partials/reload.html")
        lowest = 0 if first <= 1 else first  # turn 0: events before the first request
        events = Event.objects.filter(call=call, turn__gte=lowest, turn__lte=after).order_by("pk")
        return (
            fragments.call_header(call)
            + fragments.timeline(call)
            + fragments.tool_rows(call)
            + fragments.turns(call, turns)
            + fragments.events(call, list(events))
        )


def _int(value, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
