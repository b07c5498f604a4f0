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
