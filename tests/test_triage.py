"""Team triage: flagging, the queue, status and assignment, comments and mentions,
notifications, members and invites, webhooks, rollups."""

import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from calls.models import Call, Membership
from tests.conftest import sample_bodies
from triage import comments, webhooks
from triage.models import Activity, Comment, Invite, Notification, Triage, Webhook, WebhookDelivery

SYSTEM = {"role": "system", "content": "You are Sita."}
ORPHAN = {"messages": [SYSTEM, {"role": "tool", "tool_call_id": "call_X", "content": "ok"}, {"role": "user", "content": "Hello?"}]}


def user(project, name, role=Membership.Role.MEMBER):
    person = get_user_model().objects.create_user(name, password=f"{name}-password-1")
    Membership.objects.create(project=project, user=person, role=role)
    client = Client()
    client.force_login(person)
    return person, client


@pytest.fixture
def bob(project):
    return user(project, "bob")


@pytest.fixture
def vera(project):
    return user(project, "vera", Membership.Role.VIEWER)


# --- flagging -----------------------------------------------------------------------------


def test_a_call_with_a_warning_or_worse_is_flagged_once(key, post_request):
    for body in sample_bodies("async_tool_user_speaks"):
        post_request(key, "async", body)
    triage = Triage.objects.get(call__external_id="async")
    assert triage.flagged and triage.status == "new" and triage.worst == "warning"
    assert {"TL202", "TR102", "TR104"} <= set(triage.rules)
    assert list(Activity.objects.filter(kind="flag").values_list("text", flat=True)) == [
        "Flagged by TL202 (warning) at turn 2"
    ]


def test_a_clean_call_and_info_findings_stay_out_of_the_queue(key, post_request, project):
    for body in sample_bodies("sync_tool"):
        post_request(key, "clean", body)
    assert not Triage.objects.exists()
    project.rule_settings = {"flag_threshold": "error"}
    project.save()
    for body in sample_bodies("async_tool_user_speaks"):
        post_request(key, "async", body)
    assert not Triage.objects.exists()  # warnings only, and the threshold is error
    post_request(key, "broken", ORPHAN)
    assert Triage.objects.get().call.external_id == "broken"


def test_a_resolved_call_that_breaks_again_is_new_again(key, post_request, alice, alice_client):
    post_request(key, "c", ORPHAN)
    alice_client.post("/p/clinic/calls/c/triage", {"action": "status", "status": "resolved", "resolution": "framework"})
    assert Triage.objects.get().status == "resolved"
    post_request(key, "c", {"messages": [*ORPHAN["messages"], {"role": "developer", "content": '{"tool_call_id": "call_Y", "result": "x"}'}]})
    triage = Triage.objects.get()
    assert triage.status == "resolved"  # a warning on an already flagged call reopens nothing
    Triage.objects.update(flagged=False)
    post_request(key, "c", {"messages": [*ORPHAN["messages"], {"role": "tool", "tool_call_id": "call_Z", "content": "late"}]})
    assert Triage.objects.get().status == "new"


# --- status, assignment, concurrency --------------------------------------------------------


def test_status_and_assignment_are_logged_with_who_and_when(key, post_request, alice_client, bob):
    post_request(key, "c", ORPHAN)
    alice_client.post("/p/clinic/calls/c/triage", {"action": "assign", "assignee": "bob"})
    alice_client.post("/p/clinic/calls/c/triage", {"action": "status", "status": "investigating"})
    bob[1].post("/p/clinic/calls/c/triage", {"action": "assign_me"})  # already his: no entry
    answer = bob[1].post("/p/clinic/calls/c/triage", {"action": "status", "status": "wontfix", "resolution": "expected"})
    assert answer.status_code == 302
    triage = Triage.objects.get()
    assert (triage.assignee.username, triage.status, triage.resolution) == ("bob", "wontfix", "expected")
    log = [(a.actor.username, a.kind, a.text) for a in Activity.objects.exclude(kind="flag").order_by("pk")]
    assert log == [
        ("alice", "assignee", "assigned to bob"),
        ("alice", "status", "status investigating"),
        ("bob", "status", "won't fix (expected behaviour)"),
    ]
    page = alice_client.get("/p/clinic/calls/c/").content.decode()
    assert "won&#x27;t fix (expected behaviour)" in page and "assigned to <strong>bob</strong>" in page


