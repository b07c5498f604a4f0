"""TC rules: the structure providers check before they answer (errors are 400s)."""

import json
import re

from ..normalize import Message, Request
from . import ERROR, WARNING, Finding

_OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
_GEMINI_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
_OPENAI_ID_MAX = 40

# Providers (by model name) that refuse a `developer` message.
_NO_DEVELOPER = re.compile(
    r"deepseek|mistral|mixtral|cerebras|llama|qwen|gemma|claude|gemini|anthropic", re.I
)


def check(request: Request) -> list[Finding]:
    findings: list[Finding] = []
    for check_one in (_pairing, _late_pair, _duplicates, _malformed, _roles, _empty):
        findings.extend(check_one(request))
    return findings


def call_runs(request: Request):
    """(head calls, results run) for every run of tool results, in order.

    The head is the message right before the run (for OpenAI Responses, the
    run of `function_call` items before it, which is one model turn).
    """
    messages = request.messages
    position = 0
    while position < len(messages):
        if messages[position].role != "tool":
            position += 1
            continue
        end = position
        while end < len(messages) and messages[end].role == "tool":
            end += 1
        yield _head(request, position), messages[position:end]
        position = end


def _head(request: Request, run_start: int) -> list[Message]:
    messages = request.messages
    head = []
    at = run_start - 1
    while at >= 0 and messages[at].role == "assistant" and messages[at].calls:
        head.insert(0, messages[at])
        if request.format != "openai.responses":
            break
        at -= 1
    return head


def _pairing(request: Request) -> list[Finding]:
    findings = []
    answered_heads = set()
    for head, run in call_runs(request):
        call_ids = {c.tool_call_id for m in head for c in m.calls}
        if not head and request.extra.get("previous_response_id"):
            continue  # the calls live in the stored previous response
        for message in run:
            for result in message.results:
                if result.tool_call_id not in call_ids:
                    where = (
                        f"after message {head[-1].index}, whose calls are {', '.join(sorted(call_ids))}"
                        if head
                        else "with no assistant tool call right before its run of results"
                    )
                    findings.append(
                        Finding(
                            "TC001",
                            ERROR,
                            f"Message {message.index} answers tool call "
                            f"{result.tool_call_id or '(no id)'} {where}.",
                            message.index,
                            result.tool_call_id,
                        )
                    )
        answered = {r.tool_call_id for m in run for r in m.results}
        for message in head:
            answered_heads.add(id(message))
            for call in message.calls:
                if call.tool_call_id not in answered:
                    findings.append(_unanswered(message, call.tool_call_id, run[-1].index))
    # Calls with no results at all: fine at the very end of the request (not
    # answered yet), an error once any other message follows.
    messages = request.messages
    for position, message in enumerate(messages):
        if not message.calls or id(message) in answered_heads:
            continue
        later = messages[position + 1 :]
        if request.format == "openai.responses":
            later = [m for m in later if not (m.role == "assistant" and m.calls)]
        if later:
            for call in message.calls:
                findings.append(_unanswered(message, call.tool_call_id, later[0].index))
    return findings


def _late_pair(request: Request) -> list[Finding]:
    """TL209: a call/result pair sits between another call message and its results (a
    stale pair re-added mid-turn instead of at a turn boundary). Responses pairs by
    id alone, so the order does not matter there."""
    if request.format == "openai.responses":
        return []
    findings = []
    position = {id(m): i for i, m in enumerate(request.messages)}
    for head, run in call_runs(request):
        if len(head) != 1:
            continue
        at = position[id(head[0])] - 1
        while at >= 0 and request.messages[at].role == "tool":
            at -= 1  # results of the earlier call message that came before the pair
        if at < 0 or not request.messages[at].calls:
            continue
        opened = request.messages[at]
        open_ids = {c.tool_call_id for c in opened.calls}
        late = [r.tool_call_id for m in run for r in m.results if r.tool_call_id in open_ids]
        if not late:
            continue
        inserted = head[0].calls[0].tool_call_id
        findings.append(
            Finding(
                "TL209",
                ERROR,
                f"The pair of tool call {inserted} (message {head[0].index}) sits between message "
                f"{opened.index}, which calls {late[0]}, and that call's result: it splits an "
                "open call from its result, so the provider refuses the request.",
                head[0].index,
                inserted,
            )
        )
    return findings


def _unanswered(message: Message, tool_call_id: str, next_index: int) -> Finding:
    return Finding(
        "TC002",
        ERROR,
        f"Tool call {tool_call_id} in message {message.index} has no result before "
        f"message {next_index}.",
        message.index,
        tool_call_id,
    )


def duplicate_id(tool_call_id: str, message_index: int, earlier: int | None = None) -> Finding:
    where = f"message {earlier}" if earlier is not None else "an earlier message"
    return Finding(
        "TC003",
        WARNING,
        f"Tool call id {tool_call_id} in message {message_index} was already used in {where}: "
        "results pair ambiguously.",
        message_index,
        tool_call_id,
    )


