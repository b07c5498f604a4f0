"""Eval fixtures from captured requests, and snippets that replay them.

Three renderings of one request body, so an eval can test the conversation
callers really have: as captured; with tool results moved out of their slots
into developer messages (the shape Pipecat's async tools produce, JSON inside
a JSON string, non-ASCII as escapes); and with results in their slots,
readable (every layer of JSON decoded and serialised once, non-ASCII kept).
Pure functions over decoded bodies.
"""

import copy
import json
import shlex

from . import slots
from .jsontext import NOT_JSON, decode_fully, json_value, readable_dumps

CAPTURED = "captured"
ASYNC = "async"
READABLE = "readable"
RENDERINGS = {
    CAPTURED: "As captured",
    ASYNC: "Results as developer messages (async shape)",
    READABLE: "Results in place, readable",
}
FIXTURE_VERSION = 1

# Pipecat 1.1's own texts (async_tool_messages.py), so evals see what callers' models see.
_RUNNING = (
    "An asynchronous task associated with this tool_call_id has started running. Expect results "
    "to arrive later as developer messages that look roughly like this one (with "
    "'type=async_tool' and a matching tool_call_id) but with a 'result' field. Note that there "
    "*may* be more than one result (i.e., a stream of results), but there doesn't have to be "
    "(there may be only one). The last result will come in a message with 'status=finished'."
)
_FINISHED = (
    "This is the final result for the asynchronous task associated with this tool_call_id. The "
    "task has completed. No further results will arrive for this tool_call_id."
)


class NotAvailable(ValueError):
    """A rendering that does not exist for this request format."""


def render(body: dict, fmt: str, rendering: str) -> dict:
    if rendering == CAPTURED:
        return body
    if rendering == READABLE:
        return _READABLE[fmt](_copy(body))
    if rendering == ASYNC:
        if fmt != "openai.chat":
            raise NotAvailable("The async shape exists for OpenAI Chat Completions requests only.")
        return _async_chat(_copy(body))
    raise NotAvailable(f"Unknown rendering {rendering!r}.")


def _copy(body: dict) -> dict:
    try:
        return copy.deepcopy(body)
    except RecursionError:
        raise NotAvailable("This request is nested too deeply to re-render; export it as captured.") from None


def available(fmt: str) -> list[str]:
    return [r for r in RENDERINGS if r != ASYNC or fmt == "openai.chat"]


def readable(text: str) -> str:
    """A result as the model should read it: JSON decoded through every layer, then
    serialised once with non-ASCII characters as themselves. Non-JSON text is kept."""
    value = json_value(text)
    if value is NOT_JSON:
        return text
    value = decode_fully(value)
    return value if isinstance(value, str) else readable_dumps(value)


def _value(text: str):
    """A result's JSON value for re-encoding (its text when it is not JSON)."""
    value = json_value(text)
    return text if value is NOT_JSON else value


# --- results in place, readable ---------------------------------------------------


def _delivered(messages: list) -> dict:
    """tool_call_id -> result of developer/system/user messages that carry one."""
    found = {}
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            continue
        tool_call_id = slots.delivered_outside_slot(str(message.get("role")), message["content"])
        if tool_call_id:
            payload = json.loads(message["content"])
            found[tool_call_id] = payload.get("result", payload)
    return found


def _readable_chat(body: dict) -> dict:
    messages = body.get("messages") or []
    delivered = _delivered(messages)
    kept = []
    for message in messages:
        if not isinstance(message, dict):
            kept.append(message)
            continue
        content = message.get("content")
        if isinstance(content, str) and slots.delivered_outside_slot(str(message.get("role")), content):
            continue  # its result goes back into the slot below
        if message.get("role") == "tool" and isinstance(content, str):
            tool_call_id = message.get("tool_call_id")
            if (
                isinstance(tool_call_id, str)
                and slots.classify_result(content) == slots.PENDING
                and tool_call_id in delivered
            ):
                result = delivered[tool_call_id]
                content = result if isinstance(result, str) else readable_dumps(result)
            message["content"] = readable(content)
        kept.append(message)
    body["messages"] = kept
    return body


def _readable_anthropic(body: dict) -> dict:
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                if isinstance(block.get("content"), str):
                    block["content"] = readable(block["content"])
                elif isinstance(block.get("content"), list):
                    for part in block["content"]:
                        if isinstance(part, dict) and isinstance(part.get("text"), str):
                            part["text"] = readable(part["text"])
    return body


def _readable_responses(body: dict) -> dict:
    items = body.get("input")
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            if isinstance(item.get("output"), str):
                item["output"] = readable(item["output"])
    return body


def _readable_gemini(body: dict) -> dict:
    for content in body.get("contents") or []:
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts if isinstance(parts, list) else []:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict) and "response" in response:
                response["response"] = decode_fully(response["response"])
    return body


_READABLE = {
    "openai.chat": _readable_chat,
    "anthropic.messages": _readable_anthropic,
    "openai.responses": _readable_responses,
    "gemini": _readable_gemini,
}