@pytest.mark.parametrize(
    "form",
    [
        {"action": "status", "status": "resolved"},  # no reason
        {"action": "status", "status": "done", "resolution": "other"},
        {"action": "assign", "assignee": "charlie"},  # not a member
        {"action": "explode"},
    ],
)
def test_bad_triage_changes_are_refused_and_change_nothing(key, post_request, alice_client, charlie, form):
    post_request(key, "c", ORPHAN)
    before = Triage.objects.values().get()
    answer = alice_client.post("/p/clinic/calls/c/triage", form)
    assert answer.status_code == 400
    assert Triage.objects.values().get() == before


@pytest.mark.django_db(transaction=True)
def test_two_people_acting_at_once_end_in_one_state(key, post_request, alice, bob):
    """Each change takes the call's lock; the log holds both, the row the last."""
    from triage import workflow

    post_request(key, "c", ORPHAN)
    call = Call.objects.get()
    errors = []

    def act(person, change):
        try:
            from django.db import connection

            workflow.apply(Call.objects.select_related("project").get(pk=call.pk), person, change)
            connection.close()
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=act, args=(alice, workflow.Change(assignee="alice"))),
        threading.Thread(target=act, args=(bob[0], workflow.Change(assignee="bob"))),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    triage = Triage.objects.get()
    entries = list(Activity.objects.filter(kind="assignee").order_by("pk"))
    assert len(entries) == 2 and entries[-1].text == f"assigned to {triage.assignee.username}"


def test_bulk_assign_and_status_on_selected_rows(key, post_request, alice_client, bob):
    for name in ("a", "b", "c"):
        post_request(key, name, ORPHAN)
    ids = [str(c.pk) for c in Call.objects.filter(external_id__in=["a", "b"])]
    alice_client.post("/p/clinic/queue/bulk", {"call": ids, "action": "assign", "assignee": "bob"})
    alice_client.post("/p/clinic/queue/bulk", {"call": ids, "action": "status", "status": "investigating"})
    rows = {t.call.external_id: (t.assignee and t.assignee.username, t.status) for t in Triage.objects.select_related("call", "assignee")}
    assert rows == {"a": ("bob", "investigating"), "b": ("bob", "investigating"), "c": (None, "new")}


def test_the_queue_filters_stay_in_the_url_and_views_are_saved(key, post_request, alice_client, alice, bob):
    for name in ("mine-1", "theirs-2", "open-3"):
        post_request(key, name, ORPHAN)
    alice_client.post("/p/clinic/calls/mine-1/triage", {"action": "assign_me"})
    alice_client.post("/p/clinic/calls/theirs-2/triage", {"action": "assign", "assignee": "bob"})
    page = alice_client.get("/p/clinic/queue/?assignee=mine").content.decode()
    assert "mine-1" in page and "theirs-2" not in page and "open-3" not in page
    assert "open-3" in alice_client.get("/p/clinic/queue/?assignee=unassigned").content.decode()
    assert "theirs-2" in alice_client.get("/p/clinic/queue/?text=THEIRS").content.decode()
    assert "mine-1" not in alice_client.get("/p/clinic/queue/?rule=TR104").content.decode()
    alice_client.post("/p/clinic/queue/views", {"name": "Mine", "query": "assignee=mine"})
    assert 'href="?assignee=mine">Mine</a>' in alice_client.get("/p/clinic/queue/").content.decode()
    # Saved views are the user's own.
    assert "Mine</a>" not in bob[1].get("/p/clinic/queue/").content.decode()


# --- comments, mentions, notifications --------------------------------------------------------


def test_comments_render_safely(project, bob):
    names = {"bob", "alice"}
    html = str(comments.render('<script>x</script> **bold** *it* `a<b` [doc](https://ex.com/?a=1&b="2") [bad](javascript:alert(1)) @bob @nobody\nnext', names))
    assert "<script>" not in html and "&lt;script&gt;x&lt;/script&gt;" in html
    assert "<strong>bold</strong>" in html and "<em>it</em>" in html and "<code>a&lt;b</code>" in html
    assert '<a href="https://ex.com/?a=1&amp;b=&quot;2&quot;"' in html
    assert "javascript:" not in html.split("[bad]")[0] and 'href="javascript' not in html
    assert '<span class="mention">@bob</span>' in html and "@nobody" in html and "<br>" in html


