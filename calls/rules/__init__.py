"""The rule catalogue: what Callscope flags in a request, and how badly.

Codes are a public interface (API answers, URLs of rule pages, project
settings): never renumber or reuse one. Rules are pure functions over the
normalised model (calls.normalize); each family lives in its own module.
"""

from dataclasses import dataclass

ERROR = "error"  # the provider rejects the request
WARNING = "warning"  # accepted, but the model is likely to misread
INFO = "info"

SEVERITY_ORDER = {ERROR: 0, WARNING: 1, INFO: 2}


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    slug: str
    severity: str  # the default; a finding may carry another (TC004, TR101)
    summary: str


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    severity: str
    message: str  # one sentence, naming the message index and tool_call_id
    message_index: int | None = None  # index in the provider's own array
    tool_call_id: str = ""
    detail: tuple = ()  # (key, value) pairs, e.g. (("layers", 3),)


CATALOGUE = {
    rule.code: rule
    for rule in [
        Rule("TC001", "orphan-tool-result", ERROR, "A tool result answers no call of the message right before its run of results."),
        Rule("TC002", "unanswered-tool-call", ERROR, "A tool call is not answered before the next message that is not a result."),
        Rule("TC003", "duplicate-tool-call-id", WARNING, "Two tool calls in the history share one id."),
        Rule("TC004", "malformed-tool-call", ERROR, "A tool call the provider refuses or misreads: empty tool_calls, arguments that are not a JSON object, an id or name breaking the provider's pattern."),
        Rule("TC005", "unsupported-role", ERROR, "A role the target provider does not accept."),
        Rule("TC006", "empty-content", ERROR, "Empty content where the provider forbids it."),
        Rule("TR101", "placeholder-result", INFO, "A tool slot holds a placeholder, not a result."),
        Rule("TR102", "result-outside-slot", WARNING, "A tool result was delivered as a developer, system or user message."),
        Rule("TR103", "double-encoded-json", WARNING, "JSON text inside a JSON string: the model reads escaped quotes."),
        Rule("TR104", "escaped-non-latin", WARNING, "Non-Latin text sent as literal \\uXXXX escapes."),
        Rule("TR105", "empty-result", WARNING, "A tool result that says nothing."),
        Rule("TL201", "placeholder-never-settled", WARNING, "A slot still held a still-running placeholder when the call ended, or several requests later."),
        Rule("TL202", "answered-while-pending", WARNING, "A request went out with new caller words while a slot held a still-running placeholder."),
        Rule("TL203", "result-lost", WARNING, "A result that was produced is carried by no later request, in any role."),
        Rule("TL204", "repeated-side-effect", WARNING, "The same side-effecting tool was called twice with the same arguments."),
        Rule("TL205", "recalled-after-unfinished-slot", WARNING, "A tool was called again while its earlier slot looked unfinished."),
        Rule("TL206", "history-rewritten", WARNING, "A request does not extend the previous one: messages deleted, edited or reordered."),
        Rule("TL207", "hold-timeout", WARNING, "A hold gave way by timeout, or a placeholder stayed pending past the project's threshold."),
        Rule("TL208", "call-deleted-result-kept", ERROR, "A call message disappeared but its result stayed: every later request fails."),
        Rule("TL209", "late-pair-inside-open-call", ERROR, "A re-added call/result pair was inserted between another call message and its results."),
        Rule("TL210", "poisoned-history", WARNING, "A request repeats a structural error of an earlier one."),
        Rule("RS301", "silent-response", WARNING, "A model response with no text and no tool calls."),
        Rule("RS302", "spoken-text-dropped", WARNING, "A response had text and tool calls; the next request lost the text."),
        Rule("TP401", "chat-template-error", ERROR, "The chat template refuses the request (shown when rendering what an open-weight model sees)."),
    ]
}


def finding_json(
    code: str,
    severity: str,
    message: str,
    message_index: int | None,
    tool_call_id: str,
    detail: dict,
) -> dict:
    """A finding as the API shows it (ingest answers, /api/v1/check, the call API)."""
    return {
        "code": code,
        "name": CATALOGUE[code].slug,
        "severity": severity,
        "message": message,
        "message_index": message_index,
        "tool_call_id": tool_call_id,
        **({"detail": detail} if detail else {}),
    }
