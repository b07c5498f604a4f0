"""What a turn shows: plain view data built from stored rows, for templates.

A turn shows only what its request changed: messages appended, and slots
changed in place (a placeholder overwritten by its result). Tool calls are
paired with their results by id, as of that turn, from the tool-call
histories that ingest recorded, so no turn needs the whole history rebuilt.
"""

from dataclasses import dataclass, field

from . import history, projectrules
from .models import Call, Event, Finding, Message, ToolCall, Turn
from .normalize import TEXT, TOOL_RESULT, normalize
from .requestbody import ITEMS_KEY, canonical_json, loads, result_text
from .slots import classify_result
from .storable import displayable


@dataclass
class ToolCallItem:
    id: str
    name: str
    arguments: str
    state: str  # as of the turn shown
    result_text: str = ""
    result_message_id: int | None = None
    result_position: int | None = None  # set when the result is shown beside the call
    result_findings: list = field(default_factory=list)  # of that folded result message
    row_id: int | None = None  # the ToolCall row, for permalinks
    steps: list = field(default_factory=list)  # the slot's history: [{turn, state, event?}]


@dataclass
class MessageView:
    position: int
    message_id: int
    role: str
    texts: list[str] = field(default_factory=list)  # content strings, exactly as sent
    other_parts: list[str] = field(default_factory=list)  # non-text parts, compact JSON
    tool_calls: list[ToolCallItem] = field(default_factory=list)
    answers: list[dict] = field(default_factory=list)  # [{id, name, issued_turn}]
    placeholder: str | None = None  # "pending" / "terminal" for tool results
    raw_item: str = ""  # the whole item, for formats shown raw
    folded: bool = False  # a result shown beside its call in the same turn
    findings: list = field(default_factory=list)  # first reported at the turn shown

    @property
    def anchor(self) -> str:
        return f"m{self.position}"


@dataclass
class TurnView:
    turn: Turn
    offset_seconds: float
    appended: list[MessageView]
    changed: list[tuple[MessageView | None, MessageView]]
    removed: int
    events: list[Event]
    findings: list[Finding] = field(default_factory=list)
    # Findings about messages this turn does not show (e.g. a call left unanswered earlier).
    elsewhere: list[Finding] = field(default_factory=list)


def turn_views(call: Call, turns: list[Turn], events: list[Event] | None = None) -> list[TurnView]:
    """View data for `turns` of `call`, with a fixed number of queries."""
    ids = {i for t in turns for _pos, new, old in t.changes for i in (new, old) if i is not None}
    messages = Message.objects.in_bulk(ids)
    # Only the tool calls these turns touch, so a live render costs the same
    # at turn 300 as at turn 3.
    tool_ids = {i for m in messages.values() for i in (*m.call_ids, *m.result_ids)}
    tool_calls = {
        t.tool_call_id: t for t in ToolCall.objects.filter(call=call, tool_call_id__in=tool_ids)
    }
    results = result_message_ids(tool_calls.values())
    if results - messages.keys():
        messages.update(Message.objects.in_bulk(results - messages.keys()))
    if events is None:
        numbers = [t.number for t in turns]
        events = list(Event.objects.filter(call=call, turn__in=numbers).order_by("pk"))
    by_turn: dict[int, list[Event]] = {}
    for event in events:
        by_turn.setdefault(event.turn, []).append(event)
    findings_by_turn: dict[int, list[Finding]] = {}
    for finding in Finding.objects.filter(call=call, turn__in=[t.number for t in turns]):
        findings_by_turn.setdefault(finding.turn, []).append(finding)

    placeholders = projectrules.policy(call.project.rule_settings).placeholders
    views = []
    for turn in turns:
        appended, changed = [], []
        for position, message_id, before in turn.changes:
            view = message_view(
                turn, position, messages[message_id], tool_calls, messages, placeholders
            )
            if position >= turn.previous_message_count:
                appended.append(view)
            else:
                old = messages.get(before)
                old_view = (
                    message_view(turn, position, old, {}, messages, placeholders) if old else None
                )
                changed.append((old_view, view))
        findings = sort_findings(findings_by_turn.get(turn.number, []))
        elsewhere = attach_findings([*appended, *(after for _before, after in changed)], findings)
        _fold_results(appended)
        views.append(
            TurnView(
                turn=turn,
                offset_seconds=(turn.sent_at - call.started_at).total_seconds(),
                appended=appended,
                changed=changed,
                removed=max(0, turn.previous_message_count - turn.message_count),
                events=by_turn.get(turn.number, []),
                findings=findings,
                elsewhere=elsewhere,
            )
        )
    return views


