import json

from calls.normalize import MEDIA, REASONING, TEXT, TOOL_CALL, normalize
from tests.conftest import sample_bodies


def test_openai_chat_from_a_real_pipecat_capture():
    body = json.loads(sample_bodies("async_tool_user_speaks")[-1])
    request = normalize("openai.chat", body)
    assert request.model == "gpt-4.1-mini"
    assert [m.role for m in request.messages] == [
        "system", "user", "assistant", "tool", "user", "assistant", "developer", "assistant",
        "user", "assistant", "tool",
    ]
    assert [m.index for m in request.messages] == list(range(11))
    assert [i.source for i in request.instructions] == ["system", "developer"]
    (call,) = request.messages[2].calls
    assert call.name == "check_availability" and call.arguments_is_string
    assert call.arguments == body["messages"][2]["tool_calls"][0]["function"]["arguments"]
    (result,) = request.messages[3].results
    assert result.tool_call_id == call.tool_call_id
    assert result.text == body["messages"][3]["content"]
    developer = request.messages[6].text
    assert "\\u0c36" in developer and developer == body["messages"][6]["content"]
    assert [t.name for t in request.tools] == ["check_availability", "book_appointment"]


def test_openai_chat_parts_roles_and_the_deprecated_function_role():
    request = normalize(
        "openai.chat",
        {
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "look "}, {"type": "image_url", "image_url": {"url": "x"}}]},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]},
                {"role": "function", "name": "f", "content": "done"},
            ]
        },
    )
    user, assistant, function = request.messages
    assert [p.kind for p in user.parts] == [TEXT, MEDIA] and user.text == "look "
    assert assistant.calls[0].arguments == '{"a":1}' and not assistant.calls[0].arguments_is_string
    assert function.role == "tool" and function.provider_role == "function"
    assert function.results[0].name == "f"


def test_openai_responses_items_keep_their_boundaries():
    request = normalize(
        "openai.responses",
        {
            "model": "gpt-4.1",
            "instructions": "Be brief.",
            "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "book it"}]},
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {"type": "function_call", "call_id": "c1", "name": "book", "arguments": "{}"},
                {"type": "function_call", "call_id": "c2", "name": "pay", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "booked"},
                {"type": "function_call_output", "call_id": "c2", "output": [{"type": "input_text", "text": "paid"}]},
            ],
        },
    )
    assert request.instructions[0].text == "Be brief."
    assert [(m.role, m.provider_role) for m in request.messages] == [
        ("user", "user"), ("assistant", "reasoning"), ("assistant", "function_call"),
        ("assistant", "function_call"), ("tool", "function_call_output"), ("tool", "function_call_output"),
    ]
    assert request.messages[1].parts[0].kind == REASONING
    assert [m.results[0].text for m in request.messages[4:]] == ["booked", "paid"]


def test_anthropic_tool_results_become_tool_messages_of_their_own():
    request = normalize(
        "anthropic.messages",
        {
            "model": "claude-sonnet-4",
            "system": [{"type": "text", "text": "You are Sita."}],
            "messages": [
                {"role": "user", "content": "Friday?"},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "...", "signature": "s"},
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "check", "input": {"day": "Fri"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "check", "input": {"day": "Sat"}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "15:00"},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": [{"type": "text", "text": "none"}], "is_error": True},
                    {"type": "text", "text": "And Sunday?"},
                ]},
            ],
            "tools": [{"name": "check", "input_schema": {"type": "object"}}],
        },
    )
    assert request.instructions[0].source == "top_level_system"
    assert [(m.index, m.role, m.block) for m in request.messages] == [
        (0, "user", None), (1, "assistant", None), (2, "tool", 0), (2, "tool", 1), (2, "user", None),
    ]
    assistant = request.messages[1]
    assert [p.kind for p in assistant.parts] == [REASONING, TEXT, TOOL_CALL, TOOL_CALL]
    assert assistant.calls[0].arguments == '{"day":"Fri"}'
    assert request.messages[3].results[0].is_error and request.messages[3].results[0].text == "none"
    assert request.messages[3].provider_role == "user"
    assert request.tools[0].parameters == {"type": "object"}


def test_gemini_pairs_responses_without_ids_by_position_and_name():
    request = normalize(
        "gemini",
        {
            "systemInstruction": {"parts": [{"text": "Be brief."}]},
            "contents": [
                {"role": "user", "parts": [{"text": "Fri and Sat?"}]},
                {"role": "model", "parts": [
                    {"functionCall": {"name": "check", "args": {"day": "Fri"}}},
                    {"functionCall": {"name": "book", "args": {}}},
                    {"functionCall": {"name": "check", "args": {"day": "Sat"}}},
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "check", "response": {"free": ["15:00"]}}},
                    {"functionResponse": {"name": "check", "response": {"free": []}}},
                    {"functionResponse": {"name": "book", "response": {"ok": True}}},
                ]},
                {"role": "model", "parts": [{"functionCall": {"id": "g9", "name": "pay", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"id": "g9", "name": "pay", "response": {}}}]},
            ],
            "tools": [{"functionDeclarations": [{"name": "check"}, {"name": "book"}, {"name": "pay"}]}],
        },
    )
    calls = request.messages[1].calls
    assert request.messages[1].role == "assistant"
    results = [m.results[0] for m in request.messages if m.role == "tool"]
    assert [r.tool_call_id for r in results] == [
        calls[0].tool_call_id, calls[2].tool_call_id, calls[1].tool_call_id, "g9",
    ]
    assert results[0].text == '{"free":["15:00"]}'
    assert [t.name for t in request.tools] == ["check", "book", "pay"]
    assert request.instructions[0].text == "Be brief."
