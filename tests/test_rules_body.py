"""Body rules (TC, TR): each fires on its case and stays quiet on its near miss."""

import json

import pytest

from calls.normalize import normalize
from calls.rules import structure
from calls.rules import results as result_rules
from tests.conftest import sample_bodies

SYSTEM = {"role": "system", "content": "You are Sita."}
USER = {"role": "user", "content": "Friday?"}


def call(call_id="call_1", name="check_availability", arguments='{"day": "Fri"}'):
    return {"role": "assistant", "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]}


def result(call_id="call_1", content='{"free": ["15:00"]}'):
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def findings(messages, fmt="openai.chat", model="gpt-4.1-mini", **extra):
    key = {"openai.chat": "messages", "anthropic.messages": "messages", "openai.responses": "input", "gemini": "contents"}[fmt]
    request = normalize(fmt, {key: messages, "model": model, **extra})
    return structure.check(request) + result_rules.check(request)


def codes(messages, **kwargs):
    return [(f.code, f.severity, f.message_index, f.tool_call_id) for f in findings(messages, **kwargs)]


@pytest.mark.parametrize("name", ["sync_tool", "async_tool_user_speaks", "interruption_sync_tool", "fix_in_place"])
def test_real_pipecat_captures_break_no_structural_rule(name):
    for body in sample_bodies(name):
        request = normalize("openai.chat", json.loads(body))
        assert structure.check(request) == []


def test_the_clean_captures_have_no_findings_at_all():
    for name in ["sync_tool", "fix_in_place"]:
        request = normalize("openai.chat", json.loads(sample_bodies(name)[-1]))
        assert result_rules.check(request) == []


# TC001 orphan-tool-result
def test_a_result_whose_call_message_was_dropped_is_an_orphan():
    # The interruption case: the assistant message holding the call is gone.
    assert codes([SYSTEM, USER, result(), USER]) == [("TC001", "error", 2, "call_1")]


def test_a_result_answering_another_call_is_an_orphan():
    found = codes([SYSTEM, USER, call("call_1"), result("call_9"), USER])
    assert ("TC001", "error", 3, "call_9") in found


def test_a_result_right_after_its_call_is_no_orphan():
    assert codes([SYSTEM, USER, call(), result(), USER]) == []


# TC002 unanswered-tool-call
def test_a_call_followed_by_a_user_message_is_unanswered():
    assert codes([SYSTEM, USER, call(), USER]) == [("TC002", "error", 2, "call_1")]


def test_a_call_in_the_final_message_is_not_answered_yet():
    assert codes([SYSTEM, USER, call()]) == []


def test_a_parallel_call_missing_one_result_is_unanswered():
    both = {"role": "assistant", "tool_calls": call("a")["tool_calls"] + call("b")["tool_calls"]}
    assert codes([USER, both, result("a"), USER]) == [("TC002", "error", 1, "b")]


def test_anthropic_text_before_the_results_leaves_the_call_unanswered():
    messages = [
        {"role": "user", "content": "Friday?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "check", "input": {}}]},
        {"role": "user", "content": [{"type": "text", "text": "also"}, {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]},
    ]
    found = codes(messages, fmt="anthropic.messages", model="claude-sonnet-4")
    assert ("TC002", "error", 1, "toolu_1") in found
    messages[2]["content"].reverse()  # results first: fine
    assert codes(messages, fmt="anthropic.messages", model="claude-sonnet-4") == []


def test_responses_calls_of_one_turn_may_be_answered_together():
    items = [
        {"role": "user", "content": "go"},
        {"type": "function_call", "call_id": "c1", "name": "a", "arguments": "{}"},
        {"type": "function_call", "call_id": "c2", "name": "b", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "x"},
        {"type": "function_call_output", "call_id": "c2", "output": "y"},
        {"role": "user", "content": "next"},
    ]
    assert codes(items, fmt="openai.responses", model="gpt-4.1") == []
    del items[4]
    assert codes(items, fmt="openai.responses", model="gpt-4.1") == [("TC002", "error", 2, "c2")]


def test_gemini_response_turn_must_follow_its_call_turn():
    contents = [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "g1", "name": "f", "response": {}}}]},
    ]
    assert ("TC001", "error", 1, "g1") in codes(contents, fmt="gemini", model="gemini-2.5-flash")


