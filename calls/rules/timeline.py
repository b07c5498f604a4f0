"""TL rules: what went wrong between requests of one call.

Pure functions over plain facts that ingest gathers about one request
against the previous one (which slots are pending, which messages changed
or vanished), so each costs what the request changed, not the history.
"""

import json
import re
from dataclasses import dataclass

from . import ERROR, WARNING, Finding


@dataclass(frozen=True, slots=True)
class Change:
    """A position whose message differs from the previous request's."""

    position: int
    before_results: tuple[str, ...]  # tool-call ids the old message answered
    before_placeholder: bool  # the old message was a placeholder result
    after_results: tuple[str, ...]
    same_content: bool = False  # equal but for transport-only keys (cache_control)


def answered_while_pending(new_user_positions: list[int], pending: list[str]) -> list[Finding]:
    """TL202: the caller spoke and the model was asked again while a tool still ran."""
    if not new_user_positions or not pending:
        return []
    position = new_user_positions[0]
    return [
        Finding(
            "TL202",
            WARNING,
            f"Message {position} brings new caller words while tool call {tool_call_id} "
            "still holds a 'running' placeholder: the model answers without its result.",
            position,
            tool_call_id,
        )
        for tool_call_id in pending
    ]


def history_rewritten(
    changes: list[Change], previous_count: int, current_count: int
) -> list[Finding]:
    """TL206: the request does not extend the previous one (a settled placeholder is fine)."""
    edited = [
        c.position
        for c in changes
        if c.position < previous_count
        and not c.same_content
        and not (c.before_placeholder and c.before_results and c.before_results == c.after_results)
    ]
    if current_count < previous_count and not edited:
        edited = [current_count]
    if not edited:
        return []
    first = min(edited)
    what = (
        f"{previous_count - current_count} message(s) fewer"
        if current_count < previous_count
        else f"{len(edited)} message(s) edited or moved"
    )
    return [
        Finding(
            "TL206",
            WARNING,
            f"This request rewrites the history from message {first} ({what}) instead of "
            "extending the previous request.",
            first,
        )
    ]


def call_deleted_result_kept(vanished: list[str], results_present: set[str]) -> list[Finding]:
    """TL208: a call message disappeared while its result stayed (the 400 on every later request)."""
    return [
        Finding(
            "TL208",
            ERROR,
            f"The assistant message holding tool call {tool_call_id} is gone from this request "
            "but its result is still sent: the provider refuses the orphan, now and on every "
            "later request.",
            None,
            tool_call_id,
        )
        for tool_call_id in vanished
        if tool_call_id in results_present
    ]


def poisoned_history(repeated: list[tuple[str, str, int | None, int]]) -> list[Finding]:
    """TL210: an error-level structural finding of an earlier turn is still in the history.

    `repeated`: (code, tool_call_id, message_index, first_turn) of each such finding.
    """
    return [
        Finding(
            "TL210",
            WARNING,
            f"The {code} error first seen at turn {first_turn} is still in this request: "
            "every request that repeats it fails the same way.",
            message_index,
            tool_call_id,
        )
        for code, tool_call_id, message_index, first_turn in repeated
    ]


SIDE_EFFECT = r"book|reserve|schedule|create|cancel|pay|charge|refund|transfer|send|submit|order"
NEVER_SETTLED_AFTER = 2  # later requests a still-running placeholder may survive


