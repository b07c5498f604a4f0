"""Tool slots: what a tool result says about the tool's progress.

Frameworks park a placeholder in the tool's slot while the tool runs and
overwrite it with the result later (Pipecat writes `IN_PROGRESS`, then the
result, `COMPLETED` when the function returned nothing, or `CANCELLED`).
The analysis issue adds per-project patterns; these are the built-in ones.
"""

import orjson

PENDING = "pending"  # the tool is still running
TERMINAL = "terminal"  # a placeholder that settles the slot without a real result

_PENDING_TEXTS = {"IN_PROGRESS"}
_TERMINAL_TEXTS = {"CANCELLED", "COMPLETED"}


def classify_result(text: str) -> str | None:
    """PENDING or TERMINAL for a placeholder, None for a real result."""
    stripped = text.strip()
    if stripped in _PENDING_TEXTS:
        return PENDING
    if stripped in _TERMINAL_TEXTS:
        return TERMINAL
    if stripped.startswith("{"):
        try:
            payload = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            return None
        if isinstance(payload, dict):
            # Pipecat's async "started" payload, and the `outcome: running` shape.
            if payload.get("type") == "async_tool" and payload.get("status") == "running":
                return PENDING
            if payload.get("outcome") == "running":
                return PENDING
    return None


def delivered_outside_slot(role: str, text: str) -> str | None:
    """The tool_call_id whose result a developer, system or user message carries (as
    Pipecat's async "finished" payload does), or None."""
    if role not in ("developer", "system", "user") or not text.lstrip().startswith("{"):
        return None
    try:
        payload = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    tool_call_id = payload.get("tool_call_id") if isinstance(payload, dict) else None
    return tool_call_id if isinstance(tool_call_id, str) and tool_call_id else None
