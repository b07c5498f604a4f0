"""Several agents, or retries, hitting one call at the same moment."""

import threading

import pytest
from django.db import connections
from django.test import Client

from calls import history
from calls.models import Turn
from calls.synthetic import synthetic_call

pytestmark = pytest.mark.django_db(transaction=True)


def in_threads(count, target):
    barrier = threading.Barrier(count)
    results = [None] * count

    def run(index):
        barrier.wait()
        try:
            results[index] = target(index)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def post(key, call_id, body, **headers):
    return Client().post(
        f"/api/v1/calls/{call_id}/requests",
        data=body,
        content_type="application/json",
        headers={"Authorization": f"Bearer {key}", **headers},
    )


def test_concurrent_requests_of_one_call_get_distinct_turns_and_exact_bodies(key):
    bodies = synthetic_call(8, seed=4)
    responses = in_threads(8, lambda i: post(key, "race", bodies[i]))
    assert sorted(r.status_code for r in responses) == [201] * 8
    assert sorted(r.json()["turn"] for r in responses) == list(range(1, 9))
    for response, body in zip(responses, bodies, strict=True):
        turn = Turn.objects.get(call__external_id="race", number=response.json()["turn"])
        assert history.raw_body(turn) == body


def test_concurrent_retries_with_one_idempotency_key_store_one_turn(key):
    body = synthetic_call(1)[0]
    responses = in_threads(6, lambda i: post(key, "retry", body, **{"Idempotency-Key": "same"}))
    assert {r.status_code for r in responses} == {201}
    assert {r.json()["turn"] for r in responses} == {1}
    assert Turn.objects.filter(call__external_id="retry").count() == 1