def canonical_arguments(arguments: str) -> str | None:
    """Arguments in a form where key order and spacing do not matter (None if not JSON)."""
    try:
        return json.dumps(json.loads(arguments), sort_keys=True, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        return None


def never_settled(pending: list[tuple[str, int]], number: int, ended: bool) -> list[Finding]:
    """TL201: (tool_call_id, pending since turn) still pending at the end or N requests on."""
    return [
        Finding(
            "TL201",
            WARNING,
            f"Tool call {tool_call_id} still holds its 'running' placeholder "
            + ("when the call ended" if ended else f"{number - since} requests after turn {since}")
            + ": the model never saw its result in the slot.",
            None,
            tool_call_id,
        )
        for tool_call_id, since in pending
        if ended or number - since >= NEVER_SETTLED_AFTER
    ]


@dataclass(frozen=True, slots=True)
class EarlierCall:
    tool_call_id: str
    turn: int
    state: str  # the slot's state now: issued, pending, settled, result, vanished
    empty_result: bool


def repeated_call(
    tool_call_id: str,
    name: str,
    arguments: str,
    earlier: list[EarlierCall],
    side_effect_pattern: str = SIDE_EFFECT,
) -> list[Finding]:
    """TL204 (same side-effecting call twice) and TL205 (called again after an unfinished slot)."""
    findings = []
    same = [e for e in earlier if e.tool_call_id != tool_call_id]
    if not same:
        return findings
    first = same[0]
    if re.search(side_effect_pattern, name, re.I):
        findings.append(
            Finding(
                "TL204",
                WARNING,
                f"{name} was called again as {tool_call_id} with the same arguments as "
                f"{first.tool_call_id} (turn {first.turn}): the action may happen twice.",
                None,
                tool_call_id,
            )
        )
    unfinished = [e for e in same if e.state in ("pending", "settled", "vanished") or e.empty_result]
    if unfinished:
        e = unfinished[0]
        findings.append(
            Finding(
                "TL205",
                WARNING,
                f"{name} was called again as {tool_call_id} because the slot of {e.tool_call_id} "
                f"(turn {e.turn}) looked unfinished ({'empty' if e.empty_result else e.state}).",
                None,
                tool_call_id,
            )
        )
    return findings


def hold_timeout(tool_call_ids: list[str]) -> list[Finding]:
    """TL207: a hold gave way by timeout."""
    return [
        Finding(
            "TL207",
            WARNING,
            f"The caller's turn was held for tool call {tool_call_id} and released by timeout, "
            "not by its result.",
            None,
            tool_call_id,
        )
        for tool_call_id in tool_call_ids
    ]


def silent_response(body) -> list[Finding]:
    """RS301: a model response with no text and no tool calls."""
    if not isinstance(body, dict):
        return []
    texts, calls, finish = _response_parts(body)
    if texts.strip() or calls:
        return []
    reason = f" (finish reason {finish})" if finish else ""
    return [
        Finding(
            "RS301",
            WARNING,
            f"The model answered with no text and no tool call{reason}: the caller hears silence.",
        )
    ]


def _response_parts(body: dict) -> tuple[str, int, str]:
    """(text, tool call count, finish reason) of an OpenAI, Anthropic or Gemini response."""
    choices = body.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message") if isinstance(choices[0].get("message"), dict) else {}
        audio = message.get("audio") if isinstance(message.get("audio"), dict) else {}
        said = [message.get("content"), message.get("refusal"), audio.get("transcript")]
        text = "".join(t for t in said if isinstance(t, str))
        calls = message.get("tool_calls") if isinstance(message.get("tool_calls"), list) else []
        return text, len(calls), str(choices[0].get("finish_reason") or "")
    if isinstance(body.get("output"), list):  # OpenAI Responses
        text, calls = "", 0
        for item in body["output"]:
            if isinstance(item, dict) and item.get("type") == "function_call":
                calls += 1
            elif isinstance(item, dict) and isinstance(item.get("content"), list):
                for part in item["content"]:
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        text += part["text"]
        return text, calls, str(body.get("status") or "")
    if isinstance(body.get("content"), list):  # Anthropic
        blocks = [b for b in body["content"] if isinstance(b, dict)]
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str))
        calls = sum(1 for b in blocks if b.get("type") == "tool_use")
        return text, calls, str(body.get("stop_reason") or "")
    candidates = body.get("candidates")
    if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):  # Gemini
        content = candidates[0].get("content") if isinstance(candidates[0].get("content"), dict) else {}
        raw_parts = content.get("parts") if isinstance(content.get("parts"), list) else []
        parts = [p for p in raw_parts if isinstance(p, dict)]
        text = "".join(p.get("text", "") for p in parts if isinstance(p.get("text"), str) and not p.get("thought"))
        calls = sum(1 for p in parts if "functionCall" in p)
        return text, calls, str(candidates[0].get("finishReason") or "")
    return "", 1, ""  # an unknown shape: do not guess silence


_TRANSPORT_KEYS = {"cache_control"}


def without_transport_keys(value):
    """A message without keys that steer the provider's cache, not what the model reads
    (moving Anthropic's cache breakpoint to the newest message is no rewrite)."""
    if isinstance(value, dict):
        return {k: without_transport_keys(v) for k, v in value.items() if k not in _TRANSPORT_KEYS}
    if isinstance(value, list):
        return [without_transport_keys(v) for v in value]
    return value