def sort_findings(findings: list[Finding]) -> list[Finding]:
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(findings, key=lambda f: (order.get(f.severity, 3), f.message_index or 0, f.pk))


def attach_findings(views: list[MessageView], findings: list[Finding]) -> list[Finding]:
    """Show each finding at the message it concerns; the ones whose message is not shown."""
    by_position = {view.position: view for view in views}
    elsewhere = []
    for finding in findings:
        view = by_position.get(finding.message_index)
        if view is not None:
            view.findings.append(finding)
        else:
            elsewhere.append(finding)
    return elsewhere


def _fold_results(appended: list[MessageView]) -> None:
    """Show a result message beside the call it answers when both arrive in one turn."""
    by_id = {view.message_id: view for view in appended if view.answers and not view.raw_item}
    for view in appended:
        for call in view.tool_calls:
            result = by_id.get(call.result_message_id)
            if result is not None and result is not view and len(result.answers) == 1:
                call.result_position = result.position
                call.result_findings = result.findings
                result.folded = True


def message_view(
    turn: Turn,
    position: int,
    message: Message,
    tool_calls: dict[str, ToolCall],
    messages: dict[int, Message],
    placeholders: tuple = (),
) -> MessageView:
    """`placeholders`: the project's own placeholder patterns."""
    item = loads(message.body)
    view = MessageView(position=position, message_id=message.pk, role=message.role or "?")
    if turn.format == "openai.chat" and isinstance(item, dict):
        _chat_content(item.get("content"), view)
        for call in item.get("tool_calls") or []:
            if not isinstance(call, dict):
                view.other_parts.append(canonical_json(call))
                continue
            function = call.get("function") if isinstance(call.get("function"), dict) else {}
            arguments = function.get("arguments", "")
            view.tool_calls.append(
                _paired(
                    turn,
                    str(call.get("id", "")),
                    str(function.get("name", "")),
                    arguments if isinstance(arguments, str) else canonical_json(arguments),
                    tool_calls,
                    messages,
                )
            )
    else:
        # Other formats: their words and results as the normalised model reads them
        # (every string exact), beside the exact item; calls are paired by id.
        view.raw_item = message.body
        if isinstance(item, dict):
            normalised = normalize(turn.format, {ITEMS_KEY[turn.format]: [item]}, offset=position)
            for part in (p for m in normalised.messages for p in m.parts):
                if part.kind in (TEXT, TOOL_RESULT):
                    view.texts.append(part.text)
        tool_ids = message.call_ids
        for call_id in tool_ids:
            known = tool_calls.get(call_id)
            view.tool_calls.append(
                _paired(
                    turn,
                    call_id,
                    known.name if known else "",
                    known.arguments if known else "",
                    tool_calls,
                    messages,
                )
            )
    for call_id in message.result_ids:
        if not call_id:
            continue
        known = tool_calls.get(call_id)
        view.answers.append(
            {
                "id": call_id,
                "name": known.name if known else "",
                "issued_turn": known.issued_turn if known and known.history else None,
            }
        )
        view.placeholder = classify_result(
            result_text(message.body, call_id, message.result_ids), placeholders
        )
    return _displayable(view)


