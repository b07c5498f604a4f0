"""Model request bodies: strict decoding, format detection, message extraction.

Pure functions over bytes and plain data; no ORM. The analysis issue grows
this into a full normaliser; here every format is split into its provider
messages (so storage can share them across turns) and tool-call ids are
pulled out so calls can be paired with results.
"""

import hashlib
import json
from dataclasses import dataclass

import orjson

from .storable import text as storable

FORMATS = ("openai.chat", "openai.responses", "anthropic.messages", "gemini")


class BodyError(ValueError):
    """A request body we refuse, with a stable machine-readable code."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class ToolCallRef:
    id: str
    name: str
    arguments: str  # exactly as sent (a JSON text for OpenAI, re-serialised for object args)


class ParsedMessage:
    """One provider message of a request.

    Only the canonical bytes and digest are computed for every message: an
    ingest compares digests with the previous request and looks closer only
    at the messages that changed, so the rest is worked out on demand.
    """

    __slots__ = ("format", "item", "canonical_bytes", "digest", "_tools")

    def __init__(self, fmt: str, item: dict, digest: str | None = None):
        self.format = fmt
        self.item = item
        self.canonical_bytes = canonical_json_bytes(item)
        self.digest = digest or hashlib.sha256(self.canonical_bytes).hexdigest()
        self._tools = None

    @property
    def canonical(self) -> str:
        """Compact JSON of the message object, every string value exact."""
        return self.canonical_bytes.decode("utf-8")

    @property
    def role(self) -> str:
        """The provider's own role (or item type, for Responses items without one)."""
        role = self.item.get("role")
        if self.format == "openai.responses" and not role:
            role = self.item.get("type")
        return storable(role, 32) if isinstance(role, str) else ""

    @property
    def calls(self) -> tuple[ToolCallRef, ...]:
        return self._tool_ids()[0]

    @property
    def results(self) -> tuple[str, ...]:
        """The tool-call ids this message answers."""
        return self._tool_ids()[1]

    def _tool_ids(self):
        if self._tools is None:
            self._tools = _TOOL_EXTRACTORS[self.format](self.item)
        return self._tools


