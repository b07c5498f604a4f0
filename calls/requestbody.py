"""Model request bodies: strict decoding, format detection, message extraction.

Pure functions over bytes and plain data; no ORM. Every format is split into
its provider messages (so storage can share them across turns); the tool
calls and results of a message come from `calls.normalize`, the same reading
the rules use, so a slot's row and its findings always agree on ids.
"""

import hashlib
import json
from dataclasses import dataclass

import orjson

from .jsontext import canonical_json, canonical_json_bytes, loads
from .normalize import normalize
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

    __slots__ = ("format", "item", "canonical_bytes", "digest", "position", "previous", "_tools")

    def __init__(
        self,
        fmt: str,
        item: dict,
        digest: str | None = None,
        position: int = 0,
        previous: dict | None = None,
    ):
        self.format = fmt
        self.item = item
        self.canonical_bytes = canonical_json_bytes(item)
        self.digest = digest or hashlib.sha256(self.canonical_bytes).hexdigest()
        self.position = position
        self.previous = previous  # the message before: Gemini pairs id-less results with it
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
        """The tool-call ids this message answers, one per result part in order ("" for a
        result that pairs with no call)."""
        return self._tool_ids()[1]

    @property
    def text(self) -> str:
        """Its words, as the normalised model reads them (no reasoning, no results)."""
        return self._tool_ids()[2]

    def _tool_ids(self):
        if self._tools is None:
            items = [self.item] if self.previous is None else [self.previous, self.item]
            start = self.position - len(items) + 1
            request = normalize(self.format, {ITEMS_KEY[self.format]: items}, offset=start)
            mine = [m for m in request.messages if m.index == self.position]
            self._tools = (
                tuple(ToolCallRef(c.tool_call_id, c.name, c.arguments) for m in mine for c in m.calls),
                tuple(r.tool_call_id for m in mine for r in m.results),
                "".join(m.text for m in mine),
            )
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
                self.format,
                self.items[position],
                self.digests[position],
                position,
                self.items[position - 1] if position > 0 else None,
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


ITEMS_KEY = {
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
    key = ITEMS_KEY[fmt]
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


def result_text(canonical: str, tool_call_id: str, result_ids=()) -> str:
    """The text a tool result for `tool_call_id` carries, as the model reads it.

    `result_ids`: the message's result ids in part order (`ParsedMessage.results`,
    `Message.result_ids`), for Gemini responses that carry no id of their own."""
    message = loads(canonical)
    if not isinstance(message, dict):
        return ""
    if "output" in message or "content" in message:  # OpenAI chat tool message, Responses output
        for block in _blocks(message, "content"):  # Anthropic: one tool_result block per id
            if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_call_id:
                return _content_text(block.get("content"))
        return _content_text(message.get("output", message.get("content")))
    responses = [
        part["functionResponse"]
        for part in _blocks(message, "parts")
        if isinstance(part.get("functionResponse"), dict)
    ]
    for response in responses:  # Gemini
        if response.get("id") == tool_call_id:
            return canonical_json(response.get("response"))
    if tool_call_id in result_ids:  # paired by position, as normalize paired it
        place = list(result_ids).index(tool_call_id)
        if place < len(responses):
            return canonical_json(responses[place].get("response"))
    return ""


def _blocks(message: dict, key: str) -> list:
    blocks = message.get(key)
    return [b for b in blocks if isinstance(b, dict)] if isinstance(blocks, list) else []


def _content_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") for part in content if isinstance(part, dict)
        )
    return "" if content is None else canonical_json(content)
