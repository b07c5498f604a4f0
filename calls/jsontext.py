"""JSON text as Callscope stores it: compact, key order and every string kept exactly."""

import json

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
