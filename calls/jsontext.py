"""JSON text as Callscope stores it: compact, key order and every string kept exactly."""

import json
import re

import orjson


def canonical_json_bytes(value) -> bytes:
    try:
        return orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        # Lone surrogates or huge integers: keep them as escapes, still exact on decode.
        return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def canonical_json(value) -> str:
    return canonical_json_bytes(value).decode("utf-8")


def loads(text: str):
    """Parse JSON text that canonical_json produced (or any valid JSON text)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def readable_dumps(value, indent: int | None = None) -> str:
    """JSON text for people: non-ASCII as itself, except lone surrogates (valid JSON,
    but not encodable as UTF-8), which stay \\uXXXX escapes, so the page still loads."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# --- JSON text found inside strings (tool results, arguments) ------------------------

NOT_JSON = object()  # `json_value`'s answer for text that is not a JSON value we look into
MAX_LAYERS = 6


def json_value(text: str):
    """What `text` decodes to when it is a JSON object, array or string, else NOT_JSON
    (numbers and words are just text; absurdly deep JSON is just text too)."""
    stripped = text.strip()
    if not stripped or stripped[0] not in '{["':
        return NOT_JSON
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return NOT_JSON


def decode_inner(value, depth: int = 0):
    """(value, changed): every string value that is itself JSON text, replaced by what
    it decodes to, one layer."""
    if depth > 50:
        return value, False
    if isinstance(value, str):
        inner = json_value(value)
        return (value, False) if inner is NOT_JSON else (inner, True)
    if isinstance(value, list):
        items = [decode_inner(v, depth + 1) for v in value]
        return [v for v, _c in items], any(c for _v, c in items)
    if isinstance(value, dict):
        items = {k: decode_inner(v, depth + 1) for k, v in value.items()}
        return {k: v for k, (v, _c) in items.items()}, any(c for _v, c in items.values())
    return value, False


def decode_fully(value):
    """`value` with JSON text inside it decoded, layer after layer (up to MAX_LAYERS)."""
    for _ in range(MAX_LAYERS):
        value, changed = decode_inner(value)
        if not changed:
            break
    return value