# TC003 duplicate-tool-call-id
def test_a_reused_call_id_is_flagged():
    found = codes([USER, call("c"), result("c"), USER, call("c"), result("c")])
    assert found == [("TC003", "warning", 4, "c")]


def test_distinct_ids_are_fine():
    assert codes([USER, call("c1"), result("c1"), USER, call("c2"), result("c2")]) == []


# TC004 malformed-tool-call
@pytest.mark.parametrize(
    "message, severity",
    [
        ({"role": "assistant", "content": "x", "tool_calls": []}, "error"),
        (call(arguments="not json"), "warning"),
        (call(arguments='["a"]'), "warning"),
        (call(name="check availability"), "error"),
        (call(call_id="c" * 41), "error"),
        ({"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]}, "error"),
    ],
)
def test_malformed_calls_are_flagged(message, severity):
    found = [f for f in findings([USER, message]) if f.code == "TC004"]
    assert [f.severity for f in found] == [severity]


def test_a_well_formed_call_is_fine():
    assert codes([USER, call(arguments='{"day": "శుక్రవారం"}')]) == []


# TC005 unsupported-role
def test_roles_the_provider_refuses_are_flagged():
    assert codes([{"role": "narrator", "content": "x"}, USER]) == [("TC005", "error", 0, "")]
    assert codes([{"role": "developer", "content": "x"}, USER], model="deepseek-chat") == [("TC005", "error", 0, "")]
    anthropic = [{"role": "system", "content": "x"}, {"role": "user", "content": "hi"}]
    assert codes(anthropic, fmt="anthropic.messages", model="claude-sonnet-4") == [("TC005", "error", 0, "")]


def test_developer_is_fine_for_openai_models():
    assert codes([{"role": "developer", "content": "x"}, USER], model="gpt-4.1-mini") == []


# TC006 empty-content
def test_a_null_tool_result_is_empty_content():
    found = codes([USER, call(), {"role": "tool", "tool_call_id": "call_1", "content": None}])
    assert ("TC006", "error", 2, "") in found


def test_an_empty_non_final_anthropic_message_is_refused():
    messages = [{"role": "user", "content": []}, {"role": "user", "content": "hi"}]
    assert codes(messages, fmt="anthropic.messages", model="claude-sonnet-4") == [("TC006", "error", 0, "")]
    assert codes([{"role": "user", "content": "hi"}], fmt="anthropic.messages", model="claude-sonnet-4") == []


# TR101 placeholder-result
def test_placeholders_are_info_while_pending_and_warnings_when_terminal():
    assert codes([USER, call(), result(content="IN_PROGRESS")]) == [("TR101", "info", 2, "call_1")]
    assert codes([USER, call(), result(content="CANCELLED")]) == [("TR101", "warning", 2, "call_1")]
    assert codes([USER, call(), result(content="The booking is IN_PROGRESS at the clinic.")]) == []


# TR102 result-outside-slot
def test_a_result_in_a_developer_message_is_outside_its_slot():
    payload = json.dumps({"type": "async_tool", "tool_call_id": "call_1", "status": "finished", "result": "ok"})
    found = codes([USER, call(), result(content="IN_PROGRESS"), {"role": "developer", "content": payload}])
    assert ("TR102", "warning", 3, "call_1") in found


def test_a_developer_message_about_tools_without_an_id_is_fine():
    assert codes([USER, {"role": "developer", "content": '{"note": "be brief"}'}]) == []


# TR103 double-encoded-json
def test_json_inside_a_json_string_is_double_encoded_and_layers_are_counted():
    inner = json.dumps({"free": ["15:00"]})
    (found,) = [f for f in findings([USER, call(), result(content=json.dumps({"result": inner}))]) if f.code == "TR103"]
    assert dict(found.detail)["layers"] == 2
    literal = json.dumps(json.dumps(json.dumps({"a": 1})))  # a string literal of a string literal
    (found,) = [f for f in findings([USER, call(), result(content=literal)]) if f.code == "TR103"]
    assert dict(found.detail)["layers"] == 3


def test_plain_json_is_not_double_encoded():
    assert codes([USER, call(), result(content='{"note": "use \\"quotes\\"", "n": "42"}')]) == []


# TR104 escaped-non-latin
def test_escaped_telugu_is_counted():
    content = json.dumps({"day": "శుక్రవారం"})  # ensure_ascii: \\u0c36...
    (found,) = [f for f in findings([USER, call(), result(content=content)]) if f.code == "TR104"]
    letters = len("శుక్రవారం")  # 9 code points, each now six ASCII characters
    assert dict(found.detail) == {"escapes": letters, "extra_characters": letters * 5, "inflation": 6}


def test_raw_utf8_and_escaped_ascii_are_fine():
    content = json.dumps({"day": "శుక్రవారం", "q": "\\u0041"}, ensure_ascii=False)
    assert codes([USER, call(), result(content=content)]) == []


# TR105 empty-result
@pytest.mark.parametrize("content", ["", "  ", "null", "None", "{}", "[]"])
def test_empty_results_are_flagged(content):
    assert ("TR105", "warning", 2, "call_1") in codes([USER, call(), result(content=content)])


def test_a_short_real_result_is_not_empty():
    assert codes([USER, call(), result(content="0")]) == []


def test_the_async_capture_shows_every_result_problem_it_has():
    request = normalize("openai.chat", json.loads(sample_bodies("async_tool_user_speaks")[-1]))
    found = {(f.code, f.message_index) for f in result_rules.check(request)}
    assert found == {("TR101", 3), ("TR102", 6), ("TR103", 6), ("TR104", 6)}


def test_the_window_keeps_gemini_position_ids_stable(key, client):
    contents = [{"role": "user", "parts": [{"text": "hi"}]}]
    bodies = []
    for n in range(4):
        contents = contents + [
            {"role": "model", "parts": [{"functionCall": {"name": "check", "args": {"n": n}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "check", "response": {}}}]},
        ]
        bodies.append({"contents": contents})
    answer = client.post(
        "/api/v1/check", data=json.dumps(bodies), content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )
    reported = [f for step in answer.json()["requests"] for f in step["findings"]]
    # Each empty {} response once, under the id of the call it answers, however the window moved.
    ids = [f["tool_call_id"] for f in reported]
    assert [f["code"] for f in reported] == ["TR105"] * 4 and len(set(ids)) == 4
    assert all(i.startswith("gemini:") and i.endswith(":0") for i in ids)


def test_responses_results_for_a_stored_previous_response_are_no_orphans():
    items = [{"type": "function_call_output", "call_id": "call_1", "output": "done"}]
    assert codes(items, fmt="openai.responses", model="gpt-4.1", previous_response_id="resp_1") == []
    assert ("TC001", "error", 0, "call_1") in codes(items, fmt="openai.responses", model="gpt-4.1")


def test_roles_are_checked_as_the_provider_receives_them():
    assert codes([{"parts": [{"text": "no role is fine"}]}], fmt="gemini", model="gemini-2.5-flash") == []
    assert codes([{"role": "assistant", "parts": [{"text": "x"}]}], fmt="gemini", model="gemini-2.5-flash") == [("TC005", "error", 0, "")]
    items = [{"type": "item_reference", "id": "msg_1"}, {"role": "user", "content": "hi"}]
    assert codes(items, fmt="openai.responses", model="gpt-4.1") == []
    assert codes([{"role": "tool", "content": "x"}], fmt="anthropic.messages", model="claude-sonnet-4") == [("TC005", "error", 0, "")]


def test_odd_but_valid_json_never_crashes_the_rules():
    deep = "[" * 5000 + "]" * 5000
    messages = [
        {"role": "user", "content": [{"type": [], "text": "x"}, {"type": {"a": 1}}]},
        call(),
        result(content=deep),
        {"role": "developer", "content": '{"tool_call_id": "call_1", "result": "' + "[" * 3000 + '"}'},
    ]
    findings(messages)  # no exception
    findings([{"type": ["x"], "content": 5}], fmt="openai.responses", model="gpt-4.1")


def test_an_image_only_tool_result_is_not_empty():
    messages = [
        {"role": "user", "content": "show me"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "photo", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}]}]},
    ]
    assert codes(messages, fmt="anthropic.messages", model="claude-sonnet-4") == []


