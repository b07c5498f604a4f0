"""What each rule page says: why a finding matters on a live call, a bad and a good example,
what the providers answer, and the usual fix.

Keyed by the public rule codes of `calls.rules.CATALOGUE`. Provider error texts are quoted
verbatim from the research notes (PROVIDER-RULES.md): `call_…`, `toolu_…`, `N`, `M`, `K` and
`L` stand for the variable parts. Where no provider rejects the request, or no verbatim text
was captured, `provider_errors` is empty and the page says so; never invent a text here.

Examples are excerpts in OpenAI Chat Completions format unless the rule is about another shape
(events, responses). Most are JSON arrays of messages; timeline rules show several requests as
`{"request": n, "messages": [...]}`. Long texts (Pipecat's async descriptions) are cut to "...".
Plain text only: the templates autoescape everything.
"""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RuleDoc:
    why: str
    bad: str
    good: str
    provider_errors: tuple[tuple[str, str], ...]  # (provider, exact error text)
    fix: str


# Verbatim provider texts used by more than one rule (PROVIDER-RULES.md, section 2).
_OPENAI_UNANSWERED = (
    "OpenAI Chat Completions",
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: call_…",
)  # CC-01
_OPENAI_NO_PRECEDING_CALL = (
    "OpenAI Chat Completions",
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'.",
)  # CC-02 (the misspelling "preceeding" is OpenAI's)
_OPENAI_ID_NOT_FOUND = (
    "OpenAI Chat Completions",
    "Invalid parameter: 'tool_call_id' of 'call_…' not found in 'tool_calls' of previous "
    "message.",
)  # CC-03
_ANTHROPIC_UNEXPECTED_RESULT = (
    "Anthropic Messages",
    "messages.N.content.M: unexpected `tool_use_id` found in `tool_result` blocks: toolu_…. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
)  # AN-03
_ANTHROPIC_MISSING_RESULT = (
    "Anthropic Messages",
    "messages.N: `tool_use` ids were found without `tool_result` blocks immediately after: "
    "toolu_…. Each `tool_use` block must have a corresponding `tool_result` block in the next "
    "message.",
)  # AN-01
_RESPONSES_NO_CALL = (
    "OpenAI Responses",
    "No tool call found for function call output with call_id call_….",
)  # RS-02
_GEMINI_COUNTS = (
    "Google Gemini",
    "Please ensure that the number of function response parts is equal to the number of "
    "function call parts of the function call turn.",
)  # GM-03


