"""Events an agent reports beside its requests: validated whole, then stored in one go."""

from dataclasses import dataclass
from datetime import datetime
from functools import partial


from . import analysis, live, projectrules, responsebody, rfc3339, slotchecks
from .capture import lock_call, record_findings, write_transaction
from .rules import timeline
from .models import Call, Event, Project, ToolCall
from .requestbody import BodyError, canonical_json, decode_json
from .storable import text as storable

TYPES = (
    "response",
    "tool.started",
    "tool.finished",
    "tool.cancelled",
    "hold.started",
    "hold.released",
    "interruption",
    "call.ended",
)
MAX_EVENTS_PER_POST = 1000


class EventConflict(Exception):
    """An event id or Idempotency-Key reused for different content."""


@dataclass(frozen=True)
class IncomingEvent:
    type: str
    at: datetime | None
    turn: int | None
    tool_call_id: str
    data: str  # canonical JSON of the event object
    key: str | None


def parse_events(raw: bytes, idempotency_key: str | None) -> list[IncomingEvent]:
    """Every event of a POST body, or a BodyError naming the first bad one."""
    body = decode_json(raw)
    if isinstance(body, dict):
        items, single = [body], True
    elif isinstance(body, list):
        items, single = body, False
    else:
        raise BodyError("not_an_object", "The body must be one event object or an array of them.")
    if not items:
        raise BodyError("no_events", "The array holds no events.")
    if len(items) > MAX_EVENTS_PER_POST:
        raise BodyError("too_many_events", f"Send at most {MAX_EVENTS_PER_POST} events per request.")
    events = []
    for index, item in enumerate(items):
        where = "The event" if single else f"Event [{index}]"
        events.append(_parse_event(item, where, idempotency_key, index))
    return events


def _parse_event(item, where: str, idempotency_key: str | None, index: int) -> IncomingEvent:
    if not isinstance(item, dict):
        raise BodyError("invalid_event", f"{where} is not a JSON object.")
    kind = item.get("type")
    if kind not in TYPES:
        raise BodyError(
            "unknown_event_type", f"{where} has type {kind!r}; expected one of {', '.join(TYPES)}."
        )
    at = None
    if "at" in item:
        at = rfc3339.parse(item["at"])
        if at is None:
            raise BodyError("invalid_timestamp", f"{where}: `at` must be an RFC 3339 timestamp.")
    turn = item.get("turn")
    if turn is not None and (not isinstance(turn, int) or isinstance(turn, bool) or turn < 1):
        raise BodyError("invalid_event", f"{where}: `turn` must be a positive whole number.")
    tool_call_id = ""
    if kind == "response" and "body" not in item:
        raise BodyError("invalid_event", f"{where}: a response event needs `body`.")
    if kind.startswith("tool."):
        tool_call_id = item.get("tool_call_id")
        if not isinstance(tool_call_id, str) or not 0 < len(tool_call_id) <= 200:
            raise BodyError("invalid_event", f"{where}: `tool_call_id` must be a non-empty string.")
        if "name" in item and not isinstance(item["name"], str):
            raise BodyError("invalid_event", f"{where}: `name` must be a string.")
    if kind.startswith("hold."):
        ids = item.get("tool_call_ids")
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i for i in ids):
            raise BodyError(
                "invalid_event", f"{where}: `tool_call_ids` must be a non-empty array of strings."
            )
        cause = item.get("cause")
        if (kind == "hold.released" or cause is not None) and cause not in ("result", "timeout"):
            raise BodyError("invalid_event", f"{where}: `cause` must be \"result\" or \"timeout\".")
    event_id = item.get("id")
    if event_id is not None and (not isinstance(event_id, str) or not 0 < len(event_id) <= 200):
        raise BodyError("invalid_event", f"{where}: `id` must be a non-empty string.")
    # Two namespaces, so an event id can never collide with a header-derived key.
    if event_id is not None:
        key = f"id:{storable(event_id)}"
    elif idempotency_key is not None:
        key = f"header:{idempotency_key}#{index}"
    else:
        key = None
    return IncomingEvent(kind, at, turn, storable(tool_call_id), canonical_json(item), key)


@dataclass(frozen=True)
class Recorded:
    call: Call
    stored: int
    duplicates: int
    findings: list  # the Finding rows first reported by these events