def test_deprecated_function_calls_pair_by_name():
    messages = [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "function_call": {"name": "weather", "arguments": "{}"}},
        {"role": "function", "name": "weather", "content": "sunny"},
    ]
    assert codes(messages) == []


# TR103 inside a call's arguments
def test_json_text_inside_arguments_is_double_encoded():
    arguments = json.dumps({"slot": json.dumps({"day": "Fri", "time": "15:30"})})
    (found,) = [f for f in findings([USER, call(arguments=arguments), result()]) if f.code == "TR103"]
    assert (found.message_index, found.tool_call_id, dict(found.detail)["where"]) == (1, "call_1", "arguments")


def test_plain_arguments_are_not_double_encoded():
    arguments = json.dumps({"day": "Fri", "note": "say \"hi\"", "n": "42"})
    assert [f for f in findings([USER, call(arguments=arguments), result()]) if f.code == "TR103"] == []


# TL209 late-pair-inside-open-call
def test_a_stale_pair_re_added_inside_an_open_call_is_flagged():
    """The write-up's last lesson: the old pair went in between the new call and its result."""
    messages = [SYSTEM, USER, call("call_new"), call("call_old", name="book_appointment"), result("call_old"), result("call_new")]
    found = codes(messages)
    assert ("TL209", "error", 3, "call_old") in found
    # The provider's own complaints come with it.
    assert ("TC001", "error", 5, "call_new") in found and ("TC002", "error", 2, "call_new") in found


