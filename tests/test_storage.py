"""Storage grows with what is new in each request, not with the history re-sent."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from calls import history
from calls.models import CallTip, Message, ToolCall, Turn
from calls.synthetic import synthetic_call
from tests.conftest import sample_bodies


def stored_bytes(call_external_id: str) -> int:
    turns = Turn.objects.filter(call__external_id=call_external_id)
    total = sum(len(bytes(t.raw_blob)) + len(json.dumps(t.changes)) + len(json.dumps(t.snapshot or [])) for t in turns)
    total += sum(len(m.body.encode()) for m in Message.objects.filter(call__external_id=call_external_id))
    tip = CallTip.objects.get(call__external_id=call_external_id)
    return total + len(bytes(tip.raw)) + len(json.dumps(tip.messages))


@pytest.fixture
def long_call(key, post_request, settings):
    settings.CALLSCOPE_RAW_CHECKPOINT_EVERY = 32
    bodies = synthetic_call(300, seed=7)
    for body in bodies:
        assert post_request(key, "long", body).status_code == 201
    return bodies


def test_a_300_turn_call_stores_a_small_fraction_of_its_raw_bodies(long_call):
    raw_total = sum(len(b) for b in long_call)
    assert stored_bytes("long") < raw_total * 0.05


def test_each_distinct_message_is_stored_once(long_call):
    distinct = {json.dumps(m, sort_keys=False) for b in long_call for m in json.loads(b)["messages"]}
    assert Message.objects.filter(call__external_id="long").count() == len(distinct)


def test_every_turn_reads_back_its_exact_body_and_message_list(long_call, client, key):
    turns = {t.number: t for t in Turn.objects.filter(call__external_id="long")}
    # Whole copies, deltas right after them, and the last turn before the next copy.
    for number in [1, 2, 31, 32, 33, 64, 65, 299, 300]:
        body = long_call[number - 1]
        assert history.raw_body(turns[number]) == body
        messages = [json.loads(m.body) for m in history.messages(turns[number])]
        assert messages == json.loads(body)["messages"]


def test_a_placeholder_overwritten_in_place_is_a_change_not_a_new_history(long_call):
    turn = Turn.objects.get(call__external_id="long", number=4)  # turn 3 called a tool
    assert turn.previous_message_count == turn.message_count
    ((position, new, old),) = turn.changes
    assert json.loads(Message.objects.get(pk=old).body)["content"] == "IN_PROGRESS"
    assert json.loads(Message.objects.get(pk=new).body)["content"].startswith('{"outcome"')
    tool_call = ToolCall.objects.filter(call__external_id="long").order_by("issued_turn").first()
    assert [h["state"] for h in tool_call.history] == ["issued", "pending", "result"]


def test_ingest_work_does_not_grow_with_call_length(key, post_request):
    bodies = synthetic_call(300, seed=11)
    counts = {}
    for number, body in enumerate(bodies, start=1):
        with CaptureQueriesContext(connection) as queries:
            post_request(key, "q", body)
        counts[number] = len(queries)
    # Late turns run no more queries than early ones: nothing reads the history.
    assert max(counts[n] for n in range(250, 301)) <= max(counts[n] for n in range(5, 25))


def test_a_rewritten_history_is_stored_as_what_changed(key, post_request):
    bodies = sample_bodies("interruption_sync_tool")
    for body in bodies:
        post_request(key, "int", body)
    numbers = Turn.objects.filter(call__external_id="int").order_by("number")
    for turn, body in zip(numbers, bodies, strict=True):
        assert history.raw_body(turn) == body
        assert [json.loads(m.body) for m in history.messages(turn)] == json.loads(body)["messages"]


def test_calls_stay_readable_after_the_checkpoint_setting_changes(key, post_request, settings):
    settings.CALLSCOPE_RAW_CHECKPOINT_EVERY = 4
    bodies = synthetic_call(12, seed=2)
    for body in bodies[:6]:
        post_request(key, "c", body)
    settings.CALLSCOPE_RAW_CHECKPOINT_EVERY = 5
    for body in bodies[6:]:
        post_request(key, "c", body)
    settings.CALLSCOPE_RAW_CHECKPOINT_EVERY = 2
    for turn, body in zip(Turn.objects.filter(call__external_id="c").order_by("number"), bodies, strict=True):
        assert history.raw_body(turn) == body
        assert [json.loads(m.body) for m in history.messages(turn)] == json.loads(body)["messages"]
