"""Findings through the real ingest API: answered, stored once, shown, and /api/v1/check."""

import json

import pytest

from calls.models import Call, Finding
from tests.conftest import sample_bodies

ORPHAN = {
    "model": "gpt-4.1-mini",
    "messages": [
        {"role": "system", "content": "You are Sita."},
        {"role": "user", "content": "Friday?"},
        {"role": "tool", "tool_call_id": "call_lost", "content": '{"free": ["15:00"]}'},
        {"role": "user", "content": "Hello?"},
    ],
}


def test_the_ingest_answer_carries_the_findings_of_that_turn(key, post_request):
    bodies = sample_bodies("async_tool_user_speaks")
    answers = [post_request(key, "c", body).json() for body in bodies]
    assert [[f["code"] for f in a["findings"]] for a in answers] == [
        [], ["TL202", "TR101"], ["TR102", "TR103", "TR104"], [], [],
    ]
    tr104 = answers[2]["findings"][2]
    assert tr104["severity"] == "warning" and tr104["message_index"] == 6
    assert tr104["name"] == "escaped-non-latin" and tr104["detail"]["escapes"] > 0
    assert tr104["tool_call_id"].startswith("call_")


def test_a_finding_in_a_resent_message_is_reported_once(key, post_request):
    first = post_request(key, "c", ORPHAN).json()
    assert [f["code"] for f in first["findings"]] == ["TC001"]
    again = {**ORPHAN, "messages": ORPHAN["messages"] + [{"role": "user", "content": "Anyone?"}]}
    # Not TC001 again: TL210 says the error is still in the history.
    assert [f["code"] for f in post_request(key, "c", again).json()["findings"]] == ["TL210"]
    assert Finding.objects.filter(code="TC001").count() == 1
    call = Call.objects.get()
    assert (call.findings_error, call.findings_warning, call.worst_severity) == (1, 1, "error")


def test_an_idempotent_retry_answers_the_same_findings(key, post_request):
    first = post_request(key, "c", ORPHAN, **{"Idempotency-Key": "k"}).json()
    retry = post_request(key, "c", ORPHAN, **{"Idempotency-Key": "k"}).json()
    assert retry == first and retry["findings"]


def test_the_call_api_lists_findings_by_turn(key, post_request, client):
    post_request(key, "c", {"messages": ORPHAN["messages"][:2]})
    post_request(key, "c", ORPHAN)
    data = client.get("/api/v1/calls/c", headers={"Authorization": f"Bearer {key}"}).json()
    assert data["findings_by_severity"] == {"error": 1, "warning": 0, "info": 0}
    assert [t["findings"] for t in data["turns"]][0] == []
    assert data["turns"][1]["findings"][0]["code"] == "TC001"


def test_findings_show_on_the_call_page_and_the_list(key, post_request, alice, client):
    for body in sample_bodies("async_tool_user_speaks"):
        post_request(key, "c", body)
    client.force_login(alice)
    page = client.get("/p/clinic/calls/c/").content.decode()
    assert page.count('class="finding sev-') >= 4
    assert "/rules/TR104/" in page and "non-Latin characters" in page
    listing = client.get("/p/clinic/").content.decode()
    assert "4 warnings" in listing and "1 info" in listing


def test_check_analyses_one_body_and_stores_nothing(key, client):
    response = client.post(
        "/api/v1/check", data=json.dumps(ORPHAN), content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )
    assert response.status_code == 200
    assert [f["code"] for f in response.json()["findings"]] == ["TC001"]
    assert Call.objects.count() == 0 and Finding.objects.count() == 0


def test_check_analyses_consecutive_bodies_like_a_call(key, client):
    bodies = [json.loads(b) for b in sample_bodies("async_tool_user_speaks")]
    response = client.post(
        "/api/v1/check", data=json.dumps(bodies), content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )
    answers = response.json()["requests"]
    assert [[f["code"] for f in a["findings"]] for a in answers] == [
        [], ["TL202", "TR101"], ["TR102", "TR103", "TR104"], [], [],
    ]
    assert Call.objects.count() == 0


def test_check_answers_what_ingest_answers(key, client, post_request):
    for name in ("async_tool_user_speaks", "interruption_sync_tool", "sync_tool"):
        bodies = sample_bodies(name)
        checked = check(client, key, [json.loads(b) for b in bodies]).json()["requests"]
        ingested = [post_request(key, name, b).json()["findings"] for b in bodies]
        strip = lambda found: [{k: v for k, v in f.items() if k != "turn"} for f in found]  # noqa: E731
        assert [strip(c["findings"]) for c in checked] == [strip(i) for i in ingested]


