"""Tool slots: what a tool result says about the tool's progress.

Frameworks park a placeholder in the tool's slot while the tool runs and
overwrite it with the result later (Pipecat writes `IN_PROGRESS`, then the
result, `COMPLETED` when the function returned nothing, or `CANCELLED`).
These are the built-in patterns; a project adds its own (`Pattern`), as a
regular expression over the result text or a JSON field's value.
"""

import re
from dataclasses import dataclass

import orjson

PENDING = "pending"  # the tool is still running
TERMINAL = "terminal"  # a placeholder that settles the slot without a real result

_PENDING_TEXTS = {"IN_PROGRESS"}
_TERMINAL_TEXTS = {"CANCELLED", "COMPLETED"}
# Placeholders are short; a project's regex never runs over more than this, so an
# attacker-sized tool result cannot make a careless pattern backtrack for long.
PATTERN_TEXT_LIMIT = 2000


@dataclass(frozen=True, slots=True)
class Pattern:
    """A project's own placeholder: `regex` searched in the result text, or the
    JSON object's `field` (dotted path) equal to `value`."""

    meaning: str  # PENDING or TERMINAL
    regex: re.Pattern | None = None
    field: str = ""
    value: str = ""

    def matches(self, text: str, payload) -> bool:
        if self.regex is not None:
            return len(text) <= PATTERN_TEXT_LIMIT and self.regex.search(text) is not None
        value = payload
        for key in self.field.split("."):
            if not isinstance(value, dict) or key not in value:
                return False
            value = value[key]
        if isinstance(value, bool) or value is None:
            value = orjson.dumps(value).decode()
        return isinstance(value, (str, int, float)) and str(value) == self.value


def classify_result(text: str, patterns: tuple[Pattern, ...] = ()) -> str | None:
    """PENDING or TERMINAL for a placeholder, None for a real result."""
    stripped = text.strip()
    if stripped in _PENDING_TEXTS:
        return PENDING
    if stripped in _TERMINAL_TEXTS:
        return TERMINAL
    payload = None
    if stripped.startswith("{"):
        try:
            payload = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            payload = None
        if isinstance(payload, dict):
            # Pipecat's async "started" payload, and the `outcome: running` shape.
            if payload.get("type") == "async_tool" and payload.get("status") == "running":
                return PENDING
            if payload.get("outcome") == "running":
                return PENDING
    for pattern in patterns:
        if pattern.matches(stripped, payload):
            return pattern.meaning
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
