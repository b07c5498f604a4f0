"""Running the rules on one request, looking only at what it changed.

A request re-sends the whole history, but only the messages it appended or
changed (and their neighbours, which the pairing rules need) can hold a new
finding, so the rules run on that window: analysis costs the same at turn
300 as at turn 3. A finding is keyed by the message it concerns; the caller
reports each key once per call, at the turn where it first appears.
"""

from dataclasses import dataclass

from .normalize import Request, normalize
from .projectrules import DEFAULT, Policy
from .requestbody import ITEMS_KEY, ParsedRequest
from . import rules
from .rules import SEVERITY_ORDER, Finding, results, structure

_REQUEST_FIELDS = (
    "model",
    "system",
    "instructions",
    "systemInstruction",
    "tools",
    "previous_response_id",
)


@dataclass(frozen=True, slots=True)
class Keyed:
    finding: Finding
    key: str  # stable across turns: code, tool call, and the concerned message's digest


def window_request(
    parsed: ParsedRequest, first_changed: int, target: str = ""
) -> tuple[Request, int]:
    """The request from just before `first_changed` to its end, and its offset.

    Starts one message early, then earlier while the window would start inside a
    run of results, so every result in it can see the call it answers.
    """
    start = max(0, first_changed - 1)
    while True:
        request = _normalize_slice(parsed, start)
        if target:
            request.extra["target_provider"] = target
        head = request.messages[0] if request.messages else None
        inside_run = head is not None and (
            head.role == "tool"
            or (parsed.format == "openai.responses" and head.role == "assistant" and head.calls)
        )
        if start == 0 or not inside_run:
            return request, start
        start = max(0, start - 4)


def _normalize_slice(parsed: ParsedRequest, start: int) -> Request:
    body = {key: value for key, value in parsed.meta.items() if key in _REQUEST_FIELDS}
    body[ITEMS_KEY[parsed.format]] = parsed.items[start:]
    return normalize(parsed.format, body, offset=start)


def analyse(
    parsed: ParsedRequest, changed_positions: list[int], policy: Policy = DEFAULT
) -> list[Keyed]:
    """Findings of the messages this request appended or changed, with their keys.

    `policy`: the project's target provider (for role rules; "" guesses it) and
    placeholder patterns."""
    if not changed_positions:
        return []
    request, _start = window_request(parsed, min(changed_positions), policy.target)
    # The window's messages carry their real indexes (normalize's offset).
    findings = structure.check(request) + results.check(request, policy.placeholders)
    keyed = []
    for finding in findings:
        digest = ""
        if finding.message_index is not None and finding.message_index < len(parsed.digests):
            digest = parsed.digests[finding.message_index]
        keyed.append(Keyed(finding, f"{finding.code}:{finding.tool_call_id}:{digest}"))
    return by_severity(keyed)


def by_severity(keyed: list[Keyed]) -> list[Keyed]:
    return sorted(
        keyed, key=lambda k: (SEVERITY_ORDER[k.finding.severity], k.finding.message_index or 0)
    )


def analyse_whole(parsed: ParsedRequest, policy: Policy = DEFAULT) -> list[Finding]:
    """Every finding of one request on its own (for /api/v1/check)."""
    request = normalize(parsed.format, {**parsed.meta, ITEMS_KEY[parsed.format]: parsed.items})
    if policy.target:
        request.extra["target_provider"] = policy.target
    findings = structure.check(request) + results.check(request, policy.placeholders)
    return sorted(findings, key=lambda f: (SEVERITY_ORDER[f.severity], f.message_index or 0))


def finding_json(finding: Finding) -> dict:
    f = finding
    return rules.finding_json(
        f.code, f.severity, f.message, f.message_index, f.tool_call_id, dict(f.detail)
    )
