"""Storing one model request as a turn of its call, in one transaction.

The call row is locked for the duration, so requests of one call are numbered
in order of arrival and each sees the previous one's tip. Everything done here
is proportional to what the request adds or changes, plus one pass over its
messages that parsing already made: no query reads the call's history.
"""

import hashlib
import logging
import threading
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial

from django.conf import settings
from django.db import IntegrityError, connection, transaction

from . import analysis, live, projectrules, rawstore, responsebody, signals, slotchecks, slots
from .rules import results as rule_results
from .rules import structure, timeline
from .models import Call, CallTip, Event, Finding, Message, Project, ToolCall, Turn
from .requestbody import ParsedMessage, ParsedRequest, loads, result_text


# Re-entrant: a dry run (calls.dryrun) holds it around the ingests it rolls back.
_sqlite_writers = threading.RLock()
logger = logging.getLogger(__name__)


@contextmanager
def write_transaction():
    """A transaction that writes; yields a list of callbacks to run once it committed.

    On SQLite, writers of this process queue on a lock first: SQLite's own
    busy handler sleeps in growing steps, which turns a burst of concurrent
    agents into multi-second stalls. PostgreSQL only locks the call's row.
    The callbacks (live broadcasts) run after the commit and outside that
    lock, and a failing one is only logged: what was stored stays stored and
    the agent still gets its answer.
    """
    after_commit: list = []
    with _sqlite_writers if connection.vendor == "sqlite" else nullcontext():
        with transaction.atomic():
            yield after_commit
    for callback in after_commit:
        # Runs now (our transaction committed), or when an enclosing one does.
        transaction.on_commit(callback, robust=True)


class IdempotencyConflict(Exception):
    """An Idempotency-Key reused with a different body."""


@dataclass(frozen=True)
class Captured:
    call: Call
    turn: Turn
    replayed: bool  # an idempotent retry: nothing new was stored
    findings: list  # the Finding rows first reported at this turn


def record_request(
    project: Project,
    external_id: str,
    raw: bytes,
    parsed: ParsedRequest,
    *,
    content_type: str,
    received_at: datetime,
    sent_at: datetime,
    agent: str,
    idempotency_key: str | None,
) -> Captured:
    body_sha256 = hashlib.sha256(raw).hexdigest()
    with write_transaction() as after_commit:
        # A call starts when its first request was sent, as far as we know.
        call = lock_call(project, external_id, min(sent_at, received_at))
        call.project = project
        if idempotency_key is not None:
            earlier = Turn.objects.filter(call=call, idempotency_key=idempotency_key).first()
            if earlier is not None:
                if earlier.body_sha256 != body_sha256:
                    raise IdempotencyConflict
                findings = list(Finding.objects.filter(call=call, turn=earlier.number))
                return Captured(call, earlier, replayed=True, findings=findings)

        tip = call.tip
        number = call.turn_count + 1
        policy = projectrules.policy(project.rule_settings)
        refs = _message_refs(call, tip.messages, parsed, number)
        changes = _changes(tip.messages, refs)
        checkpoint = (number - 1) % settings.CALLSCOPE_RAW_CHECKPOINT_EVERY == 0 or not tip.raw
        whole = rawstore.compress_whole(raw)
        if checkpoint:
            codec, blob = rawstore.WHOLE, whole
        else:
            previous = rawstore.decompress(rawstore.WHOLE, tip.raw)
            codec, blob = rawstore.DELTA, rawstore.compress_delta(raw, previous)

        turn = Turn.objects.create(
            call=call,
            number=number,
            received_at=received_at,
            sent_at=sent_at,
            format=parsed.format,
            model=parsed.model,
            idempotency_key=idempotency_key,
            body_sha256=body_sha256,
            size=len(raw),
            content_type=content_type,
            raw_codec=codec,
            raw_blob=blob,
            message_count=len(refs),
            previous_message_count=len(tip.messages),
            changes=changes,
            snapshot=[ref[0] for ref in refs] if checkpoint else None,
        )
        slot_update = _update_tool_calls(
            call, tip.messages, refs, changes, parsed, number, sent_at, policy
        )
        changed_tool_calls = slot_update.changed

        findings = record_findings(
            call,
            number,
            _analyse(call, number, parsed, changes, len(tip.messages), slot_update, policy, sent_at),
        )

        tip.messages = refs
        tip.raw = whole
        tip.save(update_fields=["messages", "raw"])

        call.turn_count = number
        call.last_activity_at = max(call.last_activity_at, received_at)
        call.ended_at = None  # a request after call.ended means the call goes on
        if agent:
            call.agent = agent
        if parsed.model:
            call.model = parsed.model
        if changed_tool_calls:
            call.tool_call_count = ToolCall.objects.filter(call=call).count()
            call.pending_placeholders = ToolCall.objects.filter(
                call=call, state=ToolCall.State.PENDING
            ).count()
        call.revision += 1
        call.save()
        after_commit.append(partial(live.broadcast_turn, call, turn, changed_tool_calls))
    return Captured(call, turn, replayed=False, findings=findings)