def test_a_mention_notifies_the_member_and_an_edit_is_recorded(key, post_request, alice_client, bob):
    post_request(key, "c", ORPHAN)
    alice_client.post("/p/clinic/calls/c/comments", {"body": "@bob can you look at turn 1?", "turn": "1", "message_index": "1"})
    note = Notification.objects.get()
    assert note.user.username == "bob" and "alice mentioned you on c (turn 1, message 1)" == note.text
    assert "Inbox <span class=\"badge\" aria-label=\"1 unread\">1</span>" in bob[1].get("/p/clinic/").content.decode()
    comment = Comment.objects.get()
    alice_client.post(f"/p/clinic/comments/{comment.pk}/edit", {"body": "@bob turn 1, message 1 please"})
    assert Notification.objects.count() == 1  # bob was mentioned already
    edit = Activity.objects.get(kind="comment.edit")
    assert edit.data["before"] == "@bob can you look at turn 1?"
    # Shown at its spot on the turn page.
    turn_page = alice_client.get("/p/clinic/calls/c/turns/1/").content.decode()
    message = turn_page.split('<li id="m1"')[1].split('<li id="m2"')[0]
    assert "turn 1, message 1 please" in message
    bob[1].post("/inbox/read")
    assert not Notification.objects.filter(read_at__isnull=True).exists()


def test_only_the_author_edits_and_deletes_are_recorded(key, post_request, alice_client, bob):
    post_request(key, "c", ORPHAN)
    alice_client.post("/p/clinic/calls/c/comments", {"body": "mine"})
    comment = Comment.objects.get()
    assert bob[1].post(f"/p/clinic/comments/{comment.pk}/edit", {"body": "hijacked"}).status_code == 403
    assert bob[1].post(f"/p/clinic/comments/{comment.pk}/delete").status_code == 403
    alice_client.post(f"/p/clinic/comments/{comment.pk}/delete")
    comment.refresh_from_db()
    assert comment.deleted_at and comment.body == "mine"
    assert Activity.objects.get(kind="comment.delete").data["before"] == "mine"
    assert alice_client.post("/p/clinic/calls/c/comments", {"body": "   "}).status_code == 400


# --- roles and access ----------------------------------------------------------------------------


def test_a_viewer_reads_but_changes_nothing(key, post_request, vera):
    post_request(key, "c", ORPHAN)
    client = vera[1]
    for url in ("/p/clinic/queue/", "/p/clinic/calls/c/", "/p/clinic/members/", "/p/clinic/rollups/"):
        assert client.get(url).status_code == 200
    before = Triage.objects.values().get()
    assert client.post("/p/clinic/calls/c/triage", {"action": "assign_me"}).status_code == 403
    assert client.post("/p/clinic/queue/bulk", {"call": [Call.objects.get().pk], "action": "assign_me"}).status_code == 403
    assert client.post("/p/clinic/calls/c/comments", {"body": "hi"}).status_code == 403
    assert client.post("/p/clinic/members/", {"action": "invite", "role": "admin"}).status_code == 403
    assert Triage.objects.values().get() == before and not Comment.objects.exists() and not Invite.objects.exists()


# --- members and invites ------------------------------------------------------------------------------


def test_an_admin_adds_a_member_and_changes_roles(alice_client, project, charlie):
    alice_client.post("/p/clinic/members/", {"action": "add", "username": "charlie", "role": "viewer"})
    membership = Membership.objects.get(project=project, user=charlie)
    assert membership.role == "viewer"
    alice_client.post("/p/clinic/members/", {"action": "role", "membership": membership.pk, "role": "member"})
    membership.refresh_from_db()
    assert membership.role == "member"
    alone = Membership.objects.get(project=project, user__username="alice")
    alice_client.post("/p/clinic/members/", {"action": "remove", "membership": alone.pk})
    assert Membership.objects.filter(pk=alone.pk).exists()  # the last admin stays


