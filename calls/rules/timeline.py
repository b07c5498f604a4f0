"""TL rules: what went wrong between requests of one call.

Pure functions over plain facts that ingest gathers about one request
against the previous one (which slots are pending, which messages changed
or vanished), so each costs what the request changed, not the history.
"""

import json
import re
from dataclasses import dataclass

from ..responsebody import Response
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
PENDING_SECONDS = 30  # how long a placeholder may say "running" (TL207)


def canonical_arguments(arguments: str) -> str | None:
    """Arguments in a form where key order and spacing do not matter (None if not JSON)."""
    try:
        return json.dumps(json.loads(arguments), sort_keys=True, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        return None


def never_settled(
    pending: list[tuple[str, int]], number: int, ended: bool, after: int = NEVER_SETTLED_AFTER
) -> list[Finding]:
    """TL201: (tool_call_id, pending since turn) still pending at the end or `after`
    requests on."""
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
        if ended or number - since >= after
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
    side_effect: re.Pattern = re.compile(SIDE_EFFECT, re.I),
) -> list[Finding]:
    """TL204 (same side-effecting call twice) and TL205 (called again after an unfinished slot)."""
    findings = []
    same = [e for e in earlier if e.tool_call_id != tool_call_id]
    if not same:
        return findings
    first = same[0]
    if side_effect.search(name):
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
    unfinished = [
        e for e in same if e.state in ("pending", "settled", "vanished", "lost") or e.empty_result
    ]
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


def silent_response(response: Response) -> list[Finding]:
    """RS301: a model response with no text and no tool calls."""
    if not response.known or response.text.strip() or response.calls:
        return []
    reason = f" (finish reason {response.finish})" if response.finish else ""
    return [
        Finding(
            "RS301",
            WARNING,
            f"The model answered with no text and no tool call{reason}: the caller hears silence.",
        )
    ]


def spoken_text_dropped(
    response: Response, response_turn: int, carried_ids: set[str], assistant_texts: list[str]
) -> list[Finding]:
    """RS302: the response said something and called tools; the next request carries the
    calls but not the words (`assistant_texts`: the text of its new assistant messages).

    A prefix is enough: a framework that keeps only what was spoken before an
    interruption keeps the words the caller heard."""
    spoken = " ".join(response.text.split())
    ids = [c.tool_call_id for c in response.calls if c.tool_call_id in carried_ids]
    if not spoken or not ids:
        return []
    kept = [" ".join(t.split()) for t in assistant_texts]
    if any(t and (t in spoken or spoken in t) for t in kept):
        return []
    return [
        Finding(
            "RS302",
            WARNING,
            f"The response to turn {response_turn} said {_clip(spoken)!r} and called {ids[0]}; "
            "this request carries the call without those words, so the model may say them again.",
            None,
            ids[0],
        )
    ]


def result_lost(tool_call_id: str, since: str) -> list[Finding]:
    """TL203: a result that was produced is carried by no message of this request."""
    return [
        Finding(
            "TL203",
            WARNING,
            f"The result of tool call {tool_call_id} ({since}) is carried by no message of this "
            "request, in any role: the model no longer knows the tool ran.",
            None,
            tool_call_id,
        )
    ]


def pending_too_long(tool_call_id: str, seconds: float, threshold: int) -> list[Finding]:
    """TL207, second half: a placeholder said "running" past the project's threshold."""
    if seconds < threshold:
        return []
    return [
        Finding(
            "TL207",
            WARNING,
            f"Tool call {tool_call_id} held its 'running' placeholder for {seconds:.0f} s, "
            f"longer than this project's {threshold} s.",
            None,
            tool_call_id,
            (("seconds", round(seconds, 1)), ("threshold", threshold)),
        )
    ]


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_TRANSPORT_KEYS = {"cache_control"}


def without_transport_keys(value):
    """A message without keys that steer the provider's cache, not what the model reads
    (moving Anthropic's cache breakpoint to the newest message is no rewrite)."""
    if isinstance(value, dict):
        return {k: without_transport_keys(v) for k, v in value.items() if k not in _TRANSPORT_KEYS}
    if isinstance(value, list):
        return [without_transport_keys(v) for v in value]
    return value
