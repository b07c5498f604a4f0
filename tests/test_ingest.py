import hashlib
import json

import pytest
from django.utils import timezone

from calls.models import Call, Event, IngestKey, Message, Turn
from tests.conftest import sample_bodies

BODY = {"messages": [{"role": "user", "content": "hello"}], "model": "gpt-4.1-mini"}


def stored_state():
    return (
        Call.objects.count(),
        Turn.objects.count(),
        Message.objects.count(),
        Event.objects.count(),
        [(c.pk, c.turn_count, c.revision) for c in Call.objects.order_by("pk")],
    )


def test_it_stores_a_request_and_answers_with_its_turn(key, post_request):
    response = post_request(key, "call-1", BODY)
    assert response.status_code == 201
    data = response.json()
    assert data["call"] == "call-1"
    assert data["turn"] == 1
    assert data["findings"] == []
    assert data["url"].endswith("/p/clinic/calls/call-1/turns/1/")
    assert post_request(key, "call-1", BODY).json()["turn"] == 2


def test_the_raw_body_comes_back_byte_for_byte(key, post_request, client):
    for name in ["sync_tool", "async_tool_user_speaks", "interruption_sync_tool", "fix_in_place"]:
        bodies = sample_bodies(name)
        for body in bodies:
            assert post_request(key, name, body).status_code == 201
        for number, body in enumerate(bodies, start=1):
            response = client.get(
                f"/api/v1/calls/{name}/turns/{number}/raw", headers={"Authorization": f"Bearer {key}"}
            )
            assert response.status_code == 200
            assert response.content == body
            assert response["Content-Type"] == "application/json"


def test_odd_but_valid_bytes_are_kept_exactly(key, post_request, client):
    body = (
        b'  {\r\n\t"messages" : [ {"role":"user","content":"\\u0c36 \\ud83d\\ude00 \xe0\xb0\xb6 \\"q\\"  "} ],'
        b'"model":"x", "model":"y", "n": 1.0e+2 }\n'
    )
    response = post_request(key, "odd", body, content_type="application/json; charset=utf-8")
    assert response.status_code == 201
    raw = client.get("/api/v1/calls/odd/turns/1/raw", headers={"Authorization": f"Bearer {key}"})
    assert raw.content == body
    assert raw["Content-Type"] == "application/json; charset=utf-8"
    assert Turn.objects.get().body_sha256 == hashlib.sha256(body).hexdigest()


@pytest.mark.parametrize(
    "body, content_type, status, code",
    [
        (b"{oops", "application/json", 400, "invalid_json"),
        (b'{"messages": [], "x": "\xff"}', "application/json", 400, "invalid_utf8"),
        (b"[]", "application/json", 400, "not_an_object"),
        (b'{"prompt": "hi"}', "application/json", 400, "unrecognized_format"),
        (b'{"messages": "hi"}', "application/json", 400, "invalid_shape"),
        (b"", "application/json", 400, "empty_body"),
        (json.dumps(BODY).encode(), "text/plain", 415, "unsupported_media_type"),
        (json.dumps(BODY).encode(), "application/json; charset=latin-1", 415, "unsupported_media_type"),
    ],
)
def test_bad_bodies_get_a_clear_error_and_change_nothing(
    key, post_request, body, content_type, status, code
):
    post_request(key, "call-1", BODY)
    before = stored_state()
    response = post_request(key, "call-1", body, content_type=content_type)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["code"] == code
    assert error["message"]
    assert stored_state() == before


def test_it_refuses_bodies_over_the_size_limit(key, post_request, settings):
    settings.CALLSCOPE_MAX_BODY_BYTES = 1000
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1001
    big = {"messages": [{"role": "user", "content": "x" * 2000}]}
    response = post_request(key, "call-1", big)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "body_too_large"
    assert Call.objects.count() == 0


@pytest.mark.parametrize(
    "authorization, code",
    [
        (None, "missing_key"),
        ("Basic abc", "missing_key"),
        ("Bearer cs_000000000000_nope", "invalid_key"),
        ("Bearer not-a-key", "invalid_key"),
    ],
)
def test_it_requires_a_known_key(client, key, authorization, code):
    headers = {"Authorization": authorization} if authorization else {}
    response = client.post(
        "/api/v1/calls/c/requests", data=json.dumps(BODY), content_type="application/json", headers=headers
    )
    assert response.status_code == 401
    assert response.json()["error"]["code"] == code
    assert Call.objects.count() == 0


def test_a_revoked_key_is_refused(key, post_request):
    IngestKey.objects.update(revoked_at=timezone.now())
    response = post_request(key, "c", BODY)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "revoked_key"


def test_keys_are_stored_hashed(key):
    stored = IngestKey.objects.get()
    assert key not in (stored.digest, stored.prefix)
    assert stored.digest == hashlib.sha256(key.encode()).hexdigest()
    assert key.startswith(stored.prefix + "_")


def test_a_key_never_reads_or_writes_another_projects_calls(key, other_key, post_request, client):
    post_request(key, "shared-id", BODY)
    other = {"messages": [{"role": "user", "content": "other team"}]}
    assert post_request(other_key, "shared-id", other).json()["turn"] == 1
    assert Call.objects.filter(external_id="shared-id").count() == 2

    auth = {"Authorization": f"Bearer {other_key}"}
    assert json.loads(client.get("/api/v1/calls/shared-id/turns/1/raw", headers=auth).content) == other
    mine = client.get("/api/v1/calls/shared-id", headers={"Authorization": f"Bearer {key}"}).json()
    assert mine["project"] == "clinic" and mine["turn_count"] == 1

    post_request(key, "only-mine", BODY)
    for url in ["/api/v1/calls/only-mine", "/api/v1/calls/only-mine/turns/1/raw"]:
        response = client.get(url, headers=auth)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "call_not_found"


