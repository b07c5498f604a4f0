"""TR rules: tool results the provider accepts but the model is likely to misread."""

import re

from .. import slots
from ..jsontext import NOT_JSON, json_value
from ..normalize import Request
from . import INFO, WARNING, Finding

_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_EMPTY = {"", "null", "none", "{}", "[]"}
_OUTSIDE_ROLES = {"developer", "system", "user"}


def check(request: Request, placeholders: tuple[slots.Pattern, ...] = ()) -> list[Finding]:
    """`placeholders`: the project's own placeholder patterns, beside the built-in ones."""
    findings = []
    for message in request.messages:
        for result in message.results:
            findings.extend(
                _result(
                    message.index, result.tool_call_id, result.text, _has_media(result.raw),
                    placeholders,
                )
            )
        for call in message.calls:
            findings.extend(_arguments(message.index, call.tool_call_id, call.arguments))
        if message.role in _OUTSIDE_ROLES and message.text:
            findings.extend(_outside_slot(message.index, message.role, message.text))
    return findings


def is_empty(text: str) -> bool:
    """A result text that tells the model nothing ("", "null", "{}", ...)."""
    return text.strip().lower() in _EMPTY


def _has_media(content) -> bool:
    """A result with image or file parts is not empty, whatever its text says."""
    items = content.get("content") if isinstance(content, dict) else content
    return isinstance(items, list) and any(
        isinstance(p, dict) and p.get("type") not in ("text", "input_text", "output_text")
        for p in items
    )


def _result(
    index: int, tool_call_id: str, text: str, has_media: bool = False, placeholders: tuple = ()
) -> list[Finding]:
    findings = []
    kind = slots.classify_result(text, placeholders)
    if kind == slots.PENDING:
        findings.append(
            Finding(
                "TR101",
                INFO,
                f"The result of {tool_call_id} in message {index} is a still-running "
                f"placeholder: {_clip(text)}.",
                index,
                tool_call_id,
            )
        )
    elif kind == slots.TERMINAL:
        findings.append(
            Finding(
                "TR101",
                WARNING,
                f"The result of {tool_call_id} in message {index} is the bare placeholder "
                f"{text.strip()!r}, which the model may read as a statement about the task.",
                index,
                tool_call_id,
            )
        )
    if is_empty(text) and not has_media:
        findings.append(
            Finding(
                "TR105",
                WARNING,
                f"The result of {tool_call_id} in message {index} is empty ({text.strip() or 'blank'}): "
                "the model cannot tell success from nothing.",
                index,
                tool_call_id,
            )
        )
    findings.extend(_encoding(index, tool_call_id, text, f"The result of {tool_call_id} in message {index}"))
    return findings


def _arguments(index: int, tool_call_id: str, arguments: str) -> list[Finding]:
    """TR103 in a call's arguments: a field whose value is JSON text is escaped twice in
    the history the model re-reads (and often by the model when it calls again)."""
    layers = json_layers(arguments)
    if layers < 2:
        return []
    return [
        Finding(
            "TR103",
            WARNING,
            f"The arguments of tool call {tool_call_id} in message {index} hold JSON encoded "
            f"{layers} times: a field carries JSON text instead of the data.",
            index,
            tool_call_id,
            (("layers", layers), ("where", "arguments")),
        )
    ]


def _outside_slot(index: int, role: str, text: str) -> list[Finding]:
    tool_call_id = slots.delivered_outside_slot(role, text)
    if tool_call_id is None:
        return []
    findings = [
        Finding(
            "TR102",
            WARNING,
            f"Message {index} delivers a result for {tool_call_id} as a {role} message, "
            "outside the tool slot the model expects.",
            index,
            tool_call_id,
        )
    ]
    findings.extend(_encoding(index, tool_call_id, text, f"The {role} message {index}"))
    return findings


def _encoding(index: int, tool_call_id: str, text: str, what: str) -> list[Finding]:
    findings = []
    layers = json_layers(text)
    if layers >= 2:
        findings.append(
            Finding(
                "TR103",
                WARNING,
                f"{what} holds JSON encoded {layers} times: the model reads escaped quotes "
                "and backslashes instead of the data.",
                index,
                tool_call_id,
                (("layers", layers),),
            )
        )
    escapes = escaped_non_latin(text)
    if escapes:
        findings.append(
            Finding(
                "TR104",
                WARNING,
                f"{what} spells {escapes} non-Latin characters as \\uXXXX escapes: six ASCII "
                f"characters each instead of one, about {escapes * 5} extra characters the "
                "model reads and pays for.",
                index,
                tool_call_id,
                (("escapes", escapes), ("extra_characters", escapes * 5), ("inflation", 6)),
            )
        )
    return findings


def json_layers(text: str) -> int:
    """How many times JSON was encoded: 1 for plain JSON text, 2 when a value
    (or the whole decoded value) is itself JSON text, and so on; 0 for no JSON."""
    value = json_value(text)
    if value is NOT_JSON:
        return 0
    return 1 + _nested_layers(value)


_MAX_DEPTH = 50  # containers deeper than this are not searched for JSON text


def _nested_layers(value, depth: int = 0) -> int:
    if depth > _MAX_DEPTH:
        return 0
    if isinstance(value, str):
        inner = json_value(value)
        # A JSON string literal that holds JSON counts (Pipecat 1.1's results).
        holds_json = isinstance(inner, str) and json_value(inner) is not NOT_JSON
        if isinstance(inner, (dict, list)) or holds_json:
            return 1 + _nested_layers(inner, depth + 1)
        return 0
    if isinstance(value, dict):
        return max((_nested_layers(v, depth + 1) for v in value.values()), default=0)
    if isinstance(value, list):
        return max((_nested_layers(v, depth + 1) for v in value), default=0)
    return 0


def escaped_non_latin(text: str) -> int:
    """Literal \\uXXXX escapes of non-ASCII characters in the string the model reads."""
    return sum(1 for m in _ESCAPE.finditer(text) if int(m.group(1), 16) >= 0x80)


def _clip(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