def test_check_needs_a_key_and_a_model_request(client, key):
    assert client.post("/api/v1/check", data="{}", content_type="application/json").status_code == 401
    response = client.post(
        "/api/v1/check", data='{"prompt": "hi"}', content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )
    assert response.status_code == 400 and response.json()["error"]["code"] == "unrecognized_format"


def check(client, key, body):
    return client.post(
        "/api/v1/check", data=json.dumps(body), content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )


def test_check_runs_the_timeline_rules_over_a_sequence_and_stores_nothing(key, client):
    from calls.models import Event, ToolCall, Turn

    system, user = {"role": "system", "content": "Sita"}, {"role": "user", "content": "Book Friday."}
    call = {"role": "assistant", "tool_calls": [{"id": "call_X", "type": "function", "function": {"name": "book_appointment", "arguments": "{}"}}]}
    late = {"role": "tool", "tool_call_id": "call_X", "content": '{"outcome": "booked"}'}
    steps = [
        {"messages": [system, user]},
        {
            "request": {"messages": [system, user, call, {"role": "tool", "tool_call_id": "call_X", "content": "IN_PROGRESS"}]},
            "sent_at": "2026-11-30T10:00:00Z",
        },
        # The caller interrupts; the call message is dropped and the late result lands alone.
        {"request": {"messages": [system, user, late, {"role": "user", "content": "Hello?"}]}, "sent_at": "2026-11-30T10:00:40Z"},
        {"events": [{"type": "call.ended"}]},
    ]
    answer = check(client, key, steps)
    assert answer.status_code == 200, answer.content
    found = [[f["code"] for f in step["findings"]] for step in answer.json()["requests"]]
    assert found[0] == [] and "TR101" in found[1]
    assert {"TL208", "TC001", "TL207"} <= set(found[2])
    assert answer.json()["requests"][3]["format"] is None
    assert (Call.objects.count(), Turn.objects.count(), Finding.objects.count()) == (0, 0, 0)
    assert (ToolCall.objects.count(), Event.objects.count()) == (0, 0)


def test_check_sees_response_events_between_requests(key, client):
    user = {"role": "user", "content": "Book Friday."}
    response = {"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": "Booking Friday now.", "tool_calls": [{"id": "call_A", "type": "function", "function": {"name": "book", "arguments": "{}"}}]}}]}
    dropped = {"role": "assistant", "content": None, "tool_calls": response["choices"][0]["message"]["tool_calls"]}
    steps = [
        {"request": {"messages": [user]}, "events": [{"type": "response", "body": response}]},
        {"messages": [user, dropped, {"role": "tool", "tool_call_id": "call_A", "content": "IN_PROGRESS"}]},
    ]
    answers = check(client, key, steps).json()["requests"]
    assert "RS302" in [f["code"] for f in answers[1]["findings"]]


def test_check_uses_the_projects_rule_settings(key, client, project):
    project.rule_settings = {"off": ["TC001"]}
    project.save()
    assert check(client, key, ORPHAN).json()["findings"] == []
    assert [s["findings"] for s in check(client, key, [ORPHAN]).json()["requests"]] == [[]]


@pytest.mark.parametrize(
    "steps, code, where",
    [
        ([], "invalid_shape", "between 1 and"),
        ([{"messages": []}] * 201, "invalid_shape", "between 1 and"),
        ([{"messages": []}, {"prompt": "hi"}], "unrecognized_format", "Step [1]"),
        ([{"request": {"messages": []}, "events": [{"type": "nope"}]}], "unknown_event_type", "Step [0]"),
        ([{"request": {"messages": []}, "sent_at": "yesterday"}], "invalid_sent_at", "Step [0]"),
    ],
)
def test_check_refuses_a_bad_step_naming_it(key, client, steps, code, where):
    answer = check(client, key, steps)
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == code and where in answer.json()["error"]["message"]
    assert Call.objects.count() == 0


def test_check_refuses_one_event_id_used_for_two_events(key, client):
    steps = [
        {"request": {"messages": [{"role": "user", "content": "hi"}]}, "events": [{"type": "interruption", "id": "e1"}]},
        {"events": [{"type": "call.ended", "id": "e1"}]},
    ]
    answer = check(client, key, steps)
    assert answer.status_code == 409 and answer.json()["error"]["code"] == "idempotency_key_reused"
    assert Call.objects.count() == 0
