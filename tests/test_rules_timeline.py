"""Timeline rules through the real ingest path: each fires on its case, not on its near miss."""

import copy
import json

import pytest

from tests.conftest import sample_bodies

SYSTEM = {"role": "system", "content": "You are Sita."}


def codes(answer):
    return [(f["code"], f["message_index"], f["tool_call_id"]) for f in answer.json()["findings"]]


def timeline_codes(answer):
    return [c for c in codes(answer) if c[0].startswith("TL")]


def test_tl202_fires_when_the_caller_speaks_while_a_tool_runs(key, post_request):
    bodies = sample_bodies("async_tool_user_speaks")
    post_request(key, "c", bodies[0])
    answer = post_request(key, "c", bodies[1])
    ((code, index, tool_call_id),) = timeline_codes(answer)
    assert (code, index) == ("TL202", 4) and tool_call_id.startswith("call_")
    for body in bodies[2:]:  # reported once per slot, not on every later caller line
        assert "TL202" not in [c[0] for c in codes(post_request(key, "c", body))]


@pytest.mark.parametrize("name", ["sync_tool", "interruption_sync_tool"])
def test_tl202_stays_quiet_when_no_slot_is_running(key, post_request, name):
    for body in sample_bodies(name):
        assert timeline_codes(post_request(key, name, body)) == []


def test_tl206_a_placeholder_settled_in_place_is_not_a_rewrite(key, post_request):
    for body in sample_bodies("fix_in_place"):
        assert "TL206" not in [c[0] for c in codes(post_request(key, "c", body))]


def test_tl206_fires_when_a_message_is_edited_or_deleted(key, post_request):
    first = json.loads(sample_bodies("sync_tool")[2])
    post_request(key, "c", first)
    edited = copy.deepcopy(first)
    edited["messages"][1]["content"] = "Saturday instead?"
    assert ("TL206", 1, "") in codes(post_request(key, "c", edited))
    shorter = copy.deepcopy(edited)
    del shorter["messages"][-1]
    assert [c[0] for c in codes(post_request(key, "c", shorter))] == ["TL206"]


def call_and_placeholder(call_id="call_X"):
    return [
        {"role": "assistant", "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "book_appointment", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": call_id, "content": "IN_PROGRESS"},
    ]


def test_tl208_and_tl210_the_interruption_that_breaks_every_later_request(key, post_request):
    user = {"role": "user", "content": "Book Friday."}
    post_request(key, "c", {"messages": [SYSTEM, user, *call_and_placeholder()]})
    # The caller interrupts: the framework drops the call message, the late result lands alone.
    late = {"role": "tool", "tool_call_id": "call_X", "content": '{"outcome": "booked"}'}
    broken = {"messages": [SYSTEM, user, late, {"role": "user", "content": "Hello?"}]}
    found = codes(post_request(key, "c", broken))
    assert ("TL208", None, "call_X") in found and ("TC001", 2, "call_X") in found
    again = {"messages": [*broken["messages"], {"role": "user", "content": "Are you there?"}]}
    assert [c[0] for c in codes(post_request(key, "c", again))] == ["TL210"]
    more = {"messages": [*again["messages"], {"role": "user", "content": "Hello??"}]}
    assert codes(post_request(key, "c", more)) == []  # TL210 once


def test_tl208_tl210_stay_quiet_when_the_pair_survives(key, post_request):
    user = {"role": "user", "content": "Book Friday."}
    post_request(key, "c", {"messages": [SYSTEM, user, *call_and_placeholder()]})
    settled = call_and_placeholder()
    settled[1]["content"] = '{"outcome": "booked"}'
    answer = post_request(key, "c", {"messages": [SYSTEM, user, *settled, {"role": "user", "content": "Thanks"}]})
    assert codes(answer) == []