def _displayable(view: MessageView) -> MessageView:
    """Lone surrogates (valid JSON) would make the page unencodable: show them escaped."""
    view.texts = [displayable(t) for t in view.texts]
    view.other_parts = [displayable(t) for t in view.other_parts]
    view.raw_item = displayable(view.raw_item)
    for item in view.tool_calls:
        item.arguments = displayable(item.arguments)
        item.result_text = displayable(item.result_text)
    return view


def _chat_content(content, view: MessageView) -> None:
    if isinstance(content, str):
        view.texts.append(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(
                part.get("text"), str
            ):
                view.texts.append(part["text"])
            else:
                view.other_parts.append(canonical_json(part))
    elif content is not None:
        view.other_parts.append(canonical_json(content))


def _paired(
    turn: Turn,
    call_id: str,
    name: str,
    arguments: str,
    tool_calls: dict[str, ToolCall],
    messages: dict[int, Message],
) -> ToolCallItem:
    item = ToolCallItem(id=call_id, name=name, arguments=arguments, state="issued")
    known = tool_calls.get(call_id)
    if known is None:
        return item
    state, message_id = state_as_of(known, turn.number)
    item.state = state
    item.row_id = known.pk
    item.steps = known.history
    if message_id and message_id in messages:
        result = messages[message_id]
        item.result_text = result_text(result.body, call_id, result.result_ids)
        item.result_message_id = message_id
    return item


def state_as_of(tool_call: ToolCall, number: int) -> tuple[str, int | None]:
    """The slot's state and result message as of turn `number`."""
    state, message_id = "issued", None
    for entry in tool_call.history:
        if entry["turn"] > number:
            break
        if "event" in entry:  # what an event said of the tool, not of its slot
            continue
        if entry["state"] in ("vanished", "reissued", "issued"):
            state = "issued" if entry["state"] != "vanished" else "vanished"
            if entry["state"] == "vanished":
                message_id = None
            continue
        state, message_id = entry["state"], entry.get("message")
    return state, message_id


def result_message_ids(tool_calls) -> set[int]:
    """The messages that held a result of these tool calls at some turn."""
    return {h["message"] for t in tool_calls for h in t.history if h.get("message")}


def message_list(turn: Turn, call: Call) -> list[MessageView]:
    """Every message of a turn's request, in order, paired with tool results."""
    rows = history.messages(turn)
    tool_calls = {t.tool_call_id: t for t in ToolCall.objects.filter(call=call)}
    by_id = {m.pk: m for m in rows}
    missing = result_message_ids(tool_calls.values()) - by_id.keys()
    by_id.update(Message.objects.in_bulk(missing))
    placeholders = projectrules.policy(call.project.rule_settings).placeholders
    views = [
        message_view(turn, i, m, tool_calls, by_id, placeholders) for i, m in enumerate(rows)
    ]
    # Within one request, a call and its result link to each other by position.
    calls_at = {c.id: v.position for v in views for c in v.tool_calls}
    results_at = {a["id"]: v.position for v in views for a in v.answers}
    for view in views:
        for answer in view.answers:
            answer["call_position"] = calls_at.get(answer["id"])
        for item in view.tool_calls:
            if item.result_position is None:
                item.result_position = results_at.get(item.id)
    return views


def tool_call_rows(call: Call, tool_call_ids: set[str] | None = None) -> list[dict]:
    """Tool calls of the call (all, or those of `tool_call_ids`) with their slot's history."""
    rows = []
    tool_calls = ToolCall.objects.filter(call=call).order_by("issued_turn", "pk")
    if tool_call_ids is not None:
        tool_calls = tool_calls.filter(tool_call_id__in=tool_call_ids)
    messages = Message.objects.in_bulk(result_message_ids(tool_calls))
    for tool_call in tool_calls:
        tool_call.call = call  # for links, without a query per row
        steps = []
        for entry in tool_call.history:
            text = ""
            message = messages.get(entry.get("message"))
            if message is not None:
                text = result_text(message.body, tool_call.tool_call_id, message.result_ids)
            steps.append({**entry, "text": text})
        rows.append({"tool_call": tool_call, "steps": steps})
    return rows
