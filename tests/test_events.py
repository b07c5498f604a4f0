import pytest

from calls.models import Call, Event

ALL_TYPES = [
    {"type": "response", "body": {"choices": [{"message": {"content": "hi"}}]}, "turn": 1},
    {"type": "tool.started", "tool_call_id": "call_1", "name": "book_appointment"},
    {"type": "tool.finished", "tool_call_id": "call_1", "name": "book_appointment", "result": {"ok": True}},
    {"type": "tool.cancelled", "tool_call_id": "call_2"},
    {"type": "hold.started", "tool_call_ids": ["call_1"]},
    {"type": "hold.released", "tool_call_ids": ["call_1"], "cause": "timeout"},
    {"type": "interruption", "at": "2026-11-30T05:04:01.000+05:30"},
    {"type": "call.ended"},
]


def test_it_stores_every_event_type_in_one_post(key, post_events):
    response = post_events(key, "c", ALL_TYPES)
    assert response.status_code == 201
    answer = response.json()
    assert {k: answer[k] for k in ("call", "stored", "duplicates")} == {"call": "c", "stored": 8, "duplicates": 0}
    # The findings these events raised: the hold timed out, and call_1 finished but no
    # request ever carried its result.
    assert sorted((f["code"], f["tool_call_id"]) for f in answer["findings"]) == [
        ("TL203", "call_1"), ("TL207", "call_1")
    ]
    assert [e.type for e in Event.objects.order_by("pk")] == [e["type"] for e in ALL_TYPES]
    interruption = Event.objects.get(type="interruption")
    assert interruption.at.isoformat() == "2026-11-29T23:34:01+00:00"
    assert Event.objects.get(type="tool.finished").fields["result"] == {"ok": True}


def test_a_single_event_object_is_accepted(key, post_events):
    assert post_events(key, "c", {"type": "interruption"}).status_code == 201


def test_call_ended_ends_the_call_and_a_later_request_reopens_it(key, post_events, post_request):
    post_request(key, "c", {"messages": []})
    post_events(key, "c", {"type": "call.ended"})
    call = Call.objects.get()
    assert call.status == "ended" and call.ended_at is not None
    post_request(key, "c", {"messages": []})
    call.refresh_from_db()
    assert call.status == "live"


def test_a_call_idle_past_the_timeout_counts_as_ended(key, post_request, settings):
    post_request(key, "c", {"messages": []})
    assert Call.objects.get().status == "live"
    settings.CALLSCOPE_IDLE_TIMEOUT = 0
    assert Call.objects.get().status == "ended"


def test_events_without_a_turn_attach_to_the_latest_one(key, post_events, post_request):
    post_events(key, "c", {"type": "interruption"})
    post_request(key, "c", {"messages": []})
    post_request(key, "c", {"messages": []})
    post_events(key, "c", [{"type": "interruption"}, {"type": "response", "body": {}, "turn": 1}])
    assert [e.turn for e in Event.objects.order_by("pk")] == [0, 2, 1]


@pytest.mark.parametrize(
    "event, code",
    [
        ({"type": "tool.exploded"}, "unknown_event_type"),
        ({}, "unknown_event_type"),
        ({"type": "response"}, "invalid_event"),
        ({"type": "tool.finished"}, "invalid_event"),
        ({"type": "tool.finished", "tool_call_id": ""}, "invalid_event"),
        ({"type": "hold.started", "tool_call_ids": []}, "invalid_event"),
        ({"type": "hold.released", "tool_call_ids": ["a"]}, "invalid_event"),
        ({"type": "hold.released", "tool_call_ids": ["a"], "cause": "boredom"}, "invalid_event"),
        ({"type": "interruption", "at": "5 past 4"}, "invalid_timestamp"),
        ({"type": "interruption", "turn": 0}, "invalid_event"),
        ("interruption", "invalid_event"),
    ],
)
def test_one_bad_event_rejects_the_whole_post(key, post_events, event, code):
    post_events(key, "c", {"type": "interruption"})
    response = post_events(key, "c", [{"type": "interruption"}, event])
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == code
    assert "[1]" in error["message"]
    assert Event.objects.count() == 1


def test_an_empty_array_is_refused(key, post_events):
    response = post_events(key, "c", [])
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "no_events"


def test_retried_events_are_stored_once(key, post_events):
    batch = [{"type": "tool.started", "tool_call_id": "c1", "id": "e1"}, {"type": "interruption", "id": "e2"}]
    assert post_events(key, "c", batch).json()["stored"] == 2
    again = post_events(key, "c", batch)
    assert again.status_code == 200
    assert again.json() == {"call": "c", "stored": 0, "duplicates": 2, "findings": []}
    header_batch = [{"type": "interruption"}]
    post_events(key, "c", header_batch, **{"Idempotency-Key": "k1"})
    post_events(key, "c", header_batch, **{"Idempotency-Key": "k1"})
    assert Event.objects.count() == 3


def test_events_need_a_key_of_the_project(client):
    response = client.post("/api/v1/calls/c/events", data="{}", content_type="application/json")
    assert response.status_code == 401


def test_events_with_nul_and_lone_surrogates_are_stored(key, post_events):
    body = b'{"type": "tool.finished", "tool_call_id": "c\\u0000\\ud800", "result": "x\\u0000\\udfff"}'
    response = post_events(key, "c", body)
    assert response.status_code == 201, response.content
    event = Event.objects.get()
    assert event.fields["result"] == "x\x00\udfff"


def test_an_event_id_reused_for_another_event_is_a_conflict(key, post_events):
    post_events(key, "c", {"type": "interruption", "id": "e1"})
    response = post_events(key, "c", [{"type": "call.ended"}, {"type": "call.ended", "id": "e1"}])
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "idempotency_key_reused"
    assert Event.objects.count() == 1


def test_an_idempotency_key_reused_for_other_events_is_a_conflict(key, post_events):
    post_events(key, "c", [{"type": "interruption"}], **{"Idempotency-Key": "k"})
    response = post_events(key, "c", [{"type": "call.ended"}], **{"Idempotency-Key": "k"})
    assert response.status_code == 409
    assert Call.objects.get().ended_at is None


def test_event_ids_and_header_keys_never_collide(key, post_events):
    post_events(key, "c", [{"type": "interruption"}], **{"Idempotency-Key": "k"})
    response = post_events(key, "c", {"type": "interruption", "id": "k#0"})
    assert response.json()["stored"] == 1