def test_a_parallel_call_split_by_a_late_pair_is_flagged():
    parallel = {"role": "assistant", "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"id": "call_b", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    messages = [USER, parallel, result("call_a"), call("call_old"), result("call_old"), result("call_b")]
    assert ("TL209", "error", 3, "call_old") in codes(messages)


def test_a_stale_pair_re_added_at_a_turn_boundary_is_fine():
    messages = [SYSTEM, USER, call("call_old"), result("call_old"), call("call_new"), result("call_new"), USER]
    assert codes(messages) == []


def test_anthropic_and_gemini_late_pairs_are_flagged():
    def use(i):
        return {"role": "assistant", "content": [{"type": "tool_use", "id": i, "name": "f", "input": {}}]}

    def answer(i):
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": "ok"}]}

    assert "TL209" in [c[0] for c in codes([USER, use("tu_new"), use("tu_old"), answer("tu_old"), answer("tu_new")], fmt="anthropic.messages", model="claude-sonnet-4")]

    def fc(i):
        return {"role": "model", "parts": [{"functionCall": {"id": i, "name": "f", "args": {}}}]}

    def fr(i):
        return {"role": "user", "parts": [{"functionResponse": {"id": i, "name": "f", "response": {"ok": True}}}]}

    assert "TL209" in [c[0] for c in codes([{"role": "user", "parts": [{"text": "hi"}]}, fc("a"), fc("b"), fr("b"), fr("a")], fmt="gemini", model="gemini-2.5-flash")]


def test_responses_order_of_outputs_is_free():
    fc = lambda i: {"type": "function_call", "call_id": i, "name": "f", "arguments": "{}"}  # noqa: E731
    out = lambda i: {"type": "function_call_output", "call_id": i, "output": "ok"}  # noqa: E731
    assert "TL209" not in [c[0] for c in codes([{"role": "user", "content": "hi"}, fc("a"), fc("b"), out("b"), out("a")], fmt="openai.responses")]