def _analyse(
    call: Call,
    number: int,
    parsed: ParsedRequest,
    changes: list,
    previous_count: int,
    slot_update: "SlotUpdate",
    policy: projectrules.Policy,
    sent_at: datetime,
) -> list:
    """The findings this request may show: body rules on what changed, and timeline rules."""
    try:
        keyed = analysis.analyse(parsed, [p for p, _new, _old in changes], policy)
        keyed += _timeline(call, number, parsed, changes, previous_count, slot_update, policy, sent_at)
        return analysis.by_severity(keyed)
    except Exception:
        # A rule's bug must never cost the agent its stored request.
        logger.exception("analysis failed for turn %s of call %s", number, call.pk)
        return []


def _timeline(call, number, parsed, changes, previous_count, slot_update, policy, sent_at) -> list:
    keyed = []
    digests = parsed.digests
    # TC003 across turns: the window only sees this request's new messages.
    for tool_call_id, position in slot_update.duplicated.items():
        finding = structure.duplicate_id(tool_call_id, position)
        keyed.append(analysis.Keyed(finding, f"TC003:{tool_call_id}:{digests[position]}"))
    # TL202: new caller words while a slot holds a still-running placeholder.
    users = [
        position
        for position, _new, _old in changes
        if parsed.message(position).role == "user"
        and not parsed.message(position).results
        and not slots.delivered_outside_slot("user", _content_string(parsed.message(position).item))
    ]
    # Slots still "running" after this request: TL202 and TL201 both need them.
    pending = slotchecks.pending_rows(call)
    if users and pending:
        placed = {ref[0]: position for position, ref in enumerate(slot_update.refs)}
        for row in pending:
            # Only caller words after the placeholder: before it, the tool had not started.
            later = [p for p in users if p > placed.get(row.result_message_id, len(digests))]
            for finding in timeline.answered_while_pending(later, [row.tool_call_id]):
                # Once per slot: a slot left "running" would otherwise flag every later turn.
                keyed.append(analysis.Keyed(finding, f"TL202:{row.tool_call_id}"))
    # TL206: the request rewrote what the previous one sent.
    in_place = [(p, new, old) for p, new, old in changes if old is not None]
    if in_place or len(digests) < previous_count:
        rows = Message.objects.in_bulk({i for _p, new, old in in_place for i in (new, old)})
        facts = [
            timeline.Change(
                position,
                tuple(rows[old].result_ids),
                any(
                    slots.classify_result(
                        result_text(rows[old].body, i, rows[old].result_ids), policy.placeholders
                    )
                    is not None
                    for i in rows[old].result_ids
                ),
                tuple(rows[new].result_ids),
                timeline.without_transport_keys(loads(rows[old].body))
                == timeline.without_transport_keys(loads(rows[new].body)),
            )
            for position, new, old in in_place
        ]
        for finding in timeline.history_rewritten(facts, previous_count, len(digests)):
            keyed.append(analysis.Keyed(finding, f"TL206:turn{number}"))
    # TL208: a call message vanished while its result is still sent.
    if slot_update.vanished:
        present = {r for position in range(len(digests)) for r in parsed.message(position).results}
        for finding in timeline.call_deleted_result_kept(sorted(slot_update.vanished), present):
            keyed.append(analysis.Keyed(finding, f"TL208:{finding.tool_call_id}"))
    # TL201: a slot still "running" several requests on.
    keyed += slotchecks.never_settled(call, number, False, policy, pending)
    # TL207: a slot "running" (until now, or still) for longer than the project allows.
    keyed += slotchecks.pending_too_long(
        sent_at, policy, slotchecks.running_since(pending) + slot_update.left_pending
    )
    # TL203: a result the model had, or a tool announced, that no message carries.
    for tool_call_id, since in sorted(slot_update.lost.items()):
        for finding in timeline.result_lost(tool_call_id, since):
            keyed.append(analysis.Keyed(finding, f"TL203:{tool_call_id}"))
    keyed += slotchecks.finished_not_carried(call, number, False, policy)
    # RS302: the previous response's words did not make it into this request.
    keyed += _spoken_text_dropped(call, number, parsed, changes)
    # TL204 / TL205: a tool called again with the same arguments.
    issued_now = (
        ToolCall.objects.filter(call=call, issued_turn=number).exclude(name="")
        if slot_update.changed
        else []
    )
    for row in issued_now:
        for finding in timeline.repeated_call(
            row.tool_call_id,
            row.name,
            row.arguments,
            _earlier_same_calls(call, row, number),
            policy.side_effect,
        ):
            keyed.append(analysis.Keyed(finding, f"{finding.code}:{row.tool_call_id}"))
    # TL210: an error this call already had is still in the history.
    earlier_errors = list(
        Finding.objects.filter(call=call, severity="error", code__startswith="TC", turn__lt=number)
    )
    if earlier_errors:
        repeated = [f for f in earlier_errors if _still_broken(parsed, f)]
        for f, finding in zip(
            repeated,
            timeline.poisoned_history(
                [(f.code, f.tool_call_id, f.message_index, f.turn) for f in repeated]
            ),
            strict=True,
        ):
            keyed.append(analysis.Keyed(finding, f"TL210:{f.key}"))
    return keyed