def test_tl210_stays_quiet_once_the_broken_message_is_gone(key, post_request):
    orphan = {"role": "tool", "tool_call_id": "call_Y", "content": "ok"}
    post_request(key, "c", {"messages": [SYSTEM, orphan, {"role": "user", "content": "hi"}]})
    fixed = {"messages": [SYSTEM, {"role": "user", "content": "hi"}, {"role": "user", "content": "again"}]}
    assert "TL210" not in [c[0] for c in codes(post_request(key, "c", fixed))]


def booking(call_id, day="Fri"):
    return {"role": "assistant", "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "book_appointment", "arguments": json.dumps({"day": day, "time": "15:30"})}}]}


def tool(call_id, content):
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def test_tl201_fires_when_a_slot_stays_running_two_requests_on(key, post_request):
    history = [SYSTEM, {"role": "user", "content": "Book it."}, booking("call_A"), tool("call_A", "IN_PROGRESS")]
    post_request(key, "c", {"messages": history})
    history += [{"role": "assistant", "content": "One moment."}]
    assert "TL201" not in [c[0] for c in codes(post_request(key, "c", {"messages": history}))]
    history += [{"role": "assistant", "content": "Still checking."}]
    assert ("TL201", None, "call_A") in codes(post_request(key, "c", {"messages": history}))


def test_tl201_fires_at_call_end_and_not_for_settled_or_rerouted_results(key, post_request, post_events):
    post_request(key, "c", {"messages": [SYSTEM, booking("call_A"), tool("call_A", "IN_PROGRESS")]})
    answer = post_events(key, "c", {"type": "call.ended"})
    assert answer.status_code == 201
    from calls.models import Finding

    assert list(Finding.objects.filter(code="TL201").values_list("tool_call_id", flat=True)) == ["call_A"]
    # Near misses: the async capture's result reached the model as a developer message (TR102).
    for body in sample_bodies("async_tool_user_speaks"):
        post_request(key, "async", body)
    post_events(key, "async", {"type": "call.ended"})
    assert not Finding.objects.filter(code="TL201", call__external_id="async").exists()


def test_tl204_fires_when_a_booking_is_made_twice(key, post_request):
    history = [SYSTEM, booking("call_1"), tool("call_1", '{"outcome": "booked"}'), {"role": "user", "content": "Did it work?"}]
    post_request(key, "c", {"messages": history})
    history += [booking("call_2"), tool("call_2", "IN_PROGRESS")]
    found = codes(post_request(key, "c", {"messages": history}))
    assert ("TL204", None, "call_2") in found and "TL205" not in [c[0] for c in found]


def test_tl204_stays_quiet_for_a_different_slot_or_a_lookup(key, post_request):
    history = [SYSTEM, booking("call_1"), tool("call_1", '{"outcome": "booked"}'), {"role": "user", "content": "And Saturday?"}]
    post_request(key, "c", {"messages": history})
    history += [booking("call_2", day="Sat"), tool("call_2", "IN_PROGRESS")]
    assert timeline_codes(post_request(key, "c", {"messages": history})) == []
    # The real interruption capture checks availability twice, for different days.
    for body in sample_bodies("interruption_sync_tool"):
        assert "TL205" not in [c[0] for c in codes(post_request(key, "int", body))]


def test_tl205_fires_when_a_cancelled_slot_makes_the_model_call_again(key, post_request):
    history = [SYSTEM, booking("call_1"), tool("call_1", "CANCELLED"), {"role": "user", "content": "Is it booked?"}]
    post_request(key, "c", {"messages": history})
    history += [booking("call_2"), tool("call_2", "IN_PROGRESS")]
    found = [c[0] for c in codes(post_request(key, "c", {"messages": history}))]
    assert "TL205" in found and "TL204" in found


def test_tl207_fires_on_a_hold_released_by_timeout_only(key, post_events):
    from calls.models import Finding

    post_events(key, "c", [{"type": "hold.started", "tool_call_ids": ["call_1"]}, {"type": "hold.released", "tool_call_ids": ["call_1"], "cause": "result"}])
    assert not Finding.objects.filter(code="TL207").exists()
    post_events(key, "c", {"type": "hold.released", "tool_call_ids": ["call_2"], "cause": "timeout"})
    assert list(Finding.objects.filter(code="TL207").values_list("tool_call_id", flat=True)) == ["call_2"]


@pytest.mark.parametrize(
    "body, fires",
    [
        ({"choices": [{"message": {"role": "assistant", "content": ""}, "finish_reason": "length"}]}, True),
        ({"content": [], "stop_reason": "max_tokens"}, True),
        ({"candidates": [{"content": {"parts": [{"text": "thinking...", "thought": True}]}, "finishReason": "MAX_TOKENS"}]}, True),
        ({"choices": [{"message": {"role": "assistant", "content": "Friday at 3."}, "finish_reason": "stop"}]}, False),
        ({"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]}, "finish_reason": "tool_calls"}]}, False),
        ({"something": "else"}, False),
    ],
)
def test_rs301_flags_silent_responses(key, post_events, body, fires):
    from calls.models import Finding

    assert post_events(key, "c", {"type": "response", "body": body}).status_code == 201
    assert Finding.objects.filter(code="RS301").exists() == fires


def test_a_result_delivered_as_a_developer_message_settles_the_slot(key, post_request):
    """Pipecat's async flow: the slot keeps 'running' but the result reached the model."""
    from calls.models import Call, ToolCall

    running = tool("call_X", json.dumps({"type": "async_tool", "status": "running", "tool_call_id": "call_X"}))
    history = [SYSTEM, {"role": "user", "content": "Friday?"}, booking("call_X"), running]
    post_request(key, "c", {"messages": history})
    finished = {"role": "developer", "content": json.dumps({"type": "async_tool", "tool_call_id": "call_X", "status": "finished", "result": "ok"})}
    history += [{"role": "assistant", "content": "One moment."}, finished]
    post_request(key, "c", {"messages": history})
    assert ToolCall.objects.get(tool_call_id="call_X").state == "delivered"
    assert Call.objects.get().pending_placeholders == 0
    history += [{"role": "assistant", "content": "Booked!"}, {"role": "user", "content": "Thanks, bye"}]
    assert timeline_codes(post_request(key, "c", {"messages": history})) == []


def test_tl202_ignores_caller_words_sent_before_the_tool_started(key, post_request):
    body = {"messages": [SYSTEM, {"role": "user", "content": "Book Friday."}, booking("call_X"), tool("call_X", "IN_PROGRESS")]}
    assert timeline_codes(post_request(key, "c", body)) == []


def test_tc003_sees_an_id_reused_across_requests(key, post_request):
    history = [SYSTEM, {"role": "user", "content": "hi"}, booking("call_0"), tool("call_0", "ok"), {"role": "user", "content": "again"}]
    post_request(key, "c", {"messages": history})
    history += [booking("call_0", day="Sat"), tool("call_0", "ok too")]
    assert ("TC003", 5, "call_0") in codes(post_request(key, "c", {"messages": history}))


def test_tl210_stays_quiet_once_the_missing_call_is_put_back(key, post_request):
    user = {"role": "user", "content": "Book Friday."}
    late = tool("call_X", '{"outcome": "booked"}')
    post_request(key, "c", {"messages": [SYSTEM, user, late, {"role": "user", "content": "Hello?"}]})
    repaired = [SYSTEM, user, booking("call_X"), late, {"role": "user", "content": "Hello?"}]
    assert "TL210" not in [c[0] for c in codes(post_request(key, "c", {"messages": repaired}))]


def test_tl204_sees_a_double_booking_within_one_request(key, post_request):
    both = {"role": "assistant", "tool_calls": booking("call_1")["tool_calls"] + booking("call_2")["tool_calls"]}
    body = {"messages": [SYSTEM, {"role": "user", "content": "Book it"}, both, tool("call_1", "ok"), tool("call_2", "ok")]}
    found = codes(post_request(key, "c", body))
    assert [c for c in found if c[0] == "TL204"] == [("TL204", None, "call_2")]


@pytest.mark.parametrize(
    "message",
    [
        {"role": "assistant", "content": None, "audio": {"id": "a", "transcript": "Friday at three."}},
        {"role": "assistant", "content": None, "refusal": "I can't help with that."},
    ],
)
def test_rs301_is_quiet_for_spoken_audio_and_refusals(key, post_events, message):
    from calls.models import Finding

    post_events(key, "c", {"type": "response", "body": {"choices": [{"message": message, "finish_reason": "stop"}]}})
    assert not Finding.objects.filter(code="RS301").exists()


def test_tl206_moving_anthropics_cache_breakpoint_is_no_rewrite(key, post_request):
    first = {"system": "s", "model": "claude-sonnet-4", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Friday?", "cache_control": {"type": "ephemeral"}}]},
    ]}
    post_request(key, "c", first)
    second = {"system": "s", "model": "claude-sonnet-4", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Friday?"}]},
        {"role": "assistant", "content": "Yes, at three."},
        {"role": "user", "content": [{"type": "text", "text": "Book it.", "cache_control": {"type": "ephemeral"}}]},
    ]}
    assert "TL206" not in [c[0] for c in codes(post_request(key, "c", second))]


def at(seconds):
    return f"2026-11-30T10:00:{seconds:02d}Z" if seconds < 60 else f"2026-11-30T10:{seconds // 60:02d}:{seconds % 60:02d}Z"


def test_tl207_fires_when_a_placeholder_runs_past_the_threshold(key, post_request):
    history = [SYSTEM, {"role": "user", "content": "Book it."}, booking("call_A"), tool("call_A", "IN_PROGRESS")]
    post_request(key, "c", {"messages": history}, **{"X-Sent-At": at(0)})
    history += [{"role": "assistant", "content": "One moment."}]
    assert "TL207" not in [c[0] for c in codes(post_request(key, "c", {"messages": history}, **{"X-Sent-At": at(20)}))]
    history[3] = tool("call_A", '{"outcome": "booked"}')
    found = codes(post_request(key, "c", {"messages": history}, **{"X-Sent-At": at(45)}))
    assert ("TL207", None, "call_A") in found


def test_tl207_stays_quiet_for_a_slot_settled_in_time(key, post_request):
    history = [SYSTEM, booking("call_A"), tool("call_A", "IN_PROGRESS")]
    post_request(key, "c", {"messages": history}, **{"X-Sent-At": at(0)})
    history[2] = tool("call_A", '{"outcome": "booked"}')
    history += [{"role": "assistant", "content": "Booked."}]
    assert codes(post_request(key, "c", {"messages": history}, **{"X-Sent-At": at(29)})) == []
    # Much later requests do not count the settled slot.
    history += [{"role": "user", "content": "Thanks."}]
    assert codes(post_request(key, "c", {"messages": history}, **{"X-Sent-At": at(300)})) == []


def test_tl207_measures_a_still_running_slot_when_the_call_ends(key, post_request, post_events):
    from calls.models import Finding

    post_request(key, "c", {"messages": [SYSTEM, booking("call_A"), tool("call_A", "IN_PROGRESS")]}, **{"X-Sent-At": at(0)})
    post_events(key, "c", {"type": "call.ended", "at": at(90)})
    assert Finding.objects.get(code="TL207").detail == {"seconds": 90.0, "threshold": 30}


def test_tl203_fires_when_a_result_the_model_had_is_dropped(key, post_request):
    """LiveKit #3702: the interruption drops the finished pair; the model books again."""
    user = {"role": "user", "content": "Book Friday."}
    pair = [booking("call_A"), tool("call_A", '{"outcome": "booked", "ref": "B-17"}')]
    post_request(key, "c", {"messages": [SYSTEM, user, *pair]})
    dropped = {"messages": [SYSTEM, user, {"role": "user", "content": "Wait, is it booked?"}]}
    found = codes(post_request(key, "c", dropped))
    assert ("TL203", None, "call_A") in found


def test_tl203_stays_quiet_when_the_result_moves_or_a_placeholder_goes(key, post_request):
    user = {"role": "user", "content": "Book Friday."}
    # A placeholder dropped with its call is not a lost result (nothing was produced).
    post_request(key, "p", {"messages": [SYSTEM, user, booking("call_A"), tool("call_A", "IN_PROGRESS")]})
    assert "TL203" not in [c[0] for c in codes(post_request(key, "p", {"messages": [SYSTEM, user]}))]
    # A result re-sent as a developer message still reaches the model.
    post_request(key, "m", {"messages": [SYSTEM, user, booking("call_B"), tool("call_B", '{"outcome": "booked"}')]})
    moved = {"role": "developer", "content": json.dumps({"tool_call_id": "call_B", "result": "booked"})}
    assert "TL203" not in [c[0] for c in codes(post_request(key, "m", {"messages": [SYSTEM, user, moved]}))]


def test_tl203_fires_when_a_finished_tool_never_reaches_a_request(key, post_request, post_events):
    from calls.models import Finding, ToolCall

    history = [SYSTEM, {"role": "user", "content": "Book it."}, booking("call_A")]
    post_request(key, "c", {"messages": history})
    post_events(key, "c", {"type": "tool.finished", "tool_call_id": "call_A", "name": "book_appointment", "result": "booked"})
    history = [SYSTEM, {"role": "user", "content": "Book it."}, {"role": "user", "content": "Hello?"}]
    post_request(key, "c", {"messages": history})
    assert not Finding.objects.filter(code="TL203").exists()  # one request may be in flight
    history += [{"role": "user", "content": "Anyone there?"}]
    found = codes(post_request(key, "c", {"messages": history}))
    assert ("TL203", None, "call_A") in found
    finished = [h for h in ToolCall.objects.get(tool_call_id="call_A").history if h.get("event")]
    assert [h["state"] for h in finished] == ["finished"]


def test_tl203_stays_quiet_when_the_finished_result_lands_in_its_slot(key, post_request, post_events):
    from calls.models import Finding

    history = [SYSTEM, booking("call_A"), tool("call_A", "IN_PROGRESS")]
    post_request(key, "c", {"messages": history})
    post_events(key, "c", {"type": "tool.finished", "tool_call_id": "call_A"})
    history[2] = tool("call_A", '{"outcome": "booked"}')
    for extra in ("Booked.", "Anything else?", "Bye."):
        history += [{"role": "assistant", "content": extra}]
        post_request(key, "c", {"messages": history})
    post_events(key, "c", {"type": "call.ended"})
    assert not Finding.objects.filter(code="TL203").exists()


def spoken_and_called(text, call_id="call_A"):
    return {"type": "response", "body": {"choices": [{"finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": text,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "book_appointment", "arguments": "{}"}}]}}]}}


