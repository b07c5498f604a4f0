"""TL rules: what went wrong between requests of one call.

Pure functions over plain facts that ingest gathers about one request
against the previous one (which slots are pending, which messages changed
or vanished), so each costs what the request changed, not the history.
"""

from dataclasses import dataclass

from . import ERROR, WARNING, Finding


@dataclass(frozen=True, slots=True)
class Change:
    """A position whose message differs from the previous request's."""

    position: int
    before_results: tuple[str, ...]  # tool-call ids the old message answered
    before_placeholder: bool  # the old message was a placeholder result
    after_results: tuple[str, ...]


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
