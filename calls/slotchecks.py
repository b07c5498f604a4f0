"""Timeline rules that read a call's tool slots: shared by request ingest and events.

Each reads only the call's tool-call rows in a given state (a handful, however
long the call), never its message history.
"""

from datetime import datetime

from . import analysis
from .models import Call, Finding, ToolCall
from .projectrules import Policy
from .rules import timeline

# Slot states in which the model has (or had, in its slot) the tool's answer.
CARRIED = (ToolCall.State.RESULT, ToolCall.State.SETTLED, ToolCall.State.DELIVERED)


def pending_since(row: ToolCall) -> tuple[int, datetime | None]:
    """(turn, time) at which the slot's current 'running' stretch began."""
    turn, at = None, None
    for entry in row.history:
        if entry["state"] == "pending":
            if turn is None:
                turn, at = entry["turn"], entry.get("at")
        elif entry.get("event") is None:  # a request moved the slot on
            turn, at = None, None
    if turn is None:
        return 0, None
    return turn, datetime.fromisoformat(at) if at else None


def never_settled(
    call: Call, number: int, ended: bool, policy: Policy, pending: list | None = None
) -> list[analysis.Keyed]:
    """TL201 for slots still pending (`pending`: those rows, if already loaded), unless
    their result reached the model in another role."""
    rows = pending if pending is not None else pending_rows(call)
    if not rows:
        return []
    delivered = set(
        Finding.objects.filter(
            call=call, code="TR102", tool_call_id__in=[r.tool_call_id for r in rows]
        ).values_list("tool_call_id", flat=True)
    )
    stuck = [
        (row.tool_call_id, pending_since(row)[0] or number)
        for row in rows
        if row.tool_call_id not in delivered  # TR102 already says where the result went
    ]
    return [
        analysis.Keyed(f, f"TL201:{f.tool_call_id}")
        for f in timeline.never_settled(stuck, number, ended, policy.never_settled_after)
    ]


def running_since(rows: list[ToolCall]) -> list[tuple[str, datetime]]:
    """(tool_call_id, start of its 'running' stretch) of the rows that are in one."""
    stretches = []
    for row in rows:
        _turn, since = pending_since(row)
        if since is not None:
            stretches.append((row.tool_call_id, since))
    return stretches


def pending_too_long(
    at: datetime, policy: Policy, stretches: list[tuple[str, datetime]]
) -> list[analysis.Keyed]:
    """TL207 for 'running' stretches (ongoing, or ended at `at`) longer than the threshold."""
    keyed = []
    for tool_call_id, since in stretches:
        seconds = (at - since).total_seconds()
        for f in timeline.pending_too_long(tool_call_id, seconds, policy.pending_seconds):
            keyed.append(analysis.Keyed(f, f"TL207:{tool_call_id}"))
    return keyed


def finished_not_carried(
    call: Call, number: int, ended: bool, policy: Policy
) -> list[analysis.Keyed]:
    """TL203 for results a tool.finished event announced that no request has carried,
    `never_settled_after` requests on (or when the call ended)."""
    rows = ToolCall.objects.filter(call=call, finished_turn__isnull=False).exclude(
        state__in=CARRIED + (ToolCall.State.LOST,)
    )
    if not ended:
        rows = rows.filter(finished_turn__lte=number - policy.never_settled_after)
    keyed = []
    for row in rows:
        what = f"finished at turn {row.finished_turn} per tool.finished"
        for f in timeline.result_lost(row.tool_call_id, what):
            keyed.append(analysis.Keyed(f, f"TL203:{row.tool_call_id}"))
    return keyed


def pending_rows(call: Call) -> list[ToolCall]:
    return list(ToolCall.objects.filter(call=call, state=ToolCall.State.PENDING))
