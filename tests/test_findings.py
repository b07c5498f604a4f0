"""Findings through the real ingest API: answered, stored once, shown, and /api/v1/check."""

import json

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
        [], ["TR101"], ["TR102", "TR103", "TR104"], [], [],
    ]


def test_check_needs_a_key_and_a_model_request(client, key):
    assert client.post("/api/v1/check", data="{}", content_type="application/json").status_code == 401
    response = client.post(
        "/api/v1/check", data='{"prompt": "hi"}', content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )
    assert response.status_code == 400 and response.json()["error"]["code"] == "unrecognized_format"