def record_events(
    project: Project, external_id: str, events: list[IncomingEvent], received_at: datetime
) -> Recorded:
    """Store the events that are new."""
    stored = duplicates = 0
    findings = []
    with write_transaction() as after_commit:
        call = lock_call(project, external_id, received_at)
        call.project = project
        keys = [e.key for e in events if e.key is not None]
        seen = dict(
            Event.objects.filter(call=call, idempotency_key__in=keys).values_list(
                "idempotency_key", "data"
            )
        ) if keys else {}
        new = []
        for event in events:
            if event.key is not None and event.key in seen:
                if seen[event.key] != event.data:
                    raise EventConflict(event.key)  # rolls back the whole post
                duplicates += 1
                continue
            if event.key is not None:
                seen[event.key] = event.data
            at = event.at or received_at
            new.append(
                Event(
                    call=call,
                    type=event.type,
                    at=at,
                    received_at=received_at,
                    turn=event.turn if event.turn is not None else call.turn_count,
                    tool_call_id=event.tool_call_id,
                    data=event.data,
                    idempotency_key=event.key,
                )
            )
            if event.type == "call.ended":
                call.ended_at = at
        if new:
            Event.objects.bulk_create(new)
            changed = _update_tool_calls(call, new)
            policy = projectrules.policy(project.rule_settings)
            findings = record_findings(call, call.turn_count, _findings(call, new, policy))
            if changed:
                call.tool_call_count = ToolCall.objects.filter(call=call).count()
            stored = len(new)
            call.event_count += stored
            call.last_activity_at = max(call.last_activity_at, received_at)
            call.revision += 1
            call.save()
            after_commit.append(partial(live.broadcast_events, call, new, changed))
    return Recorded(call, stored, duplicates, findings)


def _update_tool_calls(call: Call, events: list[Event]) -> set[str]:
    """What the events say of tool calls: a response issued them, a tool started,
    finished or was cancelled. Written to the rows' history (marked as coming from an
    event), never to the slot's state, which is what requests carry."""
    said = []  # (tool_call_id, name, arguments, event, state)
    for event in events:
        fields = event.fields
        if event.type == "response":
            for c in responsebody.read(fields.get("body")).calls:
                if c.tool_call_id:  # cut as requests' ids are, so both name one row
                    said.append((storable(c.tool_call_id, 200), c.name, c.arguments, event, "issued"))
        elif event.type.startswith("tool."):
            name = fields.get("name", "")
            said.append((event.tool_call_id, name, "", event, event.type.removeprefix("tool.")))
    if not said:
        return set()
    rows = {
        t.tool_call_id: t
        for t in ToolCall.objects.filter(call=call, tool_call_id__in={s[0] for s in said})
    }
    for tool_call_id, name, arguments, event, state in said:
        row = rows.get(tool_call_id)
        if row is None:
            row = rows[tool_call_id] = ToolCall(
                call=call, tool_call_id=tool_call_id, issued_turn=event.turn, history=[]
            )
        row.name = row.name or (storable(name, 200) if isinstance(name, str) else "")
        row.arguments = row.arguments or storable(arguments)
        row.history.append(
            {"turn": event.turn, "state": state, "message": None, "at": event.at.isoformat(), "event": event.type}
        )
        if state == "finished" and row.finished_turn is None:
            row.finished_turn, row.finished_at = event.turn, event.at
    for row in rows.values():
        row.save()
    return set(rows)


def _findings(call: Call, events: list[Event], policy: projectrules.Policy) -> list:
    """What the events themselves show: silence, holds that timed out, slots 'running'
    too long or never settled, results that never reached a request."""
    keyed, running = [], None
    for event in events:
        fields = event.fields
        if event.type == "response":
            for finding in timeline.silent_response(responsebody.read(fields.get("body"))):
                keyed.append(analysis.Keyed(finding, f"RS301:event{event.pk}"))
        elif event.type == "hold.released" and fields.get("cause") == "timeout":
            for finding in timeline.hold_timeout(fields["tool_call_ids"]):
                keyed.append(analysis.Keyed(finding, f"TL207:{finding.tool_call_id}"))
        if event.type in ("hold.released", "tool.finished", "call.ended"):
            # The slot may still say "running": measure it up to this moment. Events do not
            # move slots, so one read serves every event of the post.
            if running is None:
                running = slotchecks.running_since(slotchecks.pending_rows(call))
            keyed += slotchecks.pending_too_long(event.at, policy, running)
        if event.type == "call.ended":
            keyed += slotchecks.never_settled(call, call.turn_count, True, policy)
            keyed += slotchecks.finished_not_carried(call, call.turn_count, True, policy)
    return analysis.by_severity(keyed)