# --- the async shape ----------------------------------------------------------------


def _async_chat(body: dict) -> dict:
    """Each real result leaves its slot (which says "running") and arrives as a developer
    message after the run of tool messages, as Pipecat's async tools send it."""
    shaped, waiting = [], []
    for message in body.get("messages") or []:
        is_result = (
            isinstance(message, dict)
            and message.get("role") == "tool"
            and isinstance(message.get("content"), str)
            and slots.classify_result(message["content"]) is None
        )
        if not is_result and waiting:
            shaped += waiting
            waiting = []
        if not is_result:
            shaped.append(message)
            continue
        tool_call_id = message.get("tool_call_id")
        running = {"type": "async_tool", "status": "running", "tool_call_id": tool_call_id, "description": _RUNNING}
        shaped.append({**message, "content": json.dumps(running)})
        finished = {
            "type": "async_tool",
            "tool_call_id": tool_call_id,
            "status": "finished",
            "description": _FINISHED,
            # Pipecat's two json.dumps, both with the default ensure_ascii=True.
            "result": json.dumps(_value(message["content"])),
        }
        waiting.append({"role": "developer", "content": json.dumps(finished)})
    body["messages"] = shaped + waiting
    return body


# --- fixtures and replay snippets --------------------------------------------------------


def fixture(meta: dict, rendering: str, request: dict) -> dict:
    """One turn as an eval fixture: where it came from, and the request body."""
    return {"callscope_fixture": FIXTURE_VERSION, **meta, "rendering": rendering, "request": request}


def request_of(document, turn: int | None = None) -> dict:
    """The request body inside what a user pasted: a body, a turn fixture, or a call
    fixture (its turn `turn` when present, else its last)."""
    if isinstance(document, dict) and document.get("callscope_fixture"):
        if isinstance(document.get("request"), dict):
            return document["request"]
        turns = document.get("turns")
        turns = [t for t in turns if isinstance(t, dict)] if isinstance(turns, list) else []
        chosen = [t for t in turns if t.get("turn") == turn] or turns[-1:]
        if chosen and isinstance(chosen[0].get("request"), dict):
            return chosen[0]["request"]
        raise ValueError("The fixture holds no request.")
    if isinstance(document, dict):
        return document
    raise ValueError("Paste a request body (a JSON object) or a Callscope fixture.")


ENDPOINTS = {
    "openai.chat": ("https://api.openai.com/v1/chat/completions", "OPENAI_API_KEY"),
    "openai.responses": ("https://api.openai.com/v1/responses", "OPENAI_API_KEY"),
    "anthropic.messages": ("https://api.anthropic.com/v1/messages", "ANTHROPIC_API_KEY"),
    "gemini": (
        "https://generativelanguage.googleapis.com/v1beta/models/{model}:generateContent",
        "GEMINI_API_KEY",
    ),
}


def _endpoint(fmt: str, model: str) -> tuple[str, str, list[tuple[str, str]]]:
    url, key = ENDPOINTS[fmt]
    url = url.format(model=model or "MODEL")
    if fmt == "anthropic.messages":
        headers = [("x-api-key", f"${key}"), ("anthropic-version", "2023-06-01")]
    elif fmt == "gemini":
        headers = [("x-goog-api-key", f"${key}")]
    else:
        headers = [("Authorization", f"Bearer ${key}")]
    return url, key, headers + [("Content-Type", "application/json")]


def curl_command(fmt: str, model: str, filename: str) -> str:
    """Replays the downloaded body byte for byte; the key comes from the environment."""
    url, _key, headers = _endpoint(fmt, model)
    lines = [f"curl -sS {shlex.quote(url)}"]
    for name, value in headers:
        # Double quotes so the shell fills in the key variable; nothing else is expanded.
        lines.append(f'  -H "{name}: {value}"')
    lines.append(f"  --data-binary @{shlex.quote(filename)}")
    return " \\\n".join(lines)


def python_snippet(fmt: str, model: str, filename: str) -> str:
    url, key, headers = _endpoint(fmt, model)
    header_lines = "\n".join(
        f"        {name!r}: {_py_header(value, key)},"
        for name, value in headers
    )
    return (
        "import os\n"
        "import pathlib\n"
        "import urllib.request\n"
        "\n"
        f"body = pathlib.Path({filename!r}).read_bytes()  # the exact bytes Callscope received\n"
        "request = urllib.request.Request(\n"
        f"    {url!r},\n"
        "    data=body,\n"
        "    headers={\n"
        f"{header_lines}\n"
        "    },\n"
        ")\n"
        "with urllib.request.urlopen(request) as response:\n"
        "    print(response.read().decode())\n"
    )


def _py_header(value: str, key: str) -> str:
    variable = f"${key}"
    if variable not in value:
        return repr(value)
    before, after = value.split(variable, 1)
    return " + ".join(p for p in (repr(before) if before else "", f"os.environ[{key!r}]", repr(after) if after else "") if p)