def test_rs302_fires_when_the_words_before_a_tool_call_are_dropped(key, post_request, post_events):
    """pipecat #3023: text and tool calls in one response; the text never reaches the history."""
    history = [SYSTEM, {"role": "user", "content": "Book Friday."}]
    post_request(key, "c", {"messages": history})
    post_events(key, "c", spoken_and_called("Let me book Friday at 3:30 for you."))
    history += [booking("call_A"), tool("call_A", "IN_PROGRESS")]
    found = codes(post_request(key, "c", {"messages": history}))
    assert ("RS302", None, "call_A") in found


@pytest.mark.parametrize("kept", ["Let me book Friday at 3:30 for you.", "Let me book"])
def test_rs302_stays_quiet_when_the_words_are_kept_even_cut_short(key, post_request, post_events, kept):
    history = [SYSTEM, {"role": "user", "content": "Book Friday."}]
    post_request(key, "c", {"messages": history})
    post_events(key, "c", spoken_and_called("Let me book Friday at 3:30 for you."))
    call = booking("call_A")
    call["content"] = kept
    history += [call, tool("call_A", "IN_PROGRESS")]
    assert "RS302" not in [c[0] for c in codes(post_request(key, "c", {"messages": history}))]


def test_rs302_stays_quiet_when_the_response_was_discarded(key, post_request, post_events):
    """The caller interrupted before anything was said: neither words nor calls were kept."""
    history = [SYSTEM, {"role": "user", "content": "Book Friday."}]
    post_request(key, "c", {"messages": history})
    post_events(key, "c", spoken_and_called("Let me book Friday."))
    history += [{"role": "user", "content": "Actually, Saturday."}]
    assert "RS302" not in [c[0] for c in codes(post_request(key, "c", {"messages": history}))]


