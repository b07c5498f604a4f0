"""The picture of a call over time, as plain shapes for an SVG template.

Model requests and caller turns on one row, each tool call as a bar from
issued to settled (still open: to the end), holds as bands behind them, and
findings as marks at the turn that first showed them. Pure layout over
plain data; `picture()` gathers that data from the stored call.
"""

from dataclasses import dataclass, field
from datetime import datetime

from .models import Call, Event, Finding, Message, ToolCall, Turn
from .rules import SEVERITY_ORDER

WIDTH = 1000
LEFT = 8
RIGHT = 8
TOP_ROW = 30  # y of the requests row
LANE = 16  # height of one tool lane
FIRST_LANE = 52
SETTLED = {"result", "settled", "delivered", "vanished", "lost"}
HOLD_CSS = {
    "timeout": "hold hold-timeout",
    "inferred": "hold hold-inferred",
    "not held": "hold hold-broken",
}


@dataclass
class Shape:
    kind: str  # request, caller, tool, hold, finding, tick
    x: float  # for circles (caller, finding): the centre, and `w` the radius
    y: float = 0.0
    w: float = 0.0
    h: float = 0.0
    css: str = ""
    label: str = ""  # text for the <title> tooltip (escaped by the template)
    anchor: str = ""  # what the shape links to (#turn-N)


@dataclass
class Picture:
    width: int
    height: int
    shapes: list[Shape] = field(default_factory=list)
    seconds: float = 0.0


def layout(
    seconds: float,
    requests: list[tuple[int, float, bool]],
    tools: list[tuple[str, str, float, float | None, str]],
    holds: list[tuple[float, float | None, str]],
    findings: list[tuple[int, float, str, str]],
) -> Picture:
    """requests: (turn, offset, caller spoke); tools: (id, name, issued, settled or None,
    state); holds: (start, end or None, cause: result, timeout, or for holds inferred
    from placeholders "inferred" / "not held"); findings: (turn, offset, severity, code)."""
    span = max(seconds, 1.0)
    usable = WIDTH - LEFT - RIGHT

    def x(offset: float) -> float:
        return round(LEFT + usable * min(max(offset, 0.0), span) / span, 1)

    height = FIRST_LANE + LANE * max(1, len(tools)) + 18
    picture = Picture(WIDTH, height, seconds=seconds)
    shapes = picture.shapes
    for start, end, cause in holds:
        left = x(start)
        until = f"{end:.1f}s" if end is not None else "now"
        if cause == "not held":
            label = f"caller NOT held while a tool ran, {start:.1f}s to {until}: the caller spoke"
        elif cause == "inferred":
            label = f"caller held {start:.1f}s to {until} (inferred from a 'running' placeholder)"
        else:
            label = f"caller held {start:.1f}s to {until}" + (f" ({cause})" if cause and end is not None else "")
        shapes.append(
            Shape("hold", left, 0, max(2.0, x(end if end is not None else span) - left), height - 18,
                  HOLD_CSS.get(cause, "hold"), label)
        )
    for step in range(0, 6):
        offset = span * step / 5
        shapes.append(Shape("tick", x(offset), height - 4, label=f"{offset:.0f}s"))
    for turn, offset, caller in requests:
        shapes.append(Shape("request", x(offset) - 1, TOP_ROW - 6, 2, 12,
                            label=f"model request, turn {turn}, at {offset:.1f}s", anchor=f"#turn-{turn}"))
        if caller:
            shapes.append(Shape("caller", x(offset), TOP_ROW - 14, 3, label=f"caller spoke before turn {turn}",
                                anchor=f"#turn-{turn}"))
    for lane, (tool_call_id, name, issued, settled, state) in enumerate(tools):
        left = x(issued)
        right = x(settled if settled is not None else span)
        shapes.append(
            Shape("tool", left, FIRST_LANE + lane * LANE, max(3.0, right - left), LANE - 5,
                  f"bar-{state}",
                  f"{name} {tool_call_id}: {state} ({issued:.1f}s to "
                  + (f"{settled:.1f}s)" if settled is not None else "still open)"))
        )
    for turn, offset, severity, codes in findings:
        shapes.append(Shape("finding", x(offset), 6, 4, css=f"mark-{severity}",
                            label=f"turn {turn}: {codes}", anchor=f"#turn-{turn}"))
    return picture