def _duplicates(request: Request) -> list[Finding]:
    seen: dict[str, int] = {}
    findings = []
    for message in request.messages:
        for call in message.calls:
            if not call.tool_call_id or call.tool_call_id.startswith(("gemini:", "function:")):
                continue
            if call.tool_call_id in seen:
                findings.append(duplicate_id(call.tool_call_id, message.index, seen[call.tool_call_id]))
            else:
                seen[call.tool_call_id] = message.index
    return findings


def _malformed(request: Request) -> list[Finding]:
    fmt, findings = request.format, []
    for message in request.messages:
        if "empty_tool_calls" in message.flags:
            findings.append(
                Finding("TC004", ERROR, f"Message {message.index} has an empty tool_calls array.", message.index)
            )
        for call in message.calls:
            problem, severity = _call_problem(fmt, call)
            if problem:
                findings.append(
                    Finding(
                        "TC004",
                        severity,
                        f"Tool call {call.tool_call_id or '(no id)'} in message {message.index}: {problem}.",
                        message.index,
                        call.tool_call_id,
                    )
                )
    return findings


def _call_problem(fmt: str, call) -> tuple[str, str]:
    if fmt in ("openai.chat", "openai.responses"):
        if not call.arguments_is_string:
            return "arguments must be a JSON string, not an object", ERROR
        if not _OPENAI_NAME.match(call.name):
            return f"name {call.name!r} breaks the pattern ^[a-zA-Z0-9_-]{{1,64}}$", ERROR
        if fmt == "openai.chat" and len(call.tool_call_id) > _OPENAI_ID_MAX:
            return f"id is {len(call.tool_call_id)} characters, over OpenAI's {_OPENAI_ID_MAX}", ERROR
        try:
            arguments = json.loads(call.arguments)
        except ValueError:
            return "arguments are not valid JSON", WARNING
        if not isinstance(arguments, dict):
            return "arguments are JSON but not an object", WARNING
    elif fmt == "anthropic.messages":
        if not _ANTHROPIC_ID.match(call.tool_call_id):
            return "id breaks Anthropic's pattern ^[a-zA-Z0-9_-]+$", ERROR
        if not _OPENAI_NAME.match(call.name):
            return f"name {call.name!r} breaks the pattern ^[a-zA-Z0-9_-]{{1,64}}$", ERROR
        if call.arguments_is_string or not call.arguments.startswith("{"):
            return "input must be a JSON object", WARNING
    elif fmt == "gemini":
        if not _GEMINI_NAME.match(call.name):
            return f"name {call.name!r} breaks Gemini's function name rules", ERROR
        if call.arguments_is_string or not call.arguments.startswith("{"):
            return "args should be a JSON object, not a string", WARNING
    return "", ""


# Roles each format accepts, as the provider receives them (provider_role).
_PROVIDER_ROLES = {
    "openai.chat": {"system", "developer", "user", "assistant", "tool", "function"},
    "openai.responses": {"system", "developer", "user", "assistant"},
    "anthropic.messages": {"user", "assistant"},
    "gemini": {"user", "model", ""},  # the role may be left out
}


def _roles(request: Request) -> list[Finding]:
    allowed = _PROVIDER_ROLES[request.format]
    findings = []
    target = request.extra.get("target_provider", "")
    no_developer = request.format in ("openai.chat", "openai.responses") and (
        _NO_DEVELOPER.search(target or request.model)
    )
    for message in request.messages:
        if request.format == "openai.responses" and message.provider_role != message.role:
            continue  # function_call, reasoning and other item types carry no role
        problem = ""
        if message.provider_role not in allowed:
            problem = f"role {message.provider_role!r} is not accepted by {request.format}"
        elif message.provider_role == "developer" and no_developer:
            problem = f"role 'developer' is not supported by {target or request.model}"
        if problem:
            findings.append(Finding("TC005", ERROR, f"Message {message.index}: {problem}.", message.index))
    return findings


def _empty(request: Request) -> list[Finding]:
    findings = []
    last = request.messages[-1] if request.messages else None
    for message in request.messages:
        problem = ""
        blank = not message.text.strip() and all(p.kind == "text" for p in message.parts)
        if request.format == "openai.chat":
            if message.provider_role == "tool" and message.results and message.results[0].raw is None:
                problem = "a tool message must have content (null is refused)"
            elif message.role == "assistant" and not message.parts:
                problem = "an assistant message needs content or tool_calls"
        elif request.format == "anthropic.messages" and message.role != "tool" and blank:
            # Only a final assistant message may be empty.
            if not (message is last and message.role == "assistant"):
                problem = "all messages but a final assistant one need non-empty content"
        if problem:
            findings.append(Finding("TC006", ERROR, f"Message {message.index}: {problem}.", message.index))
    return findings