class ParsedRequest:
    """A request body split into provider messages, each known by its digest."""

    def __init__(self, fmt: str, model: str, items: list[dict], meta: dict | None = None):
        self.format = fmt
        self.model = model
        self.items = items
        self.meta = meta or {}  # the body's other fields: model, system, tools, ...
        # The one pass over every message that each ingest pays for: it is
        # what lets the rest of the work look only at what changed.
        sha256, dumps = hashlib.sha256, canonical_json_bytes
        self.digests = [sha256(dumps(item)).hexdigest() for item in items]
        self._messages: dict[int, ParsedMessage] = {}

    def message(self, position: int) -> ParsedMessage:
        if position not in self._messages:
            self._messages[position] = ParsedMessage(
                self.format, self.items[position], self.digests[position]
            )
        return self._messages[position]

    @property
    def messages(self) -> list[ParsedMessage]:
        return [self.message(i) for i in range(len(self.items))]


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def decode_json(raw: bytes):
    """Parse a UTF-8 JSON text, refusing anything a strict parser would."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    # orjson refuses two things that are still valid JSON: escaped lone
    # surrogates ("\ud800") and integers beyond 64 bits. The standard library
    # takes both; it also takes NaN/Infinity, which are not JSON, so refuse those.
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BodyError(
            "invalid_utf8", f"The body is not valid UTF-8 (bad byte at offset {exc.start})."
        ) from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        raise BodyError("invalid_json", f"The body is not valid JSON: {exc}.") from None


def canonical_json_bytes(value) -> bytes:
    try:
        return orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        # Lone surrogates or huge integers: keep them as escapes, still exact on decode.
        return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def canonical_json(value) -> str:
    return canonical_json_bytes(value).decode("utf-8")


def detect_format(body: dict) -> str | None:
    """The provider format of a request body, or None when it has no known shape."""
    if "contents" in body:
        return "gemini"
    if "input" in body and "messages" not in body:
        return "openai.responses"
    if "messages" in body:
        return "anthropic.messages" if _looks_anthropic(body) else "openai.chat"
    return None


def _looks_anthropic(body: dict) -> bool:
    if "system" in body:
        return True
    model = body.get("model")
    if isinstance(model, str) and "claude" in model.lower():
        return True
    messages = body.get("messages")
    if not isinstance(messages, list):
        return False
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") in (
                    "tool_use",
                    "tool_result",
                    "thinking",
                    "redacted_thinking",
                ):
                    return True
    return False


_ITEMS_KEY = {
    "openai.chat": "messages",
    "anthropic.messages": "messages",
    "openai.responses": "input",
    "gemini": "contents",
}


def parse_request(raw: bytes, format_override: str | None = None) -> ParsedRequest:
    body = decode_json(raw)
    if not isinstance(body, dict):
        raise BodyError("not_an_object", "The body must be a JSON object (a model request).")
    if format_override is not None:
        if format_override not in FORMATS:
            raise BodyError(
                "unknown_format",
                f"X-Request-Format must be one of {', '.join(FORMATS)}.",
            )
        fmt = format_override
    else:
        fmt = detect_format(body)
        if fmt is None:
            raise BodyError(
                "unrecognized_format",
                "The body has none of `messages`, `input` or `contents`: "
                "it is not a model request in a known format.",
            )
    key = _ITEMS_KEY[fmt]
    items = body.get(key)
    if fmt == "openai.responses" and isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list):
        raise BodyError("invalid_shape", f"`{key}` must be an array for format {fmt}.")
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise BodyError("invalid_shape", f"`{key}[{index}]` must be a JSON object.")
    model = body.get("model")
    meta = {k: v for k, v in body.items() if k != key}
    return ParsedRequest(fmt, storable(model, 100) if isinstance(model, str) else "", items, meta)


def _text(value) -> str:
    """An id or name: storable, at most 200 characters."""
    return storable(value, 200) if isinstance(value, str) else ""


def _args_text(value) -> str:
    return storable(value) if isinstance(value, str) else canonical_json(value)


def _chat_tools(message: dict):
    calls = []
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list):
        for call in tool_calls:
            if not isinstance(call, dict):
                continue
            function = call.get("function") if isinstance(call.get("function"), dict) else {}
            calls.append(
                ToolCallRef(
                    _text(call.get("id")),
                    _text(function.get("name")),
                    _args_text(function.get("arguments", "")),
                )
            )
    results = ()
    if message.get("role") == "tool" and isinstance(message.get("tool_call_id"), str):
        results = (_text(message["tool_call_id"]),)
    return tuple(calls), results


def _blocks(message: dict, key: str) -> list:
    blocks = message.get(key)
    return [b for b in blocks if isinstance(b, dict)] if isinstance(blocks, list) else []


def _anthropic_tools(message: dict):
    calls, results = [], []
    for block in _blocks(message, "content"):
        if block.get("type") == "tool_use":
            calls.append(
                ToolCallRef(
                    _text(block.get("id")),
                    _text(block.get("name")),
                    _args_text(block.get("input", {})),
                )
            )
        elif block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
            results.append(_text(block["tool_use_id"]))
    return tuple(calls), tuple(results)


def _responses_tools(item: dict):
    if item.get("type") == "function_call":
        call = ToolCallRef(
            _text(item.get("call_id")), _text(item.get("name")), _args_text(item.get("arguments", ""))
        )
        return (call,), ()
    if item.get("type") == "function_call_output" and isinstance(item.get("call_id"), str):
        return (), (_text(item["call_id"]),)
    return (), ()


def _gemini_tools(content: dict):
    calls, results = [], []
    for part in _blocks(content, "parts"):
        if isinstance(part.get("functionCall"), dict):
            call = part["functionCall"]
            calls.append(
                ToolCallRef(
                    _text(call.get("id")), _text(call.get("name")), _args_text(call.get("args", {}))
                )
            )
        elif isinstance(part.get("functionResponse"), dict):
            response_id = part["functionResponse"].get("id")
            if isinstance(response_id, str):
                results.append(_text(response_id))
    return tuple(calls), tuple(results)


_TOOL_EXTRACTORS = {
    "openai.chat": _chat_tools,
    "anthropic.messages": _anthropic_tools,
    "openai.responses": _responses_tools,
    "gemini": _gemini_tools,
}


def loads(text: str):
    """Parse JSON text that this module produced (or any valid JSON text)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def result_text(canonical: str, tool_call_id: str) -> str:
    """The text a tool result for `tool_call_id` carries, as the model reads it."""
    message = loads(canonical)
    if not isinstance(message, dict):
        return ""
    if "output" in message or "content" in message:  # OpenAI chat tool message, Responses output
        for block in _blocks(message, "content"):  # Anthropic: one tool_result block per id
            if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_call_id:
                return _content_text(block.get("content"))
        return _content_text(message.get("output", message.get("content")))
    for part in _blocks(message, "parts"):  # Gemini
        response = part.get("functionResponse")
        if isinstance(response, dict) and response.get("id") == tool_call_id:
            return canonical_json(response.get("response"))
    return ""


def _content_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") for part in content if isinstance(part, dict)
        )
    return "" if content is None else canonical_json(content)
