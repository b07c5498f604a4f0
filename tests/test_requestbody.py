import json

import pytest

from calls.requestbody import BodyError, detect_format, parse_request, result_text
from calls.slots import PENDING, TERMINAL, classify_result
from tests.conftest import sample_bodies


def test_it_detects_each_provider_format():
    assert detect_format({"contents": []}) == "gemini"
    assert detect_format({"input": []}) == "openai.responses"
    assert detect_format({"messages": []}) == "openai.chat"
    assert detect_format({"messages": [], "system": "x"}) == "anthropic.messages"
    assert detect_format({"messages": [], "model": "claude-sonnet-4"}) == "anthropic.messages"
    tool_use = {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n", "input": {}}]}
    assert detect_format({"messages": [tool_use]}) == "anthropic.messages"
    assert detect_format({"model": "gpt-4.1"}) is None


@pytest.mark.parametrize(
    "raw, code",
    [
        (b"\xff\xfe{}", "invalid_utf8"),
        (b"{not json", "invalid_json"),
        (b'{"messages": [NaN]}', "invalid_json"),
        (b"[1, 2]", "not_an_object"),
        (b'"a string"', "not_an_object"),
        (b'{"model": "gpt-4.1"}', "unrecognized_format"),
        (b'{"messages": {"role": "user"}}', "invalid_shape"),
        (b'{"messages": ["hello"]}', "invalid_shape"),
    ],
)
def test_it_refuses_bodies_that_are_not_model_requests(raw, code):
    with pytest.raises(BodyError) as exc:
        parse_request(raw)
    assert exc.value.code == code


def test_a_format_override_must_be_known():
    with pytest.raises(BodyError) as exc:
        parse_request(b'{"messages": []}', "openai.completions")
    assert exc.value.code == "unknown_format"


def test_the_override_wins_over_detection():
    parsed = parse_request(b'{"messages": [], "system": "s"}', "openai.chat")
    assert parsed.format == "openai.chat"


def test_it_keeps_lone_surrogates_and_huge_integers_that_strict_json_allows():
    raw = b'{"messages": [{"role": "user", "content": "\\ud800 x", "n": 123456789012345678901234567890}]}'
    (message,) = parse_request(raw).messages
    assert json.loads(message.canonical) == json.loads(raw)["messages"][0]


def test_it_pairs_openai_chat_calls_and_results_from_a_real_capture():
    parsed = parse_request(sample_bodies("sync_tool")[1])
    assert parsed.format == "openai.chat"
    assert parsed.model == "gpt-4.1-mini"
    roles = [m.role for m in parsed.messages]
    assert roles == ["system", "user", "assistant", "tool"]
    (call,) = parsed.messages[2].calls
    assert call.name == "check_availability"
    assert call.arguments == '{"day": "శుక్రవారం", "part_of_day": "afternoon"}'
    assert parsed.messages[3].results == (call.id,)


def test_content_strings_survive_canonicalisation_exactly():
    body = sample_bodies("async_tool_user_speaks")[-1]
    original = json.loads(body)["messages"]
    parsed = parse_request(body)
    for message, item in zip(parsed.messages, original, strict=True):
        assert json.loads(message.canonical) == item
    developer = json.loads(parsed.messages[6].canonical)["content"]
    assert "\\u0c36" in developer  # the escapes the model reads, kept as characters


def test_it_pulls_tool_ids_from_the_other_formats():
    anthropic = parse_request(
        json.dumps(
            {
                "system": "s",
                "messages": [
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "book", "input": {"a": 1}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]},
                ],
            }
        ).encode()
    )
    assert anthropic.messages[1].calls[0].id == "toolu_1"
    assert anthropic.messages[2].results == ("toolu_1",)
    assert result_text(anthropic.messages[2].canonical, "toolu_1") == "ok"

    responses = parse_request(
        json.dumps(
            {
                "input": [
                    {"role": "user", "content": "hi"},
                    {"type": "function_call", "call_id": "c1", "name": "book", "arguments": "{}"},
                    {"type": "function_call_output", "call_id": "c1", "output": "done"},
                ]
            }
        ).encode()
    )
    assert [m.role for m in responses.messages] == ["user", "function_call", "function_call_output"]
    assert responses.messages[2].results == ("c1",)

    gemini = parse_request(
        json.dumps(
            {
                "contents": [
                    {"role": "model", "parts": [{"functionCall": {"id": "g1", "name": "book", "args": {}}}]},
                    {"role": "user", "parts": [{"functionResponse": {"id": "g1", "name": "book", "response": {"ok": True}}}]},
                ]
            }
        ).encode()
    )
    assert gemini.messages[0].calls[0].id == "g1"
    assert gemini.messages[1].results == ("g1",)


def test_a_responses_request_with_string_input_is_one_user_message():
    parsed = parse_request(b'{"input": "hello", "model": "gpt-4.1"}')
    assert parsed.format == "openai.responses"
    assert [m.role for m in parsed.messages] == ["user"]


@pytest.mark.parametrize(
    "text, kind",
    [
        ("IN_PROGRESS", PENDING),
        ('{"type": "async_tool", "status": "running", "tool_call_id": "c"}', PENDING),
        ('{"outcome": "running"}', PENDING),
        ("CANCELLED", TERMINAL),
        ("COMPLETED", TERMINAL),
        ('{"outcome": "produced", "free": ["15:00"]}', None),
        ('{"type": "async_tool", "status": "finished"}', None),
        ("IN_PROGRESS is what it said", None),
    ],
)
def test_it_tells_placeholders_from_results(text, kind):
    assert classify_result(text) == kind
