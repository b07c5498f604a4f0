"""What a model response (an ingested `response` event's body) said: its text, the
tool calls it made, and why it stopped. OpenAI Chat and Responses, Anthropic, Gemini."""

from dataclasses import dataclass

from .jsontext import canonical_json


@dataclass(frozen=True, slots=True)
class ResponseCall:
    tool_call_id: str  # "" when the provider gave none (Gemini may not)
    name: str
    arguments: str  # as sent when a string (OpenAI), else canonical JSON


@dataclass(frozen=True, slots=True)
class Response:
    text: str
    calls: tuple[ResponseCall, ...]
    finish: str
    known: bool = True  # False: a shape we do not read, so never guess silence from it


def read(body) -> Response:
    if not isinstance(body, dict):
        return Response("", (), "", known=False)
    choices = body.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return _chat(choices[0])
    if isinstance(body.get("output"), list):
        return _responses(body)
    if isinstance(body.get("content"), list):
        return _anthropic(body)
    candidates = body.get("candidates")
    if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
        return _gemini(candidates[0])
    return Response("", (), "", known=False)


def _string(value) -> str:
    return value if isinstance(value, str) else ""


def _dicts(value) -> list[dict]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _arguments(value) -> str:
    return value if isinstance(value, str) else canonical_json(value) if value is not None else ""


def _chat(choice: dict) -> Response:
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    audio = message.get("audio") if isinstance(message.get("audio"), dict) else {}
    text = "".join(
        _string(t) for t in (message.get("content"), message.get("refusal"), audio.get("transcript"))
    )
    calls = []
    for call in _dicts(message.get("tool_calls")):
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        calls.append(
            ResponseCall(
                _string(call.get("id")), _string(function.get("name")), _arguments(function.get("arguments"))
            )
        )
    return Response(text, tuple(calls), _string(choice.get("finish_reason")))


def _responses(body: dict) -> Response:
    text, calls = "", []
    for item in _dicts(body.get("output")):
        if item.get("type") == "function_call":
            calls.append(
                ResponseCall(
                    _string(item.get("call_id")), _string(item.get("name")), _arguments(item.get("arguments"))
                )
            )
        for part in _dicts(item.get("content")):
            text += _string(part.get("text"))
    return Response(text, tuple(calls), _string(body.get("status")))


def _anthropic(body: dict) -> Response:
    blocks = _dicts(body.get("content"))
    text = "".join(_string(b.get("text")) for b in blocks if b.get("type") == "text")
    calls = tuple(
        ResponseCall(_string(b.get("id")), _string(b.get("name")), _arguments(b.get("input")))
        for b in blocks
        if b.get("type") == "tool_use"
    )
    return Response(text, calls, _string(body.get("stop_reason")))


def _gemini(candidate: dict) -> Response:
    content = candidate.get("content") if isinstance(candidate.get("content"), dict) else {}
    parts = _dicts(content.get("parts"))
    text = "".join(_string(p.get("text")) for p in parts if not p.get("thought"))
    calls = tuple(
        ResponseCall(
            _string(p["functionCall"].get("id")),
            _string(p["functionCall"].get("name")),
            _arguments(p["functionCall"].get("args")),
        )
        for p in parts
        if isinstance(p.get("functionCall"), dict)
    )
    return Response(text, calls, _string(candidate.get("finishReason")))