def _still_broken(parsed: ParsedRequest, finding: Finding) -> bool:
    """Whether the message of an earlier structural error is sent again and still breaks
    the same rule (re-adding the missing call message fixes a TC001, say)."""
    digest = finding.key.rsplit(":", 1)[-1]
    if digest not in parsed.digests:
        return False
    position = parsed.digests.index(digest)
    request, _start = analysis.window_request(parsed, position)
    return any(
        f.code == finding.code and f.tool_call_id == finding.tool_call_id
        for f in structure.check(request)
        if f.message_index == position
    )


def _spoken_text_dropped(call: Call, number: int, parsed: ParsedRequest, changes: list) -> list:
    """RS302 against the response events reported for the previous request."""
    if number < 2:
        return []
    responses = Event.objects.filter(call=call, type="response", turn=number - 1)
    if not responses:
        return []
    new = [parsed.message(position) for position, _new, _old in changes]
    carried = {c.id for m in new for c in m.calls}
    texts = [m.text for m in new if m.role in ("assistant", "model")]
    keyed = []
    for event in responses:
        response = responsebody.read(event.fields.get("body"))
        for f in timeline.spoken_text_dropped(response, number - 1, carried, texts):
            keyed.append(analysis.Keyed(f, f"RS302:event{event.pk}"))
    return keyed


def _earlier_same_calls(call: Call, row: ToolCall, number: int) -> list:
    arguments = timeline.canonical_arguments(row.arguments)
    if arguments is None:
        return []
    # Earlier turns, and calls issued before this one in the same request (a
    # parallel double booking).
    earlier = [
        e
        for e in ToolCall.objects.filter(call=call, name=row.name, issued_turn__lte=number)
        if (e.issued_turn, e.pk) < (row.issued_turn, row.pk)
        and timeline.canonical_arguments(e.arguments) == arguments
    ]
    results = Message.objects.in_bulk([e.result_message_id for e in earlier if e.result_message_id])
    return [
        timeline.EarlierCall(
            e.tool_call_id,
            e.issued_turn,
            e.state,
            e.state == ToolCall.State.RESULT
            and e.result_message_id in results
            and rule_results.is_empty(
                result_text(
                    results[e.result_message_id].body,
                    e.tool_call_id,
                    results[e.result_message_id].result_ids,
                )
            ),
        )
        for e in earlier
    ]


def record_findings(call: Call, number: int, keyed: list) -> list:
    """Store the findings this request shows for the first time in its call."""
    if not keyed:
        return []
    known = set(
        Finding.objects.filter(call=call, key__in=[k.key for k in keyed]).values_list("key", flat=True)
    )
    new = []
    for item in keyed:
        f = projectrules.applied(call.project.rule_settings, item.finding)
        if f is None or item.key in known:
            continue
        known.add(item.key)
        new.append(
            Finding(
                call=call,
                turn=number,
                code=f.code,
                severity=f.severity,
                message_index=f.message_index,
                tool_call_id=f.tool_call_id,
                text=f.message,
                detail=dict(f.detail),
                key=item.key,
            )
        )
    Finding.objects.bulk_create(new)
    for finding in new:
        field = f"findings_{finding.severity}"
        setattr(call, field, getattr(call, field) + 1)
    if new:
        signals.findings_recorded.send(sender=Call, call=call, findings=new)
    return new