def test_an_invite_link_works_once_and_expires(alice_client, project, client):
    page = alice_client.post("/p/clinic/members/", {"action": "invite", "role": "member"}).content.decode()
    link = page.split('<pre id="invite-url" class="snippet">')[1].split("</pre>")[0]
    path = link.replace("http://testserver", "")
    answer = client.post(path, {"username": "newbie", "password1": "a-long-pass-77", "password2": "a-long-pass-77"})
    assert answer.status_code == 302
    assert Membership.objects.get(user__username="newbie").role == "member"
    assert Client().get(path).status_code == 410  # used
    invite = Invite.objects.get()
    assert invite.digest != path.rstrip("/").rsplit("/", 1)[-1]  # only a digest is stored
    from datetime import timedelta

    from django.utils import timezone

    page = alice_client.post("/p/clinic/members/", {"action": "invite", "role": "viewer"}).content.decode()
    second = page.split('<pre id="invite-url" class="snippet">')[1].split("</pre>")[0].replace("http://testserver", "")
    Invite.objects.filter(used_at__isnull=True).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert Client().get(second).status_code == 410


# --- webhooks --------------------------------------------------------------------------------------------


class Receiver(BaseHTTPRequestHandler):
    received: list = []
    status = 200

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Receiver.received.append((dict(self.headers), body))
        self.send_response(Receiver.status)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def receiver():
    Receiver.received, Receiver.status = [], 200
    server = HTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/hook"
    server.shutdown()


def test_a_flag_with_an_error_is_posted_signed_and_retried(key, post_request, project, receiver):
    hook = Webhook.objects.create(project=project, url=receiver, secret="s3cret")
    Receiver.status = 503
    post_request(key, "c", ORPHAN)
    events = set(WebhookDelivery.objects.values_list("event", flat=True))
    assert events == {"call.flagged", "rule.first_seen"}
    assert webhooks.deliver_due() == 2
    first = WebhookDelivery.objects.filter(event="call.flagged").get()
    assert first.attempts == 1 and first.last_status == 503 and first.delivered_at is None
    assert webhooks.deliver_due() == 0  # backing off
    Receiver.status = 200
    from datetime import timedelta

    from django.utils import timezone

    assert webhooks.deliver_due(now=timezone.now() + timedelta(seconds=6)) == 2
    first.refresh_from_db()
    assert first.delivered_at and first.attempts == 2
    headers, body = Receiver.received[-1]
    expected = "sha256=" + hmac.new(b"s3cret", headers["X-Callscope-Timestamp"].encode() + b"." + body, hashlib.sha256).hexdigest()
    assert headers["X-Callscope-Signature"] == expected
    assert json.loads(body)["call"] == "c"
    hook.delete()


def test_a_dead_endpoint_never_slows_or_fails_ingest(key, post_request, project):
    Webhook.objects.create(project=project, url="http://127.0.0.1:9/nothing-listens", secret="x")
    assert post_request(key, "c", ORPHAN).status_code == 201
    webhooks.deliver_due()
    delivery = WebhookDelivery.objects.filter(event="call.flagged").get()
    assert delivery.attempts == 1 and delivery.last_error and delivery.failed_at is None
    # A rule seen before in the project is not news.
    post_request(key, "d", ORPHAN)
    assert WebhookDelivery.objects.filter(event="rule.first_seen").count() == 1


# --- rollups ---------------------------------------------------------------------------------------------------


def test_rollups_count_flagged_calls_and_time_to_resolve(key, post_request, alice_client):
    for name in ("a", "b"):
        post_request(key, name, ORPHAN)
    alice_client.post("/p/clinic/calls/a/triage", {"action": "status", "status": "resolved", "resolution": "prompt"})
    page = alice_client.get("/p/clinic/rollups/").content.decode()
    assert page.count('<rect class="st-') >= 2 and "TC001" in page
    assert "Median flagged → resolved" in page and "(1 resolved, 30 days)" in page
    assert "<script" not in page.split("<main")[1]


def test_the_flag_threshold_is_a_rule_setting(alice_client, project, key, post_request):
    form = {f"on-{code}": "1" for code in __import__("calls.rules", fromlist=["CATALOGUE"]).CATALOGUE}
    assert alice_client.post("/p/clinic/rules/", {**form, "flag_threshold": "error"}).status_code == 302
    project.refresh_from_db()
    assert project.rule_settings["flag_threshold"] == "error"
    for body in sample_bodies("async_tool_user_speaks"):
        post_request(key, "async", body)
    assert not Triage.objects.exists()