def test_a_response_event_issues_its_tool_calls_before_the_next_request(key, post_request, post_events):
    """Calls seen in responses count: the slot exists, and the request issuing it is no duplicate."""
    from calls.models import ToolCall

    post_request(key, "c", {"messages": [SYSTEM, {"role": "user", "content": "Book Friday."}]})
    post_events(key, "c", spoken_and_called("Booking.", "call_R"))
    row = ToolCall.objects.get(tool_call_id="call_R")
    assert (row.name, row.issued_turn, row.state) == ("book_appointment", 1, "issued")
    call = booking("call_R")
    call["content"] = "Booking."
    answer = post_request(key, "c", {"messages": [SYSTEM, {"role": "user", "content": "Book Friday."}, call, tool("call_R", "IN_PROGRESS")]})
    assert "TC003" not in [c[0] for c in codes(answer)]
    row.refresh_from_db()
    assert row.state == "pending"
    assert [(h["state"], h.get("event")) for h in row.history] == [
        ("issued", "response"), ("issued", None), ("pending", None)
    ]


def test_project_thresholds_and_side_effect_pattern_apply(key, project, post_request):
    project.rule_settings = {"thresholds": {"never_settled_after": 1}, "side_effect_pattern": "^reserve_"}
    project.save()
    history = [SYSTEM, booking("call_A"), tool("call_A", "IN_PROGRESS")]
    post_request(key, "c", {"messages": history})
    history += [{"role": "assistant", "content": "One moment."}]
    assert ("TL201", None, "call_A") in codes(post_request(key, "c", {"messages": history}))
    # book_appointment no longer counts as side-effecting: no TL204 for a second booking.
    history = [SYSTEM, booking("call_1"), tool("call_1", '{"ok": true}'), {"role": "user", "content": "?"}, booking("call_2"), tool("call_2", '{"ok": true}')]
    post_request(key, "d", {"messages": history[:4]})
    assert "TL204" not in [c[0] for c in codes(post_request(key, "d", {"messages": history}))]


