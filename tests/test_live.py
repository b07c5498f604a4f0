"""The live path: websocket auth and membership, pushes on commit, resync after a drop."""

import json

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connections
from django.test import Client

from calls.models import Call
from dashboard.asgi import application
from tests.conftest import sample_bodies

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
async def _close_thread_db_connections():
    # ORM calls made from asgiref's worker thread keep a connection open,
    # which stalls PostgreSQL's DROP DATABASE at the end of the session.
    yield
    await sync_to_async(connections.close_all)()


def session_headers(user, origin="http://127.0.0.1"):
    headers = [(b"origin", origin.encode()), (b"host", b"127.0.0.1")]
    if user is not None:
        client = Client()
        client.force_login(user)
        headers.append((b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()))
    return headers


async def connect(path, user, origin="http://127.0.0.1"):
    headers = await sync_to_async(session_headers)(user, origin)
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect(timeout=3)
    return communicator, connected


def ingest(key, call_id, body):
    response = Client().post(
        f"/api/v1/calls/{call_id}/requests",
        data=body,
        content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )
    assert response.status_code == 201, response.content
    return response


def ingest_events(key, call_id, events):
    response = Client().post(
        f"/api/v1/calls/{call_id}/events",
        data=json.dumps(events),
        content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )
    assert response.status_code == 201, response.content


async def test_a_member_sees_a_new_call_arrive_on_the_calls_list(alice, key):
    communicator, connected = await connect("/ws/p/clinic/", alice)
    assert connected
    await sync_to_async(ingest)(key, "c1", sample_bodies("sync_tool")[0])
    message = await communicator.receive_from(timeout=3)
    call = await Call.objects.aget(external_id="c1")
    assert f'id="call-{call.pk}"' in message
    assert 'hx-swap-oob="afterbegin:#call-rows"' in message
    await communicator.disconnect()


async def test_a_member_sees_new_turns_and_events_on_the_call_page(alice, key):
    await sync_to_async(ingest)(key, "c1", sample_bodies("sync_tool")[0])
    call = await Call.objects.aget(external_id="c1")
    communicator, connected = await connect(f"/ws/calls/{call.pk}/", alice)
    assert connected
    await sync_to_async(ingest)(key, "c1", sample_bodies("sync_tool")[1])
    message = await communicator.receive_from(timeout=3)
    assert 'id="turn-2"' in message and 'hx-swap-oob="beforeend:#turns"' in message
    assert 'id="call-header"' in message and 'hx-swap-oob="beforeend:#tool-rows"' in message
    await sync_to_async(ingest_events)(key, "c1", [{"type": "interruption"}])
    message = await communicator.receive_from(timeout=3)
    assert 'hx-swap-oob="beforeend:#turn-2-events"' in message and "interruption" in message
    await communicator.disconnect()


@pytest.mark.parametrize("path", ["/ws/p/clinic/", "/ws/calls/{pk}/", "/ws/calls/{pk}/team/", "/ws/p/clinic/queue/"])
async def test_sockets_refuse_anonymous_users(alice, key, path):
    await sync_to_async(ingest)(key, "c1", sample_bodies("sync_tool")[0])
    call = await Call.objects.aget(external_id="c1")
    _communicator, connected = await connect(path.format(pk=call.pk), None)
    assert not connected


@pytest.mark.parametrize(
    "path",
    ["/ws/p/clinic/", "/ws/calls/{pk}/", "/ws/calls/999999/", "/ws/calls/{pk}/team/", "/ws/p/clinic/queue/"],
)
async def test_sockets_refuse_users_of_other_projects(charlie, key, path):
    await sync_to_async(ingest)(key, "c1", sample_bodies("sync_tool")[0])
    call = await Call.objects.aget(external_id="c1")
    _communicator, connected = await connect(path.format(pk=call.pk), charlie)
    assert not connected


async def test_sockets_refuse_pages_of_other_origins(alice):
    _communicator, connected = await connect("/ws/p/clinic/", alice, origin="https://evil.example")
    assert not connected


async def test_nothing_is_pushed_for_a_refused_request(alice, key):
    communicator, connected = await connect("/ws/p/clinic/", alice)
    assert connected
    response = await sync_to_async(
        lambda: Client().post(
            "/api/v1/calls/c1/requests",
            data=b"{broken",
            content_type="application/json",
            headers={"Authorization": f"Bearer {key}"},
        )
    )()
    assert response.status_code == 400
    assert await communicator.receive_nothing(timeout=0.3)
    await communicator.disconnect()


