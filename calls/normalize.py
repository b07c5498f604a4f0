"""Four provider request formats, one model of plain data.

OpenAI Chat Completions, OpenAI Responses, Anthropic Messages and Gemini
generateContent all become a `Request`: instructions, messages, tools
declared. Two choices matter for everything built on it:

- Provider message boundaries are kept: nothing is merged, and each message
  carries `index`, its position in the provider's own array. The one split:
  an Anthropic `tool_result` block or a Gemini `functionResponse` part
  becomes a `tool` message of its own (with `block`, its position inside
  that provider message), because each answers one call.
- Every content and arguments string is kept exactly as received; nothing
  is decoded or re-escaped. Object arguments (Anthropic, Gemini) are shown
  as compact JSON and flagged `arguments_is_string=False`.

Pure functions over decoded JSON; no ORM.
"""

import hashlib
from dataclasses import dataclass, field

from .jsontext import canonical_json, canonical_json_bytes
from .storable import text as storable

TEXT = "text"
TOOL_CALL = "tool_call"
TOOL_RESULT = "tool_result"
MEDIA = "media"
REASONING = "reasoning"
OTHER = "other"


@dataclass(frozen=True, slots=True)
class Part:
    kind: str
    text: str = ""  # a text part, or a result's content as the model reads it
    tool_call_id: str = ""
    name: str = ""
    arguments: str = ""
    arguments_is_string: bool = True
    is_error: bool = False
    raw: object = None  # the provider's own part, for media, reasoning and other parts


@dataclass(frozen=True, slots=True)
class Message:
    index: int  # position in the provider's own array
    role: str  # system, developer, user, assistant, tool (or an unknown role as sent)
    provider_role: str
    parts: tuple[Part, ...]
    block: int | None = None  # Anthropic/Gemini: position of the result inside messages[index]
    flags: frozenset = frozenset()  # shape facts lost otherwise, e.g. "empty_tool_calls"

    @property
    def calls(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.kind == TOOL_CALL)

    @property
    def results(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.kind == TOOL_RESULT)

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if p.kind == TEXT)


@dataclass(frozen=True, slots=True)
class Instruction:
    source: str  # system, developer, top_level_system, instructions, systemInstruction
    text: str


@dataclass(frozen=True, slots=True)
class ToolDef:
    name: str
    description: str = ""
    parameters: object = None


@dataclass(frozen=True, slots=True)
class Request:
    format: str
    model: str
    instructions: tuple[Instruction, ...] = ()
    messages: tuple[Message, ...] = ()
    tools: tuple[ToolDef, ...] = ()
    extra: dict = field(default_factory=dict)  # tool_choice, parallel_tool_calls, ...


def normalize(fmt: str, body: dict, offset: int = 0) -> Request:
    """The request `body` (decoded JSON of format `fmt`) as one plain model.

    `offset`: the body holds the provider's messages from that index on (a
    window of a longer request); indexes and position-derived ids stay absolute.
    """
    return _NORMALIZERS[fmt](body, offset)


# --- shared helpers -------------------------------------------------------


def _str(value, limit: int | None = 200) -> str:
    return storable(value, limit) if isinstance(value, str) else ""


def _args(value) -> tuple[str, bool]:
    if isinstance(value, str):
        return storable(value), True
    return canonical_json(value if value is not None else {}), False


def _call(call_id, name, arguments, raw, fallback_id: str = "") -> Part:
    """A tool call part; arguments kept as sent (a string) or as compact JSON (an object)."""
    text, is_string = _args(arguments)
    return Part(
        TOOL_CALL,
        tool_call_id=_str(call_id) or fallback_id,
        name=_str(name),
        arguments=text,
        arguments_is_string=is_string,
        raw=raw,
    )