def test_project_placeholder_patterns_make_a_slot_pending(key, project, post_request):
    project.rule_settings = {"placeholders": ["pending regex ^Working on it", "terminal field state=aborted"]}
    project.save()
    first = codes(post_request(key, "c", {"messages": [SYSTEM, booking("call_A"), tool("call_A", "Working on it, hold on")]}))
    assert ("TR101", 2, "call_A") in first
    from calls.models import ToolCall

    assert ToolCall.objects.get(tool_call_id="call_A").state == "pending"
    post_request(key, "d", {"messages": [SYSTEM, booking("call_B"), tool("call_B", '{"state": "aborted"}')]})
    assert ToolCall.objects.get(tool_call_id="call_B").state == "settled"
    # Without the project's patterns the same texts are plain results.
    post_request(key, "c2", {"messages": [SYSTEM, booking("call_C"), tool("call_C", "Still working on it")]})
    assert ToolCall.objects.get(tool_call_id="call_C").state == "result"


def test_gemini_calls_without_ids_get_a_slot_and_a_lifecycle(key, post_request, alice_client):
    """Gemini's ids are optional: the rows pair by position and name, as the rules do."""
    from calls.models import ToolCall

    user = {"role": "user", "parts": [{"text": "Is Friday free?"}]}
    model = {"role": "model", "parts": [
        {"functionCall": {"name": "check_availability", "args": {"day": "Fri"}}},
        {"functionCall": {"name": "get_weather", "args": {"city": "Pune"}}},
    ]}
    running = {"role": "user", "parts": [
        {"functionResponse": {"name": "get_weather", "response": {"sky": "clear"}}},
        {"functionResponse": {"name": "check_availability", "response": {"status": "IN_PROGRESS", "outcome": "running"}}},
    ]}
    post_request(key, "g", {"contents": [user, model, running]})
    rows = {t.name: t for t in ToolCall.objects.all()}
    slot = rows["check_availability"].tool_call_id
    assert slot.startswith("gemini:") and slot.endswith(":0")
    assert (rows["check_availability"].state, rows["get_weather"].state) == ("pending", "result")
    done = {"role": "user", "parts": [
        {"functionResponse": {"name": "get_weather", "response": {"sky": "clear"}}},
        {"functionResponse": {"name": "check_availability", "response": {"free": ["15:00"]}}},
    ]}
    post_request(key, "g", {"contents": [user, model, done]})
    row = ToolCall.objects.get(tool_call_id=slot)
    assert [h["state"] for h in row.history] == ["issued", "pending", "result"]
    # Trimming the oldest message moves the pair: the same slot, no new row, nothing lost.
    answer = post_request(key, "g", {"contents": [model, done, {"role": "user", "parts": [{"text": "Thanks"}]}]})
    assert [f["code"] for f in answer.json()["findings"] if f["code"].startswith(("TL", "TC"))] in ([], ["TL206"])
    assert ToolCall.objects.count() == 2 and ToolCall.objects.get(tool_call_id=slot).state == "result"
    page = alice_client.get("/p/clinic/calls/g/").content.decode()
    assert "{&quot;free&quot;:[&quot;15:00&quot;]}" in page  # the result text, paired by position