def lock_call(project: Project, external_id: str, now: datetime) -> Call:
    """The call row, created if new, locked until the transaction ends."""
    call = Call.objects.select_for_update().filter(project=project, external_id=external_id).first()
    if call is not None:
        return call
    try:
        with transaction.atomic():  # a savepoint: a racing creator must not abort our transaction
            call = Call.objects.create(
                project=project, external_id=external_id, started_at=now, last_activity_at=now
            )
            CallTip.objects.create(call=call)
    except IntegrityError:
        pass
    return Call.objects.select_for_update().get(project=project, external_id=external_id)


def _message_refs(call: Call, previous: list, parsed: ParsedRequest, number: int) -> list[list]:
    """[[message_id, digest], ...] for this request, storing messages not seen before."""
    known = {digest: message_id for message_id, digest in previous}
    unknown = {}
    for position, digest in enumerate(parsed.digests):
        if digest not in known and digest not in unknown:
            unknown[digest] = parsed.message(position)
    if unknown:
        # Messages that left the tip may come back (a re-added pair): look those up.
        for message_id, digest in Message.objects.filter(
            call=call, digest__in=list(unknown)
        ).values_list("id", "digest"):
            known[digest] = message_id
            del unknown[digest]
    if unknown:
        created = Message.objects.bulk_create(
            Message(
                call=call,
                digest=m.digest,
                role=m.role,
                body=m.canonical,
                call_ids=[c.id for c in m.calls],
                result_ids=list(m.results),
                first_turn=number,
            )
            for m in unknown.values()
        )
        for message in created:
            known[message.digest] = message.id
    return [[known[digest], digest] for digest in parsed.digests]


def _changes(previous: list, refs: list) -> list[list]:
    """The positions whose message differs from the previous turn's."""
    changes = []
    for position, (message_id, _digest) in enumerate(refs):
        before = previous[position][0] if position < len(previous) else None
        if before != message_id:
            changes.append([position, message_id, before])
    return changes


@dataclass
class SlotUpdate:
    changed: set = field(default_factory=set)  # tool-call ids whose slot changed
    vanished: set = field(default_factory=set)  # ids whose call message left the history now
    duplicated: dict = field(default_factory=dict)  # id -> position of a second message issuing it
    refs: list = field(default_factory=list)  # this request's [message_id, digest] list
    # (id, since) of slots whose 'running' stretch this request ended
    left_pending: list = field(default_factory=list)
    lost: dict = field(default_factory=dict)  # id -> since when the lost result was carried


def _content_string(item: dict) -> str:
    content = item.get("content")
    return content if isinstance(content, str) else ""