async def test_after_a_drop_the_call_page_gets_what_it_missed(alice, key):
    bodies = sample_bodies("fix_in_place")
    await sync_to_async(ingest)(key, "c1", bodies[0])
    call = await Call.objects.aget(external_id="c1")
    for body in bodies[1:4]:  # sent while the page was disconnected
        await sync_to_async(ingest)(key, "c1", body)
    communicator, connected = await connect(f"/ws/calls/{call.pk}/", alice)
    assert connected
    await communicator.send_to(text_data=json.dumps({"resync": True, "after": 1, "first": 1}))
    message = await communicator.receive_from(timeout=3)
    assert 'id="turn-1"' not in message
    for number in (2, 3, 4):
        assert f'id="turn-{number}"' in message
    assert 'id="call-header"' in message
    await communicator.disconnect()


async def test_after_a_drop_the_calls_list_gets_fresh_rows(alice, key):
    await sync_to_async(ingest)(key, "c1", sample_bodies("sync_tool")[0])
    await sync_to_async(ingest)(key, "c2", sample_bodies("sync_tool")[0])
    communicator, connected = await connect("/ws/p/clinic/", alice)
    assert connected
    await communicator.send_to(text_data=json.dumps({"resync": True}))
    message = await communicator.receive_from(timeout=3)
    assert message.count("<tr id=\"call-") == 2
    await communicator.disconnect()


async def test_a_page_too_far_behind_is_told_to_reload(alice, key, settings):
    from calls import live

    live.RESYNC_TURN_LIMIT, limit = 2, live.RESYNC_TURN_LIMIT
    try:
        for body in sample_bodies("fix_in_place"):
            await sync_to_async(ingest)(key, "c1", body)
        call = await Call.objects.aget(external_id="c1")
        communicator, _ = await connect(f"/ws/calls/{call.pk}/", alice)
        await communicator.send_to(text_data=json.dumps({"resync": True, "after": 1}))
        assert 'id="live-reload"' in await communicator.receive_from(timeout=3)
        await communicator.disconnect()
    finally:
        live.RESYNC_TURN_LIMIT = limit


async def test_nothing_is_pushed_for_a_rolled_back_request(alice, key):
    await sync_to_async(ingest)(key, "c1", sample_bodies("sync_tool")[0])
    await sync_to_async(
        lambda: Client().post(
            "/api/v1/calls/c1/requests",
            data=sample_bodies("sync_tool")[0],
            content_type="application/json",
            headers={"Authorization": f"Bearer {key}", "Idempotency-Key": "k"},
        )
    )()
    communicator, connected = await connect("/ws/p/clinic/", alice)
    assert connected
    conflict = await sync_to_async(
        lambda: Client().post(
            "/api/v1/calls/c1/requests",
            data=sample_bodies("sync_tool")[1],  # same key, another body: rolled back
            content_type="application/json",
            headers={"Authorization": f"Bearer {key}", "Idempotency-Key": "k"},
        )
    )()
    assert conflict.status_code == 409
    assert await communicator.receive_nothing(timeout=0.3)
    await communicator.disconnect()


def test_a_failing_broadcast_never_fails_a_stored_request(key, settings):
    from channels.layers import channel_layers

    # A Redis nobody listens on: the broadcast fails for real, after the commit.
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": ["redis://127.0.0.1:9/0"]},
        }
    }
    channel_layers.backends.clear()
    try:
        response = ingest(key, "c1", sample_bodies("sync_tool")[0])
    finally:
        channel_layers.backends.clear()
    assert response.status_code == 201
    assert Call.objects.get(external_id="c1").turn_count == 1


async def test_a_filtered_calls_list_resyncs_with_its_own_filter(alice, key):
    await sync_to_async(ingest)(key, "live-one", sample_bodies("sync_tool")[0])
    await sync_to_async(ingest)(key, "ended-one", sample_bodies("sync_tool")[0])
    await sync_to_async(ingest_events)(key, "ended-one", [{"type": "call.ended"}])
    communicator, connected = await connect("/ws/p/clinic/", alice)
    assert connected
    await communicator.send_to(text_data=json.dumps({"resync": True, "filter": "?status=ended"}))
    message = await communicator.receive_from(timeout=3)
    assert "ended-one" in message and "live-one" not in message and 'data-matched="1"' in message
    await communicator.disconnect()


async def test_the_picture_is_redrawn_off_the_request_and_pushed(alice, key):
    """Drawing the picture grows with the call, so ingest only marks it; a thread of the
    process redraws it (once per burst) and pushes it to the call page."""
    bodies = sample_bodies("sync_tool")
    await sync_to_async(ingest)(key, "c1", bodies[0])
    call = await Call.objects.aget(external_id="c1")
    communicator, connected = await connect(f"/ws/calls/{call.pk}/", alice)
    assert connected
    for body in bodies[1:]:
        await sync_to_async(ingest)(key, "c1", body)  # a tool slot changes: a redraw is due
    seen = []
    for _ in range(12):
        message = await communicator.receive_from(timeout=4)
        seen.append(message)
        if 'id="call-timeline"' in message:
            break
    assert any('id="call-timeline"' in m for m in seen)
    assert not any('id="call-timeline"' in m and 'id="turn-' in m for m in seen)  # never with a turn
    await communicator.disconnect()