DOCS: dict[str, RuleDoc] = {
    # ---- Structure: the provider rejects the request ------------------------------------
    "TC001": RuleDoc(
        why=(
            "A tool result sits where no call of the message before it asked for it. The usual "
            "story is an interruption: the framework dropped the assistant message that carried "
            "the call, then the slow tool finished and its result was appended anyway. OpenAI, "
            "Anthropic and Gemini answer with a 400, so the caller hears silence, and because "
            "the orphan stays in the history every later request of the call fails the same way."
        ),
        bad=r"""[
  {"role": "user", "content": "Is Friday afternoon free?"},
  {"role": "user", "content": "Wait, actually I need Monday."},
  {"role": "tool", "tool_call_id": "call_njVG", "content": "{\"outcome\": \"produced\", \"day\": \"Friday\", \"free\": [\"15:00\", \"15:30\"]}"}
]""",
        good=r"""[
  {"role": "user", "content": "Is Friday afternoon free?"},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_njVG", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\", \"part_of_day\": \"afternoon\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_njVG", "content": "{\"outcome\": \"produced\", \"day\": \"Friday\", \"free\": [\"15:00\", \"15:30\"]}"},
  {"role": "user", "content": "Wait, actually I need Monday."}
]""",
        provider_errors=(
            _OPENAI_NO_PRECEDING_CALL,
            _OPENAI_ID_NOT_FOUND,
            (
                "DeepSeek (OpenAI-compatible)",
                "Messages with role 'tool' must be a response to a preceding message with "
                "'tool_calls'",
            ),
            _ANTHROPIC_UNEXPECTED_RESULT,
            (
                "Google Gemini",
                "Please ensure that function response turn comes immediately after a function "
                "call turn.",
            ),
            _RESPONSES_NO_CALL,
        ),
        fix=(
            "Drop a call and its result together, or keep both: a result may only follow the "
            "assistant message that carries its call. If a stale result must reach the model, "
            "re-add the whole call/result pair, at a turn boundary. When trimming history for the "
            "context window, cut before an assistant message with `tool_calls`, never between it "
            "and its results."
        ),
    ),
    "TC002": RuleDoc(
        why=(
            "The model asked for a tool and the request went out without the answer, typically "
            "because the caller spoke while the tool ran and their words were appended right "
            "after the open call. Every provider refuses it with a 400, so the agent goes silent "
            "mid-call, and a history that keeps the open call fails on every later turn too. A "
            "call in the last message of a request is simply not answered yet and is not flagged."
        ),
        bad=r"""[
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_H1fW", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Monday\"}"}}
  ]},
  {"role": "user", "content": "Hello? Are you still there?"}
]""",
        good=r"""[
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_H1fW", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Monday\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_H1fW", "content": "{\"outcome\": \"produced\", \"day\": \"Monday\", \"free\": [\"10:00\"]}"},
  {"role": "user", "content": "Hello? Are you still there?"}
]""",
        provider_errors=(
            _OPENAI_UNANSWERED,
            (
                "DeepSeek (OpenAI-compatible)",
                "… responding to each 'tool_call_id'. (insufficient tool messages following "
                "tool_calls message)",
            ),
            (
                "DashScope / Qwen (OpenAI-compatible)",
                '<400> InternalError.Algo.InvalidParameter: An assistant message with '
                '"tool_calls" must be followed by tool messages …',
            ),
            _ANTHROPIC_MISSING_RESULT,
            (
                "Anthropic Messages",
                "messages.N: Did not find K `tool_result` block(s) at the beginning of this "
                "message. Messages following `tool_use` blocks must begin with a matching number "
                "of `tool_result` blocks.",
            ),
            _GEMINI_COUNTS,
            (
                "Google Gemini",
                "Please ensure that function call turn comes immediately after a user turn or "
                "after a function response turn.",
            ),
            ("OpenAI Responses", "No tool output found for function call call_…."),
            (
                "LangGraph (checks before sending, INVALID_CHAT_HISTORY)",
                "Found AIMessages with tool_calls that do not have a corresponding ToolMessage. "
                "Here are the first few of those tool calls: […]",
            ),
        ),
        fix=(
            "Answer every call before anything else is appended: put its result in a `tool` "
            "message right after the call message, then the caller's new words. If the turn is "
            "interrupted, either give the call an explicit result (\"Not checked: the caller "
            "interrupted\") or drop the call message entirely. For Anthropic, the `tool_result` "
            "blocks must come first in the next user message, before any text."
        ),
    ),
    "TC003": RuleDoc(
        why=(
            "Results are paired to calls by id. When two calls share one, often because a "
            "server numbers calls `call_0`, `call_1` afresh every turn, a result can be read as "
            "the answer to the wrong call: the model may take the availability check for the "
            "booking confirmation. Whether OpenAI rejects duplicate ids was not confirmed, so "
            "this is a warning; positional templates pair silently and wrongly."
        ),
        bad=r"""[
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_0", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_0", "content": "{\"outcome\": \"produced\", \"day\": \"Friday\", \"free\": [\"15:00\", \"15:30\"]}"},
  {"role": "user", "content": "Half past three, please."},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_0", "type": "function", "function": {"name": "book_appointment", "arguments": "{\"day\": \"Friday\", \"time\": \"15:30\", \"patient_name\": \"Ravi Kumar\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_0", "content": "{\"outcome\": \"booked\", \"confirmation\": \"APT-7731\"}"}
]""",
        good=r"""[
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_3q4t", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_3q4t", "content": "{\"outcome\": \"produced\", \"day\": \"Friday\", \"free\": [\"15:00\", \"15:30\"]}"},
  {"role": "user", "content": "Half past three, please."},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_Bk29", "type": "function", "function": {"name": "book_appointment", "arguments": "{\"day\": \"Friday\", \"time\": \"15:30\", \"patient_name\": \"Ravi Kumar\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_Bk29", "content": "{\"outcome\": \"booked\", \"confirmation\": \"APT-7731\"}"}
]""",
        provider_errors=(),
        fix=(
            "Keep the ids the provider generated. If your server or framework makes its own, "
            "make them unique across the whole call (a random suffix or a per-call counter), "
            "not per turn."
        ),
    ),
    "TC004": RuleDoc(
        why=(
            "A malformed call in the history is rejected the moment it is re-sent, so one bad "
            "turn can silence the rest of the call. Typical causes: an empty `tool_calls` array "
            "left behind by a framework, ids that are too long or come from another provider, "
            "tool names with dots or spaces. Arguments that are not a JSON object are accepted "
            "by OpenAI but misread by the model (a warning), and fail on vLLM or after conversion "
            "to Anthropic."
        ),
        bad=r"""[
  {"role": "assistant", "content": "One moment, please.", "tool_calls": []},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_Bk29", "type": "function", "function": {"name": "clinic.book appointment", "arguments": "{\"day\": \"Friday\", \"time\": 15:30"}}
  ]},
  {"role": "tool", "tool_call_id": "call_Bk29", "content": "{\"outcome\": \"booked\", \"confirmation\": \"APT-7731\"}"}
]""",
        good=r"""[
  {"role": "assistant", "content": "One moment, please."},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_Bk29", "type": "function", "function": {"name": "book_appointment", "arguments": "{\"day\": \"Friday\", \"time\": \"15:30\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_Bk29", "content": "{\"outcome\": \"booked\", \"confirmation\": \"APT-7731\"}"}
]""",
        provider_errors=(
            (
                "OpenAI Chat Completions",
                "Invalid 'messages[N].tool_calls': empty array. Expected an array with minimum "
                "length 1, but got an empty array instead.",
            ),
            ("Qwen (OpenAI-compatible)", "Empty tool_calls is not supported in message"),
            (
                "OpenAI Chat Completions",
                "Invalid 'messages[N].tool_calls[0].id': string too long. Expected a string with "
                "maximum length 40, but got a string with length L instead.",
            ),
            (
                "OpenAI Chat Completions",
                "Invalid 'tools[0].function.name': string does not match pattern. Expected a "
                "string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
            ),
            (
                "Anthropic Messages",
                "messages.N.content.M.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
            ),
            (
                "Anthropic Messages",
                "tools.7.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
            ),
            (
                "Google Gemini",
                "GenerateContentRequest.tools[0].function_declarations[18].name: Invalid function "
                "name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, "
                "0-9), underscores (_), dots (.) or dashes (-), with a maximum length of 64.",
            ),
            (
                "Mistral chat templates (open-weight servers)",
                "Tool call IDs should be alphanumeric strings with length 9!",
            ),
        ),
        fix=(
            "Omit `tool_calls` when there are none instead of sending `[]`. Keep ids short "
            "(at most 40 characters for OpenAI, 9 alphanumerics for Mistral templates) and "
            "matching `^[a-zA-Z0-9_-]+$`, and name tools with letters, digits, `_` and `-` only. "
            "Send `arguments` as a JSON string holding an object (an object itself for Anthropic "
            "`input` and Gemini `args`), remapping ids and decoding arguments when converting "
            "between providers."
        ),
    ),
    "TC005": RuleDoc(
        why=(
            "A role the target does not know is refused outright: `developer` on DeepSeek, "
            "Mistral or older OpenAI reasoning models, `system` inside Anthropic's `messages`, "
            "anything but `user` and `model` on Gemini. Some open-weight servers drop the message "
            "silently instead, so the instruction or the tool result it carried never reaches the "
            "model. Pipecat delivers async tool results as `developer` messages, so a role "
            "problem often hides a result."
        ),
        bad=r"""{
  "model": "deepseek-chat",
  "messages": [
    {"role": "developer", "content": "You are the clinic's receptionist. Answer briefly."},
    {"role": "user", "content": "Is Friday afternoon free?"}
  ]
}""",
        good=r"""{
  "model": "deepseek-chat",
  "messages": [
    {"role": "system", "content": "You are the clinic's receptionist. Answer briefly."},
    {"role": "user", "content": "Is Friday afternoon free?"}
  ]
}""",
        provider_errors=(
            (
                "OpenAI Chat Completions (o1-mini / o1-preview era)",
                "Unsupported value: 'messages[0].role' does not support 'developer' with this "
                "model.",
            ),
            (
                "OpenAI-compatible gateways",
                "developer is not one of ['system', 'assistant', 'user', 'tool', 'function'] - "
                "'messages.[0].role'",
            ),
            (
                "Anthropic Messages",
                'messages: Unexpected role "system". The Messages API accepts a top-level '
                '`system` parameter, not "system" as an input message role.',
            ),
            ("Google Gemini", "Please use a valid role: user, model."),
            ("Qwen3 via vLLM (open-weight)", "Unexpected message role."),
        ),
        fix=(
            "Map roles to what the target accepts before sending: `developer` to `system` where "
            "it is not supported, instructions to Anthropic's top-level `system` parameter, "
            "Gemini function responses to `user` contents. Deliver tool results in the tool slot, "
            "not as developer messages (see TR102)."
        ),
    ),
    "TC006": RuleDoc(
        why=(
            "A tool that returned nothing often becomes `content: null`, and OpenAI rejects the "
            "whole request; Anthropic rejects any non-final message with empty content. The "
            "caller hears nothing, and since the empty message stays in the history every later "
            "request fails as well."
        ),
        bad=r"""[
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_Bk29", "type": "function", "function": {"name": "book_appointment", "arguments": "{\"day\": \"Friday\", \"time\": \"15:30\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_Bk29", "content": null}
]""",
        good=r"""[
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_Bk29", "type": "function", "function": {"name": "book_appointment", "arguments": "{\"day\": \"Friday\", \"time\": \"15:30\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_Bk29", "content": "{\"outcome\": \"not_booked\", \"reason\": \"15:30 was taken a moment ago\"}"}
]""",
        provider_errors=(
            ("OpenAI Chat Completions", "Invalid value for 'content': expected a string, got null."),
            (
                "Anthropic Messages",
                "messages.N: all messages must have non-empty content except for the optional "
                "final assistant message",
            ),
            (
                "llama.cpp, older builds (assistant content null on a tool-call message)",
                "Expected 'content' to be a string or an array",
            ),
            (
                "Ollama OpenAI endpoint (assistant content null on a tool-call message)",
                "invalid message content type: <nil>",
            ),
        ),
        fix=(
            "Always write a string: serialise the tool's return value, and when there is none say "
            "so, e.g. `{\"status\": \"done\"}`. For Anthropic, leave out empty text blocks instead "
            "of sending `\"\"`."
        ),
    ),
    # ---- Results: accepted, but the model misreads ---------------------------------------
    "TR101": RuleDoc(
        why=(
            "The tool slot says `IN_PROGRESS` (or holds an async \"running\" payload) while the "
            "model answers, so it stalls, promises a result it never gets, or invents one. "
            "Terminal sentinels are worse: a bare `CANCELLED` reads as a statement about the "
            "booking, and the model may tell the caller their appointment was cancelled. While "
            "the tool is still running this is info; a slot settled on a sentinel is a warning."
        ),
        bad=r"""[
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_njVG", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\", \"part_of_day\": \"afternoon\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_njVG", "content": "CANCELLED"},
  {"role": "user", "content": "Wait, actually I need Monday."},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_H1fW", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Monday\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_H1fW", "content": "IN_PROGRESS"}
]""",
        good=r"""[
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_njVG", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\", \"part_of_day\": \"afternoon\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_njVG", "content": "{\"outcome\": \"not_run\", \"note\": \"Stopped because the caller changed the request. Nothing was booked or cancelled.\"}"},
  {"role": "user", "content": "Wait, actually I need Monday."},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_H1fW", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Monday\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_H1fW", "content": "{\"outcome\": \"produced\", \"day\": \"Monday\", \"free\": [\"10:00\"]}"}
]""",
        provider_errors=(),
        fix=(
            "Send the next request only once the slot has its result (Pipecat's sync tools, "
            "with the default `cancel_on_interruption=True`, overwrite `IN_PROGRESS` in place), "
            "or say in words that the tool is still running and must not be called again. "
            "Replace terminal sentinels with a sentence saying what did and did not happen."
        ),
    ),
    "TR102": RuleDoc(
        why=(
            "The real result reaches the model as a developer, system or user message while the "
            "tool slot still says the tool is running, so the model sees two stories about one "
            "call. Where the adapter turns `developer` into `user` (Anthropic, DeepSeek, Mistral "
            "and others without a developer role), the result even looks like something the "
            "caller said. Pipecat's async tools (`cancel_on_interruption=False`) work this way."
        ),
        bad=r"""[
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_3q4t", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\", \"part_of_day\": \"afternoon\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_3q4t", "content": "{\"type\": \"async_tool\", \"status\": \"running\", \"tool_call_id\": \"call_3q4t\", \"description\": \"...\"}"},
  {"role": "user", "content": "And are you open on Saturday?"},
  {"role": "developer", "content": "{\"type\": \"async_tool\", \"tool_call_id\": \"call_3q4t\", \"status\": \"finished\", \"description\": \"...\", \"result\": \"{\\\"outcome\\\": \\\"produced\\\", \\\"day\\\": \\\"Friday\\\", \\\"free\\\": [\\\"15:00\\\", \\\"15:30\\\"]}\"}"}
]""",
        good=r"""[
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_3q4t", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\", \"part_of_day\": \"afternoon\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_3q4t", "content": "{\"outcome\": \"produced\", \"day\": \"Friday\", \"free\": [\"15:00\", \"15:30\"]}"},
  {"role": "user", "content": "And are you open on Saturday?"}
]""",
        provider_errors=(),
        fix=(
            "Write the result into the tool's own message, replacing its placeholder, serialised "
            "once with `ensure_ascii=False`. In Pipecat that means keeping "
            "`cancel_on_interruption=True` for tools whose result the next answer needs; if a "
            "result arrives after its turn, re-add the call/result pair at the next turn "
            "boundary instead of announcing it as a developer message."
        ),
    ),
    "TR103": RuleDoc(
        why=(
            "The model reads a string full of escaped quotes instead of an object, so field names "
            "and values are harder to pick out, smaller models quote the backslashes back, and "
            "every layer costs extra tokens on each turn. Pipecat's async results are serialised "
            "twice: the payload's `result` is already `json.dumps(result)` text when the whole "
            "payload is dumped again, as in this developer message."
        ),
        bad=r"""[
  {"role": "developer", "content": "{\"type\": \"async_tool\", \"tool_call_id\": \"call_3q4t\", \"status\": \"finished\", \"description\": \"...\", \"result\": \"{\\\"outcome\\\": \\\"produced\\\", \\\"day\\\": \\\"\\u0c36\\u0c41\\u0c15\\u0c4d\\u0c30\\u0c35\\u0c3e\\u0c30\\u0c02\\\", \\\"free\\\": [\\\"15:00\\\", \\\"15:30\\\"]}\"}"}
]""",
        good=r"""[
  {"role": "tool", "tool_call_id": "call_3q4t", "content": "{\"outcome\": \"produced\", \"day\": \"శుక్రవారం\", \"free\": [\"15:00\", \"15:30\"]}"}
]""",
        provider_errors=(),
        fix=(
            "Serialise a result once: put the object itself in the payload, not its "
            "`json.dumps` text, and call `json.dumps(..., ensure_ascii=False)` a single time when "
            "writing the message content. Better still, write it in the tool's own slot (TR102)."
        ),
    ),
    "TR104": RuleDoc(
        why=(
            "`json.dumps` escapes every non-ASCII character by default, so a Telugu day name "
            "reaches the model as `\\u0c36\\u0c41...`. On OpenAI's current tokenizer that "
            "text costs about 9 times the tokens in Telugu, 8 in Hindi and 5 in Chinese, adding "
            "latency to every turn, and smaller models may read a name back as \"backslash u "
            "zero c\". Escapes in the HTTP body itself are harmless; only those left inside a "
            "decoded string reach the model."
        ),
        bad=r"""[
  {"role": "developer", "content": "{\"type\": \"async_tool\", \"tool_call_id\": \"call_3q4t\", \"status\": \"finished\", \"description\": \"...\", \"result\": \"{\\\"outcome\\\": \\\"produced\\\", \\\"day\\\": \\\"\\u0c36\\u0c41\\u0c15\\u0c4d\\u0c30\\u0c35\\u0c3e\\u0c30\\u0c02\\\", \\\"free\\\": [\\\"15:00\\\", \\\"15:30\\\"]}\"}"}
]""",
        good=r"""[
  {"role": "tool", "tool_call_id": "call_3q4t", "content": "{\"outcome\": \"produced\", \"day\": \"శుక్రవారం\", \"free\": [\"15:00\", \"15:30\"]}"}
]""",
        provider_errors=(),
        fix=(
            "Serialise with `json.dumps(value, ensure_ascii=False)`. Pipecat's assistant "
            "aggregator does since commit 3b3c7aa8c (2026-01-22), but its async payload wrapper "
            "still uses the default. When rendering open-weight chat templates, use the "
            "transformers `tojson` override, not stock Jinja2 `|tojson`."
        ),
    ),
    "TR105": RuleDoc(
        why=(
            "An empty result (`\"\"`, `{}`, `[]`, `null`, `None`, whitespace) cannot be told "
            "apart from \"nothing happened\", so the model calls the tool again or guesses, and "
            "on a booking tool the guess is spoken to the caller as fact. A `null` content is a "
            "hard error on OpenAI (TC006)."
        ),
        bad=r"""[
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_njVG", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\", \"part_of_day\": \"afternoon\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_njVG", "content": "{}"}
]""",
        good=r"""[
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_njVG", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\", \"part_of_day\": \"afternoon\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_njVG", "content": "{\"outcome\": \"produced\", \"day\": \"Friday\", \"free\": [], \"note\": \"No free slots on Friday afternoon.\"}"}
]""",
        provider_errors=(),
        fix=(
            "Return an explicit outcome even when there is no data: an empty list with a note, "
            "or `{\"status\": \"done\"}` for a tool that has nothing to report."
        ),
    ),
    # ---- Timeline across the requests of one call ----------------------------------------
    "TL201": RuleDoc(
        why=(
            "The slot said the tool was running and never got its result: the tool hung, a "
            "handler was missing, or the call was cancelled before the framework registered it. "
            "The model keeps seeing a running tool, grows hesitant to call it again or invents "
            "an answer, and the caller never hears the outcome. If the result reached the model "
            "in another role, TR102 reports that instead."
        ),
        bad=r"""[
  {"request": 3, "messages": [
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_9xKp", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_9xKp", "content": "IN_PROGRESS"}
  ]},
  {"request": 6, "messages": [
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_9xKp", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_9xKp", "content": "IN_PROGRESS"},
    {"role": "user", "content": "Hello?"},
    {"role": "assistant", "content": "Sorry, I'm still checking."},
    {"role": "user", "content": "Never mind, I'll call back."}
  ]}
]""",
        good=r"""[
  {"request": 3, "messages": [
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_9xKp", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_9xKp", "content": "IN_PROGRESS"}
  ]},
  {"request": 4, "messages": [
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_9xKp", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_9xKp", "content": "{\"outcome\": \"error\", \"reason\": \"The calendar did not answer within 10 seconds.\"}"}
  ]}
]""",
        provider_errors=(),
        fix=(
            "Give every started tool a way to finish: a deadline that writes an explicit error "
            "result, a handler for every declared tool, and a cancellation that settles the slot. "
            "Pipecat's known hangs of this kind are #3661, #3548 and #4300."
        ),
    ),
    "TL202": RuleDoc(
        why=(
            "The caller spoke while a tool was still running, and their words went to the model "
            "with the slot still saying `IN_PROGRESS`. The model has to answer without the "
            "result, so it stalls, guesses or calls the tool again, and when the result lands a "
            "moment later it may contradict what the caller was just told."
        ),
        bad=r"""[
  {"request": 4, "messages": [
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_Bk29", "type": "function", "function": {"name": "book_appointment", "arguments": "{\"day\": \"Friday\", \"time\": \"15:30\", \"patient_name\": \"Ravi Kumar\"}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_Bk29", "content": "IN_PROGRESS"},
    {"role": "user", "content": "Is it booked?"}
  ]}
]""",
        good=r"""[
  {"request": 4, "messages": [
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_Bk29", "type": "function", "function": {"name": "book_appointment", "arguments": "{\"day\": \"Friday\", \"time\": \"15:30\", \"patient_name\": \"Ravi Kumar\"}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_Bk29", "content": "{\"outcome\": \"booked\", \"confirmation\": \"APT-7731\"}"},
    {"role": "user", "content": "Is it booked?"}
  ]}
]""",
        provider_errors=(),
        fix=(
            "Hold the caller's turn while a slot is pending and release it when the result lands "
            "(report `hold.started` and `hold.released` events so Callscope can show it), with a "
            "short filler line meanwhile. For tools that may run long, say in the slot that the "
            "result is coming and the tool must not be called again."
        ),
    ),
    "TL203": RuleDoc(
        why=(
            "A result the model already saw, such as a confirmed booking, is missing from later "
            "requests, usually because an interruption truncated the context. The model no longer "
            "knows the action happened and does it again: LiveKit Agents #3702 reported "
            "duplicate orders this way. It also fires when a `tool.finished` event announced a "
            "result that no request carries a few requests later (the project's never-settled "
            "count, 2 by default) or by the end of the call."
        ),
        bad=r"""[
  {"request": 4, "messages": [
    {"role": "user", "content": "Book Friday at half past three."},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_Bk29", "type": "function", "function": {"name": "book_appointment", "arguments": "{\"day\": \"Friday\", \"time\": \"15:30\"}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_Bk29", "content": "{\"outcome\": \"booked\", \"confirmation\": \"APT-7731\"}"}
  ]},
  {"request": 5, "messages": [
    {"role": "user", "content": "Book Friday at half past three."},
    {"role": "user", "content": "Sorry, did that go through?"}
  ]}
]""",
        good=r"""[
  {"request": 5, "messages": [
    {"role": "user", "content": "Book Friday at half past three."},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_Bk29", "type": "function", "function": {"name": "book_appointment", "arguments": "{\"day\": \"Friday\", \"time\": \"15:30\"}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_Bk29", "content": "{\"outcome\": \"booked\", \"confirmation\": \"APT-7731\"}"},
    {"role": "user", "content": "Sorry, did that go through?"}
  ]}
]""",
        provider_errors=(),
        fix=(
            "When an interruption or context trimming rewrites the history, keep every settled "
            "call/result pair. LiveKit Agents fixed its case in PR #6349 (\"preserve completed "
            "tool results in chat context on interruption\")."
        ),
    ),
    "TL204": RuleDoc(
        why=(
            "The same booking, payment or transfer ran twice with the same arguments: the caller "
            "gets two appointments or is charged twice. It usually follows a lost result (TL203) "
            "or a slot that looked unfinished (TL205), so the model never learned that the first "
            "call succeeded."
        ),
        bad=r"""[
  {"request": 4, "messages": [
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_Bk29", "type": "function", "function": {"name": "book_appointment", "arguments": "{\"day\": \"Friday\", \"time\": \"15:30\", \"patient_name\": \"Ravi Kumar\"}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_Bk29", "content": "IN_PROGRESS"},
    {"role": "user", "content": "Hello?"}
  ]},
  {"request": 5, "messages": [
    {"role": "user", "content": "Hello?"},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_Zr81", "type": "function", "function": {"name": "book_appointment", "arguments": "{\"patient_name\": \"Ravi Kumar\", \"day\": \"Friday\", \"time\": \"15:30\"}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_Zr81", "content": "{\"outcome\": \"booked\", \"confirmation\": \"APT-7732\"}"}
  ]}
]""",
        good=r"""[
  {"request": 5, "messages": [
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_Bk29", "type": "function", "function": {"name": "book_appointment", "arguments": "{\"day\": \"Friday\", \"time\": \"15:30\", \"patient_name\": \"Ravi Kumar\"}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_Bk29", "content": "{\"outcome\": \"booked\", \"confirmation\": \"APT-7731\"}"},
    {"role": "user", "content": "Hello?"}
  ]}
]""",
        provider_errors=(),
        fix=(
            "Make side-effecting tools idempotent (a key derived from the request, or a check for "
            "an existing booking before creating one), and keep their results in the history. "
            "Which tools count as side-effecting is a per-project pattern; by default names "
            "containing book, reserve, schedule, create, cancel, pay, charge, refund, transfer, "
            "send, submit or order."
        ),
    ),
    "TL205": RuleDoc(
        why=(
            "The earlier slot showed a placeholder, nothing, `CANCELLED` or an error, so the "
            "model concluded the tool had not run and called it again with the same arguments. "
            "The caller waits twice, and a side-effecting tool may act twice (TL204). Pipecat's "
            "started message exists for this reason: \"This tool is still running. You will be "
            "given its result later. Do not call it again and do not invent a result in the "
            "meantime.\""
        ),
        bad=r"""[
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_njVG", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_njVG", "content": "CANCELLED"},
  {"role": "user", "content": "Sorry, go on."},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_4PzQ", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}}
  ]}
]""",
        good=r"""[
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_njVG", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_njVG", "content": "{\"outcome\": \"produced\", \"day\": \"Friday\", \"free\": [\"15:00\", \"15:30\"]}"},
  {"role": "user", "content": "Sorry, go on."},
  {"role": "assistant", "content": "Friday has 3 PM and half past three free."}
]""",
        provider_errors=(),
        fix=(
            "Settle the slot with what really happened before the model runs again, and while the "
            "tool is still running say so in words, including \"do not call it again\". Avoid "
            "describing the result it should wait for: as Pipecat notes, a model told the shape "
            "of a message it should expect will try to produce one, so it calls the tool again."
        ),
    ),
    "TL206": RuleDoc(
        why=(
            "A request that does not extend the previous one (a message deleted, edited or "
            "reordered) breaks prompt caching, so every later turn is slower and dearer, and the "
            "model may lose what it was told. On Anthropic with thinking, editing earlier "
            "`tool_use` or `tool_result` content invalidates replayed thinking. A placeholder "
            "overwritten in place by its result is expected and not flagged."
        ),
        bad=r"""[
  {"request": 2, "messages": [
    {"role": "system", "content": "You are the clinic's receptionist."},
    {"role": "user", "content": "Is Friday free?"},
    {"role": "assistant", "content": "Let me check."}
  ]},
  {"request": 3, "messages": [
    {"role": "system", "content": "You are the clinic's receptionist. Today is Thursday."},
    {"role": "user", "content": "Is Friday afternoon free?"},
    {"role": "user", "content": "Around three?"}
  ]}
]""",
        good=r"""[
  {"request": 2, "messages": [
    {"role": "system", "content": "You are the clinic's receptionist. Today is Thursday."},
    {"role": "user", "content": "Is Friday free?"},
    {"role": "assistant", "content": "Let me check."}
  ]},
  {"request": 3, "messages": [
    {"role": "system", "content": "You are the clinic's receptionist. Today is Thursday."},
    {"role": "user", "content": "Is Friday free?"},
    {"role": "assistant", "content": "Let me check."},
    {"role": "user", "content": "Around three?"}
  ]}
]""",
        provider_errors=(),
        fix=(
            "Treat the history as append-only: add new messages at the end and change only "
            "placeholders in place. Put per-turn facts in a new message rather than editing the "
            "system prompt, and keep the assistant's spoken text even when it was interrupted."
        ),
    ),
    "TL207": RuleDoc(
        why=(
            "The agent held the caller's turn for a tool and the hold ended by timeout rather "
            "than by the result, or a placeholder stayed pending longer than the project's "
            "threshold (30 seconds by default). The caller sat in silence that long and the "
            "model answered without the result anyway. It points at a slow or hung tool."
        ),
        bad=r"""[
  {"type": "hold.started", "at": "2026-11-30T05:03:49.6Z", "tool_call_ids": ["call_3q4t"]},
  {"type": "hold.released", "at": "2026-11-30T05:04:19.6Z", "tool_call_ids": ["call_3q4t"], "cause": "timeout"}
]""",
        good=r"""[
  {"type": "hold.started", "at": "2026-11-30T05:03:49.6Z", "tool_call_ids": ["call_3q4t"]},
  {"type": "tool.finished", "at": "2026-11-30T05:03:50.8Z", "tool_call_id": "call_3q4t", "name": "check_availability"},
  {"type": "hold.released", "at": "2026-11-30T05:03:50.8Z", "tool_call_ids": ["call_3q4t"], "cause": "result"}
]""",
        provider_errors=(),
        fix=(
            "Give each tool its own deadline, shorter than the hold, and when it passes write an "
            "explicit error result (\"the calendar did not answer\") so the model can tell the "
            "caller. Speak a filler line while holding."
        ),
    ),
    "TL208": RuleDoc(
        why=(
            "The classic interruption bug: the new turn removed the unanswered assistant message "
            "with `tool_calls`, then the slow tool finished and its result was appended. From "
            "that request on the history holds an orphan result, so every later request fails "
            "with a 400 and the agent is mute for the rest of the call. The request itself gets "
            "TC001; this rule says where it came from."
        ),
        bad=r"""[
  {"request": 2, "messages": [
    {"role": "user", "content": "Is Friday afternoon free?"},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_njVG", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_njVG", "content": "IN_PROGRESS"}
  ]},
  {"request": 3, "messages": [
    {"role": "user", "content": "Is Friday afternoon free?"},
    {"role": "user", "content": "Wait, actually I need Monday."},
    {"role": "tool", "tool_call_id": "call_njVG", "content": "{\"outcome\": \"produced\", \"day\": \"Friday\", \"free\": [\"15:00\"]}"}
  ]}
]""",
        good=r"""[
  {"request": 3, "messages": [
    {"role": "user", "content": "Is Friday afternoon free?"},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_njVG", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_njVG", "content": "{\"outcome\": \"produced\", \"day\": \"Friday\", \"free\": [\"15:00\"]}"},
    {"role": "user", "content": "Wait, actually I need Monday."}
  ]}
]""",
        provider_errors=(
            _OPENAI_NO_PRECEDING_CALL,
            _OPENAI_ID_NOT_FOUND,
            _ANTHROPIC_UNEXPECTED_RESULT,
            _RESPONSES_NO_CALL,
        ),
        fix=(
            "On interruption, delete a call and its result together or keep both; never append a "
            "late result after its call was removed. Pipecat's default "
            "`cancel_on_interruption=True` keeps the call and settles its own slot (`CANCELLED`), "
            "so nothing is orphaned. If you re-add a stale pair yourself, add call and result "
            "together, at a turn boundary."
        ),
    ),
    "TL209": RuleDoc(
        why=(
            "Re-adding a stale call/result pair is the right repair for a lost call, but only at a "
            "turn boundary. Inserted between another assistant `tool_calls` message and its "
            "results, it splits that call from its result and the provider rejects the request "
            "with a 400, again on every later turn."
        ),
        bad=r"""[
  {"role": "user", "content": "Wait, actually I need Monday."},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_H1fW", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Monday\"}"}}
  ]},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_njVG", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_njVG", "content": "{\"outcome\": \"produced\", \"day\": \"Friday\", \"free\": [\"15:00\"]}"},
  {"role": "tool", "tool_call_id": "call_H1fW", "content": "{\"outcome\": \"produced\", \"day\": \"Monday\", \"free\": [\"10:00\"]}"}
]""",
        good=r"""[
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_njVG", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_njVG", "content": "{\"outcome\": \"produced\", \"day\": \"Friday\", \"free\": [\"15:00\"]}"},
  {"role": "user", "content": "Wait, actually I need Monday."},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_H1fW", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Monday\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_H1fW", "content": "{\"outcome\": \"produced\", \"day\": \"Monday\", \"free\": [\"10:00\"]}"}
]""",
        provider_errors=(_OPENAI_UNANSWERED, _ANTHROPIC_MISSING_RESULT),
        fix=(
            "Insert a re-added pair only where no call is open: before the caller's newest "
            "message, or after the last result of the current turn, never between an assistant "
            "`tool_calls` message and its results."
        ),
    ),
    "TL210": RuleDoc(
        why=(
            "A request that a provider refused goes out again with the same broken prefix, so "
            "every turn fails the same way and the caller hears nothing for the rest of the call. "
            "gemini-cli users reported exactly this (#5443): once the history held it, every "
            "question returned the same error. The structural finding is reported once, at its "
            "turn; this rule marks the later requests that still carry it."
        ),
        bad=r"""[
  {"request": 5, "messages": [
    {"role": "user", "content": "Wait, actually I need Monday."},
    {"role": "tool", "tool_call_id": "call_njVG", "content": "{\"outcome\": \"produced\", \"day\": \"Friday\", \"free\": [\"15:00\"]}"}
  ]},
  {"request": 6, "messages": [
    {"role": "user", "content": "Wait, actually I need Monday."},
    {"role": "tool", "tool_call_id": "call_njVG", "content": "{\"outcome\": \"produced\", \"day\": \"Friday\", \"free\": [\"15:00\"]}"},
    {"role": "user", "content": "Hello? Can you hear me?"}
  ]}
]""",
        good=r"""[
  {"request": 6, "messages": [
    {"role": "user", "content": "Wait, actually I need Monday."},
    {"role": "user", "content": "Hello? Can you hear me?"}
  ]}
]""",
        provider_errors=(
            _GEMINI_COUNTS,
            (
                "LangGraph (checks before sending, INVALID_CHAT_HISTORY)",
                "Found AIMessages with tool_calls that do not have a corresponding ToolMessage. "
                "Here are the first few of those tool calls: […]",
            ),
        ),
        fix=(
            "When a request comes back 400 for a structural reason, repair the history before "
            "the next turn (drop the orphan result, or add the missing one) instead of resending "
            "it. A check like LangGraph's before each request stops the loop."
        ),
    ),
    # ---- Responses -------------------------------------------------------------------------
    "RS301": RuleDoc(
        why=(
            "The model answered with no text and no tool calls, so the caller hears silence and "
            "the agent may sit waiting for a turn that never comes. The usual cause is a "
            "reasoning model spending its whole output budget thinking: `finish_reason: "
            "\"length\"` with empty content and nearly all completion tokens spent on reasoning."
        ),
        bad=r"""[
  {"request": 3, "max_completion_tokens": 200, "reasoning_effort": "medium"},
  {"response": 3, "choices": [
    {"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "length"}
  ], "usage": {"completion_tokens": 200, "completion_tokens_details": {"reasoning_tokens": 199}}}
]""",
        good=r"""[
  {"request": 3, "max_completion_tokens": 25000, "reasoning_effort": "low"},
  {"response": 3, "choices": [
    {"index": 0, "message": {"role": "assistant", "content": "Friday has 3 PM and half past three free."}, "finish_reason": "stop"}
  ], "usage": {"completion_tokens": 164, "completion_tokens_details": {"reasoning_tokens": 142}}}
]""",
        provider_errors=(),
        fix=(
            "Leave the model room: raise `max_completion_tokens` or `max_output_tokens` (OpenAI "
            "recommends reserving at least 25,000 tokens for reasoning and outputs) or lower the "
            "reasoning effort for voice turns, and treat an empty response as a failure to retry "
            "or cover with a spoken fallback."
        ),
    ),
    "RS302": RuleDoc(
        why=(
            "The model spoke and called a tool in one response (\"Let me check Friday for "
            "you.\"), but the next request carries the call with empty content, so the model "
            "does not know it already said that. It says it again and the caller hears the bot "
            "repeat itself (pipecat #3023, #2787, #1572). Send the model's responses as "
            "`response` events for this rule to run; words kept only in part (cut by an "
            "interruption) count as kept."
        ),
        bad=r"""[
  {"response": 2, "message": {"role": "assistant", "content": "Let me check Friday for you.", "tool_calls": [
    {"id": "call_njVG", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}}
  ]}},
  {"request": 3, "messages": [
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_njVG", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_njVG", "content": "{\"outcome\": \"produced\", \"day\": \"Friday\", \"free\": [\"15:00\"]}"}
  ]}
]""",
        good=r"""[
  {"response": 2, "message": {"role": "assistant", "content": "Let me check Friday for you.", "tool_calls": [
    {"id": "call_njVG", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}}
  ]}},
  {"request": 3, "messages": [
    {"role": "assistant", "content": "Let me check Friday for you.", "tool_calls": [
      {"id": "call_njVG", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_njVG", "content": "{\"outcome\": \"produced\", \"day\": \"Friday\", \"free\": [\"15:00\"]}"}
  ]}
]""",
        provider_errors=(),
        fix=(
            "Keep the spoken text in the same assistant message as its `tool_calls` when the "
            "response is written to the context. In Pipecat this is the race of #2787 (text and "
            "tool calls in one turn, with a tool that answers quickly): check that your version's "
            "assistant aggregator commits the text together with the call."
        ),
    ),
    # ---- Chat templates ---------------------------------------------------------------------
    "TP401": RuleDoc(
        why=(
            "Open-weight servers (vLLM, SGLang, llama.cpp, TGI) turn the messages into one prompt "
            "with the model's Jinja chat template before the model reads anything. Many templates "
            "refuse shapes that OpenAI accepts: two tool calls in one message, roles that do not "
            "alternate, a `developer` role, OpenAI-style tool call ids. The server answers with an "
            "error (a 500 on some, a 400 on others) and the caller hears nothing. Callscope shows "
            "this on the turn page, under \"What the model sees\", for the template you pick."
        ),
        bad=r"""[
  {"role": "user", "content": "Is Friday or Saturday free?"},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_njVG", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}},
    {"id": "call_H1fW", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Saturday\"}"}}
  ]}
]""",
        good=r"""[
  {"role": "user", "content": "Is Friday or Saturday free?"},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_njVG", "type": "function", "function": {"name": "check_availability", "arguments": "{\"day\": \"Friday\"}"}}
  ]}
]""",
        provider_errors=(
            ("Llama 3.1/3.2/3.3 official template", "This model only supports single tool-calls at once!"),
            ("Mistral templates", "Tool call IDs should be alphanumeric strings with length 9!"),
            (
                "TGI with Gemma or older Mistral templates",
                "Template error: syntax error: Conversation roles must alternate user/assistant/user/assistant/",
            ),
        ),
        fix=(
            "Send what the served model's template accepts: one tool call per assistant message "
            "for Llama 3 (`parallel_tool_calls: false` does not help once a two-call turn is in "
            "the history), nine-character alphanumeric ids for Mistral, strict user/assistant "
            "alternation for Gemma, and `system` instead of `developer` for servers without it."
        ),
    ),
}


def doc_for(code: str) -> RuleDoc:
    """The page text of one rule, by code (any case). KeyError for a code with no doc."""
    return DOCS[code.strip().upper()]