def _update_tool_calls(
    call: Call,
    previous: list,
    refs: list,
    changes: list,
    parsed: ParsedRequest,
    number: int,
    at: datetime,
    policy: projectrules.Policy,
) -> "SlotUpdate":
    """Record how each tool slot touched by this request changed."""
    current_ids = {ref[0] for ref in refs}
    # A message that only moved (the history was trimmed before it) issues nothing new.
    was_sent = {ref[0] for ref in previous}
    moved_only = {position for position, message_id, _b in changes if message_id in was_sent}
    touched = [parsed.message(p) for p, _id, _before in changes if p not in moved_only]
    issued = {c.id: c for m in touched for c in m.calls if c.id}
    issuing_position, issuing_order = {}, {}
    for position, _id, _b in changes:
        if position in moved_only:
            continue
        for ref in parsed.message(position).calls:
            issuing_position[ref.id] = position
            issuing_order.setdefault(ref.id, len(issuing_order))
    answered = {}  # tool_call_id -> (message_id, state)
    delivered = {}  # tool_call_id -> message_id of a developer/user message carrying its result
    for position, message_id, _before in changes:
        if position in moved_only:
            continue
        message = parsed.message(position)
        for call_id in message.results:
            if call_id:  # "" answers no call (TC001 says so)
                answered[call_id] = (message_id, _result_state(message, call_id, policy))
        outside = slots.delivered_outside_slot(message.role, _content_string(message.item))
        if outside:
            delivered[outside] = message_id
    removed_ids = {ref[0] for ref in previous} - current_ids
    vanished_calls, removed_calls, uncarried = set(), set(), set()
    if removed_ids:
        for call_ids, result_ids, role, body in Message.objects.filter(
            id__in=removed_ids
        ).values_list("call_ids", "result_ids", "role", "body"):
            removed_calls.update(call_ids)
            uncarried.update(result_ids)
            outside = slots.delivered_outside_slot(role, _content_string(loads(body)))
            if outside:
                uncarried.add(outside)
        # Both looks at the whole request happen only when a call message or a result left
        # it (an interruption, a trimmed history), never on the common settle-in-place.
        if removed_calls:
            still_issued = {c.id for m in parsed.messages for c in m.calls}
            vanished_calls = removed_calls - still_issued
        # Results that left with a removed message and are sent nowhere else now.
        uncarried -= set(answered) | set(delivered)
        if uncarried:
            uncarried -= _carried_anywhere(parsed, uncarried)
    update = SlotUpdate(refs=refs)
    if not (issued or answered or vanished_calls or delivered or uncarried):
        return update

    stamp = at.isoformat()
    ids = set(issued) | set(answered) | vanished_calls | set(delivered) | uncarried
    rows = {t.tool_call_id: t for t in ToolCall.objects.filter(call=call, tool_call_id__in=ids)}
    # In request order, so rows of parallel calls are created (and numbered) as issued.
    for call_id in sorted(ids, key=lambda i: (issuing_order.get(i, len(issuing_order)), i)):
        row = rows.get(call_id)
        if row is None:
            if call_id not in issued and call_id not in answered and call_id not in delivered:
                continue
            ref = issued.get(call_id)
            row = ToolCall(
                call=call,
                tool_call_id=call_id,
                name=ref.name if ref else "",
                arguments=ref.arguments if ref else "",
                issued_turn=number,
                history=[],
            )
        before = row.state
        call_gone = _call_gone(row)
        if call_id in issued:
            ref = issued[call_id]
            if call_gone:
                row.state = ToolCall.State.ISSUED
                row.history.append({"turn": number, "state": "reissued", "message": None, "at": stamp})
            elif _issued_by_a_request(row):
                # Unless its message was edited or moved; deprecated `function_call`s are
                # named by function, so a second call of one is no reused id.
                if call_id not in removed_calls and not call_id.startswith("function:"):
                    # An id already issued by another message that is still in the history.
                    update.duplicated[call_id] = issuing_position[call_id]
            else:
                # First seen in a request (perhaps announced by a response event before).
                row.issued_turn = number
                row.name = row.name or ref.name
                row.arguments = row.arguments or ref.arguments
                row.history.append({"turn": number, "state": "issued", "message": None, "at": stamp})
        since = slotchecks.pending_since(row)[1] if before == ToolCall.State.PENDING else None
        if call_id in answered:
            message_id, state = answered[call_id]
            row.result_message_id = message_id
            row.state = state
            row.history.append({"turn": number, "state": state, "message": message_id, "at": stamp})
        if call_id in delivered and row.state != ToolCall.State.RESULT:
            row.state = ToolCall.State.DELIVERED
            row.history.append(
                {"turn": number, "state": "delivered", "message": delivered[call_id], "at": stamp}
            )
        if call_id in vanished_calls and not call_gone:
            # Even if a result arrived with this request: its call is gone.
            update.vanished.add(call_id)
            row.state = ToolCall.State.VANISHED
            row.history.append({"turn": number, "state": "vanished", "message": None, "at": stamp})
        if call_id in uncarried and before in (ToolCall.State.RESULT, ToolCall.State.DELIVERED):
            carried_since = max(
                (h["turn"] for h in row.history if h["state"] == before and "event" not in h),
                default=number,
            )
            update.lost[call_id] = f"carried since turn {carried_since}"
            row.state = ToolCall.State.LOST
            row.history.append({"turn": number, "state": "lost", "message": None, "at": stamp})
        if before == ToolCall.State.PENDING and row.state != before and since is not None:
            update.left_pending.append((call_id, since))
        row.save()
        update.changed.add(call_id)
    return update


def _call_gone(row: ToolCall) -> bool:
    """Whether the message issuing this call left the history (and has not come back)."""
    for entry in reversed(row.history):
        if "event" in entry:
            continue
        if entry["state"] == "vanished":
            return True
        if entry["state"] in ("issued", "reissued"):
            return False
    return False


def _issued_by_a_request(row: ToolCall) -> bool:
    return any(h["state"] in ("issued", "reissued") and "event" not in h for h in row.history)


def _carried_anywhere(parsed: ParsedRequest, ids: set) -> set:
    """Which of `ids` some message of this request answers or delivers (moved, not lost)."""
    carried = set()
    for message in parsed.messages:
        carried.update(i for i in message.results if i in ids)
        outside = slots.delivered_outside_slot(message.role, _content_string(message.item))
        if outside in ids:
            carried.add(outside)
    return carried


def _result_state(message: ParsedMessage, call_id: str, policy: projectrules.Policy) -> str:
    text = result_text(message.canonical, call_id, message.results)
    kind = slots.classify_result(text, policy.placeholders)
    if kind == slots.PENDING:
        return ToolCall.State.PENDING
    if kind == slots.TERMINAL:
        return ToolCall.State.SETTLED
    return ToolCall.State.RESULT