def test_a_retry_with_the_same_idempotency_key_stores_nothing_new(key, post_request):
    first = post_request(key, "c", BODY, **{"Idempotency-Key": "req-1"})
    before = stored_state()
    retry = post_request(key, "c", BODY, **{"Idempotency-Key": "req-1"})
    assert retry.status_code == 201
    assert retry.json() == first.json()
    assert retry["Idempotent-Replayed"] == "true"
    assert stored_state() == before


def test_an_idempotency_key_reused_for_another_body_is_a_conflict(key, post_request):
    post_request(key, "c", BODY, **{"Idempotency-Key": "req-1"})
    before = stored_state()
    other = {"messages": [{"role": "user", "content": "different"}]}
    response = post_request(key, "c", other, **{"Idempotency-Key": "req-1"})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "idempotency_key_reused"
    assert stored_state() == before


def test_wrong_methods_are_refused_as_json(client, key):
    response = client.get("/api/v1/calls/c/requests", headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert response["Allow"] == "POST"
    response = client.delete("/api/v1/calls/c", headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 405


def test_headers_set_sent_time_agent_and_format(key, post_request):
    response = post_request(
        key,
        "c",
        {"messages": [], "system": "looks anthropic"},
        **{"X-Sent-At": "2026-11-30T05:03:45.864032Z", "X-Agent": "pipecat", "X-Request-Format": "openai.chat"},
    )
    assert response.status_code == 201
    turn = Turn.objects.get()
    assert turn.sent_at.isoformat() == "2026-11-30T05:03:45.864032+00:00"
    assert turn.format == "openai.chat"
    assert Call.objects.get().agent == "pipecat"


@pytest.mark.parametrize(
    "headers, code",
    [
        ({"X-Sent-At": "yesterday"}, "invalid_sent_at"),
        ({"X-Sent-At": "2026-11-30T05:03:45"}, "invalid_sent_at"),  # no offset
        ({"X-Request-Format": "cohere"}, "unknown_format"),
        ({"Idempotency-Key": "x" * 300}, "invalid_header"),
    ],
)
def test_bad_headers_are_refused(key, post_request, headers, code):
    response = post_request(key, "c", BODY, **headers)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code
    assert Call.objects.count() == 0


def test_the_call_api_lists_turns_and_tool_calls(key, post_request, client):
    for body in sample_bodies("fix_in_place"):
        post_request(key, "fip", body)
    data = client.get("/api/v1/calls/fip", headers={"Authorization": f"Bearer {key}"}).json()
    assert data["turn_count"] == 5
    assert [t["turn"] for t in data["turns"]] == [1, 2, 3, 4, 5]
    assert data["turns"][2]["changed_in_place"] == 1
    check = data["tool_calls"][0]
    assert check["name"] == "check_availability"
    assert [h["state"] for h in check["history"]] == ["issued", "pending", "result"]
    assert data["pending_placeholders"] == 0


def test_an_unknown_call_is_a_json_404(client, key):
    response = client.get("/api/v1/calls/nope", headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "call_not_found"


@pytest.mark.parametrize(
    "body",
    [
        b'{"model": "gpt\\u0000x", "messages": [{"role": "us\\ud800er", "content": "a\\u0000b \\udfff"}]}',
        b'{"messages": [{"role": "assistant", "tool_calls": [{"id": "call_\\u0000\\ud800", "type": "function",'
        b' "function": {"name": "bo\\u0000ok", "arguments": "{\\"a\\": \\"\\\\u0000\\"} \\ud800"}}]},'
        b' {"role": "tool", "tool_call_id": "call_\\u0000\\ud800", "content": "ok"}]}',
        b'{"messages": [{"role": "assistant", "tool_calls": [{"id": "' + b"x" * 300 + b'", "function": {"name": "'
        + b"n" * 300 + b'", "arguments": "{}"}}]}]}',
    ],
)
def test_hostile_but_valid_json_is_stored_exactly_not_a_500(key, post_request, client, body):
    response = post_request(key, "c", body)
    assert response.status_code == 201, response.content
    raw = client.get("/api/v1/calls/c/turns/1/raw", headers={"Authorization": f"Bearer {key}"})
    assert raw.content == body
    assert client.get("/api/v1/calls/c", headers={"Authorization": f"Bearer {key}"}).status_code == 200


@pytest.mark.parametrize(
    "sent_at", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "1969-12-31T23:59:59Z"]
)
def test_timestamps_outside_what_we_store_are_refused(key, post_request, sent_at):
    response = post_request(key, "c", BODY, **{"X-Sent-At": sent_at})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_sent_at"


def test_an_absurd_content_type_is_refused(key, post_request):
    response = post_request(key, "c", BODY, content_type="application/json; x=" + "y" * 300)
    assert response.status_code == 415
    assert Call.objects.count() == 0


def test_unknown_api_urls_answer_json(client, key):
    for url in ["/api/v1/nothing", "/api/v1/calls/c/turns/x/raw", "/api/v1/calls/c/"]:
        response = client.get(url, headers={"Authorization": f"Bearer {key}"})
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