def test_deprecated_function_calls_get_a_slot(key, post_request):
    from calls.models import ToolCall

    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": "{}"}},
        {"role": "function", "name": "get_weather", "content": "sunny"},
    ]
    answer = post_request(key, "d", {"messages": messages})
    assert answer.json()["findings"] == []
    assert ToolCall.objects.get().state == "result"
    messages += [{"role": "user", "content": "Again?"}, messages[1], messages[2]]
    assert "TC003" not in [f["code"] for f in post_request(key, "d", {"messages": messages}).json()["findings"]]


def test_trimming_the_oldest_messages_reissues_nothing(key, post_request):
    """A summariser drops the first turns: later call messages move but are not new."""
    history = [SYSTEM, {"role": "user", "content": "Hi"}, booking("call_1"), tool("call_1", '{"ok": true}'), {"role": "user", "content": "Thanks"}]
    post_request(key, "c", {"messages": history})
    trimmed = [SYSTEM, *history[2:], {"role": "user", "content": "Bye"}]
    codes_now = [c[0] for c in codes(post_request(key, "c", {"messages": trimmed}))]
    assert "TC003" not in codes_now and "TL204" not in codes_now
    from calls.models import ToolCall

    assert [h["state"] for h in ToolCall.objects.get().history] == ["issued", "result"]


def test_a_call_announced_by_a_response_event_still_counts_as_a_repeat(key, post_request, post_events):
    history = [SYSTEM, booking("call_A"), tool("call_A", '{"outcome": "booked"}'), {"role": "user", "content": "Did it work?"}]
    post_request(key, "c", {"messages": history})
    post_events(key, "c", {"type": "response", "body": {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": booking("call_B")["tool_calls"]}}]}})
    history += [booking("call_B"), tool("call_B", "IN_PROGRESS")]
    assert ("TL204", None, "call_B") in codes(post_request(key, "c", {"messages": history}))