def inferred_holds(call: Call, seconds_since) -> list[tuple[float, float | None, str]]:
    """For agents that send no hold.* events: each 'running' stretch of a slot is a
    hold, broken ("not held") where a request brought caller words meanwhile (TL202)."""
    broken = set(
        Finding.objects.filter(call=call, code="TL202").values_list("tool_call_id", flat=True)
    )
    holds = []
    for t in ToolCall.objects.filter(call=call):
        start = None
        for entry in t.history:
            if "event" in entry:
                continue
            if entry["state"] == "pending":
                start = start if start is not None else entry["at"]
            elif start is not None:
                holds.append((start, entry["at"], t.tool_call_id))
                start = None
        if start is not None:
            holds.append((start, None, t.tool_call_id))
    return [
        (seconds_since(begin), seconds_since(end), "not held" if tool_call_id in broken else "inferred")
        for begin, end, tool_call_id in holds
    ]


def picture(call: Call) -> Picture:
    """The call's picture from what is stored (queries grow with the call: pages only)."""
    start = call.started_at

    def seconds_since(moment: datetime | str | None) -> float | None:
        if moment is None:
            return None
        if isinstance(moment, str):
            moment = datetime.fromisoformat(moment)
        return max(0.0, (moment - start).total_seconds())

    turns = list(Turn.objects.filter(call=call).order_by("number").values_list("number", "sent_at", "changes", "previous_message_count"))
    appended = {message_id for *_n, changes, previous in turns for position, message_id, _old in changes if position >= previous}
    callers = {
        pk
        for pk, results in Message.objects.filter(pk__in=appended, role="user").values_list("pk", "result_ids")
        if not results
    }
    requests = [
        (number, seconds_since(sent_at), any(m in callers for p, m, _o in changes if p >= previous))
        for number, sent_at, changes, previous in turns
    ]
    tools = []
    for t in ToolCall.objects.filter(call=call).order_by("issued_turn", "pk"):
        issued = next((h["at"] for h in t.history if h["state"] == "issued"), t.history[0]["at"] if t.history else None)
        settled = next((h["at"] for h in t.history if h["state"] in SETTLED), None)
        if issued is not None:
            tools.append((t.tool_call_id, t.name or "?", seconds_since(issued), seconds_since(settled), t.state))
    holds, open_holds = [], {}
    for event in Event.objects.filter(call=call, type__in=["hold.started", "hold.released"]).order_by("at", "pk"):
        key = tuple(sorted(event.fields.get("tool_call_ids", [])))
        if event.type == "hold.started":
            open_holds[key] = seconds_since(event.at)
        elif key in open_holds:
            holds.append((open_holds.pop(key), seconds_since(event.at), event.fields.get("cause", "")))
    holds += [(begin, None, "") for begin in open_holds.values()]
    if not holds:
        holds = inferred_holds(call, seconds_since)
    by_turn: dict[int, list[Finding]] = {}
    for finding in Finding.objects.filter(call=call).order_by("turn", "pk"):
        by_turn.setdefault(finding.turn, []).append(finding)
    offsets = {number: offset for number, offset, _c in requests}
    findings = [
        (
            turn,
            offsets.get(turn, 0.0),
            min((f.severity for f in items), key=SEVERITY_ORDER.get),
            " ".join(sorted({f.code for f in items})),
        )
        for turn, items in by_turn.items()
    ]
    seconds = max([call.duration_seconds, *(o for _n, o, _c in requests)], default=0.0)
    return layout(seconds, requests, tools, holds, findings)