def _content_text(content) -> str:
    """What a result or message content says, as text the model reads."""
    if isinstance(content, str):
        return storable(content)
    if isinstance(content, list):
        return "".join(
            storable(p["text"])
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return "" if content is None else canonical_json(content)


def _model(body: dict) -> str:
    return _str(body.get("model"), 100)


def _dicts(value) -> list:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


# --- OpenAI Chat Completions -----------------------------------------------

_CHAT_MEDIA = {"image_url", "input_audio", "file", "image", "audio"}


def _chat(body: dict, offset: int = 0) -> Request:
    messages, instructions = [], []
    for index, item in enumerate(body.get("messages") or [], start=offset):
        if not isinstance(item, dict):
            continue
        provider_role = _str(item.get("role"), 32)
        role = "tool" if provider_role == "function" else provider_role
        parts = []
        content = item.get("content")
        if role == "tool":
            # The deprecated `function` role answers by name, not by id.
            call_id = _str(item.get("tool_call_id")) or (
                f"function:{_str(item.get('name'))}" if provider_role == "function" else ""
            )
            parts.append(
                Part(
                    TOOL_RESULT,
                    text=_content_text(content),
                    tool_call_id=call_id,
                    name=_str(item.get("name")),
                    raw=content,
                )
            )
        elif isinstance(content, str):
            parts.append(Part(TEXT, text=storable(content)))
        else:
            for part in _dicts(content):
                kind = part.get("type") if isinstance(part.get("type"), str) else ""
                if kind in ("text", "refusal"):
                    parts.append(Part(TEXT, text=_str(part.get(kind), None), raw=part))
                else:
                    parts.append(Part(MEDIA if kind in _CHAT_MEDIA else OTHER, raw=part))
        for call in _dicts(item.get("tool_calls")):
            function = call.get("function") if isinstance(call.get("function"), dict) else {}
            parts.append(_call(call.get("id"), function.get("name"), function.get("arguments"), call))
        legacy = item.get("function_call")
        if isinstance(legacy, dict):  # deprecated, still accepted
            name = _str(legacy.get("name"))
            parts.append(_call(f"function:{name}", name, legacy.get("arguments"), legacy))
        if role in ("system", "developer"):
            instructions.append(Instruction(role, _content_text(content)))
        flags = frozenset({"empty_tool_calls"}) if item.get("tool_calls") == [] else frozenset()
        messages.append(Message(index, role, provider_role, tuple(parts), flags=flags))
    tools = tuple(
        ToolDef(
            _str(fn.get("name")), _str(fn.get("description"), None), fn.get("parameters")
        )
        for t in _dicts(body.get("tools"))
        for fn in [t.get("function") if isinstance(t.get("function"), dict) else {}]
    )
    return Request(
        "openai.chat",
        _model(body),
        tuple(instructions),
        tuple(messages),
        tools,
        _extra(body, "tool_choice", "parallel_tool_calls"),
    )


def _extra(body: dict, *keys: str) -> dict:
    return {k: body[k] for k in keys if k in body}


# --- OpenAI Responses --------------------------------------------------------

_RESPONSES_TEXT = {"input_text", "output_text", "text", "refusal"}


def _responses(body: dict, offset: int = 0) -> Request:
    instructions = []
    if isinstance(body.get("instructions"), str):
        instructions.append(Instruction("instructions", storable(body["instructions"])))
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    messages = []
    for index, item in enumerate(items or [], start=offset):
        if not isinstance(item, dict):
            continue
        kind = item.get("type") or "message"
        if kind == "function_call":
            call = _call(item.get("call_id"), item.get("name"), item.get("arguments"), item)
            messages.append(Message(index, "assistant", "function_call", (call,)))
        elif kind == "function_call_output":
            output = item.get("output")
            result = Part(
                TOOL_RESULT,
                text=_content_text(output),
                tool_call_id=_str(item.get("call_id")),
                raw=output,
            )
            messages.append(Message(index, "tool", "function_call_output", (result,)))
        elif kind == "reasoning":
            messages.append(Message(index, "assistant", "reasoning", (Part(REASONING, raw=item),)))
        elif kind == "message":
            role = _str(item.get("role"), 32)
            content = item.get("content")
            parts = []
            if isinstance(content, str):
                parts.append(Part(TEXT, text=storable(content)))
            for part in _dicts(content):
                kind = part.get("type") if isinstance(part.get("type"), str) else ""
                if kind in _RESPONSES_TEXT:
                    field_name = "refusal" if kind == "refusal" else "text"
                    parts.append(Part(TEXT, text=_str(part.get(field_name), None), raw=part))
                else:
                    media = kind in ("input_image", "input_file", "input_audio")
                    parts.append(Part(MEDIA if media else OTHER, raw=part))
            if role in ("system", "developer"):
                instructions.append(Instruction(role, _content_text(content)))
            messages.append(Message(index, role, role, tuple(parts)))
        else:
            messages.append(Message(index, "other", _str(kind, 32), (Part(OTHER, raw=item),)))
    tools = tuple(
        ToolDef(_str(t.get("name")), _str(t.get("description"), None), t.get("parameters"))
        for t in _dicts(body.get("tools"))
        if t.get("type", "function") == "function"
    )
    return Request(
        "openai.responses",
        _model(body),
        tuple(instructions),
        tuple(messages),
        tools,
        _extra(body, "tool_choice", "parallel_tool_calls", "previous_response_id"),
    )


# --- Anthropic Messages -----------------------------------------------------


def _anthropic(body: dict, offset: int = 0) -> Request:
    instructions = []
    system = body.get("system")
    if system is not None:
        instructions.append(Instruction("top_level_system", _content_text(system)))
    messages = []
    for index, item in enumerate(body.get("messages") or [], start=offset):
        if not isinstance(item, dict):
            continue
        role = _str(item.get("role"), 32)
        content = item.get("content")
        if isinstance(content, str):
            messages.append(Message(index, role, role, (Part(TEXT, text=storable(content)),)))
            continue
        parts = []
        for block_index, block in enumerate(_dicts(content)):
            kind = block.get("type")
            if kind == "tool_result":
                if parts:  # text before the results: keep that order visible
                    messages.append(Message(index, role, role, tuple(parts)))
                    parts = []
                result = Part(
                    TOOL_RESULT,
                    text=_content_text(block.get("content")),
                    tool_call_id=_str(block.get("tool_use_id")),
                    is_error=block.get("is_error") is True,
                    raw=block,
                )
                messages.append(Message(index, "tool", role, (result,), block=block_index))
            elif kind == "text":
                parts.append(Part(TEXT, text=_str(block.get("text"), None), raw=block))
            elif kind == "tool_use":
                parts.append(_call(block.get("id"), block.get("name"), block.get("input"), block))
            elif kind in ("thinking", "redacted_thinking"):
                parts.append(Part(REASONING, raw=block))
            elif kind in ("image", "document"):
                parts.append(Part(MEDIA, raw=block))
            else:
                parts.append(Part(OTHER, raw=block))
        if parts or not isinstance(content, list) or not content:
            messages.append(Message(index, role, role, tuple(parts)))
    tools = tuple(
        ToolDef(_str(t.get("name")), _str(t.get("description"), None), t.get("input_schema"))
        for t in _dicts(body.get("tools"))
    )
    return Request(
        "anthropic.messages",
        _model(body),
        tuple(instructions),
        tuple(messages),
        tools,
        _extra(body, "tool_choice", "thinking"),
    )


# --- Gemini generateContent --------------------------------------------------

_GEMINI_ROLES = {"user": "user", "model": "assistant", "function": "tool"}


def _gemini(body: dict, offset: int = 0) -> Request:
    instructions = []
    system = body.get("systemInstruction") or body.get("system_instruction")
    if isinstance(system, dict):
        instructions.append(Instruction("systemInstruction", _content_text(system.get("parts"))))
    messages = []
    open_calls: list[Part] = []  # calls of the last model turn, for id-less pairing
    for index, item in enumerate(body.get("contents") or [], start=offset):
        if not isinstance(item, dict):
            continue
        provider_role = _str(item.get("role"), 32)
        role = _GEMINI_ROLES.get(provider_role, provider_role)
        parts, calls, answered = [], [], set()
        for part_index, part in enumerate(_dicts(item.get("parts"))):
            if isinstance(part.get("functionCall"), dict):
                call = part["functionCall"]
                # Gemini ids are optional: without one, name the call by its model turn's
                # content and its place in it, which stay the same when the history is
                # trimmed or the turn is re-sent. (Identical id-less calls share a name.)
                place = f"gemini:{_digest(item)}:{part_index}"
                calls.append(_call(call.get("id"), call.get("name"), call.get("args"), part, place))
                parts.append(calls[-1])
            elif isinstance(part.get("functionResponse"), dict):
                response = part["functionResponse"]
                call_id = _str(response.get("id")) or _positional_id(
                    open_calls, answered, _str(response.get("name"))
                )
                answered.add(call_id)
                result = Part(
                    TOOL_RESULT,
                    text=canonical_json(response.get("response")),
                    tool_call_id=call_id,
                    name=_str(response.get("name")),
                    raw=part,
                )
                messages.append(Message(index, "tool", provider_role, (result,), block=part_index))
            elif isinstance(part.get("text"), str):
                kind = REASONING if part.get("thought") is True else TEXT
                parts.append(Part(kind, text=storable(part["text"]), raw=part))
            elif "inlineData" in part or "fileData" in part:
                parts.append(Part(MEDIA, raw=part))
            else:
                parts.append(Part(OTHER, raw=part))
        if parts or not answered:
            messages.append(Message(index, role, provider_role, tuple(parts)))
        if calls:
            open_calls = calls
        elif not answered:
            open_calls = []
    tools = tuple(
        ToolDef(_str(d.get("name")), _str(d.get("description"), None), d.get("parameters"))
        for t in _dicts(body.get("tools"))
        for d in _dicts(t.get("functionDeclarations") or t.get("function_declarations"))
    )
    return Request(
        "gemini",
        _model(body),
        tuple(instructions),
        tuple(messages),
        tools,
        _extra(body, "toolConfig"),
    )


def _digest(item: dict) -> str:
    return hashlib.sha256(canonical_json_bytes(item)).hexdigest()[:12]


def _positional_id(open_calls: list[Part], answered: set, name: str) -> str:
    """The id of the first unanswered call of the last model turn with this name, else
    the first unanswered one: how Gemini pairs responses that carry no id."""
    unanswered = [c for c in open_calls if c.tool_call_id not in answered]
    for call in unanswered:
        if call.name == name:
            return call.tool_call_id
    return unanswered[0].tool_call_id if unanswered else ""


_NORMALIZERS = {
    "openai.chat": _chat,
    "openai.responses": _responses,
    "anthropic.messages": _anthropic,
    "gemini": _gemini,
}
