"""Every route and socket checks membership and role on the server.

A user of another project gets 404 everywhere (no existence leak); a viewer reads
but every change is refused and changes nothing. The route table below must list
every URL the site has: a new page fails this file until its access is decided.
"""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import get_resolver

from calls.keys import create_key
from calls.models import Call, ChatTemplate, Membership
from triage.models import Comment, SavedView

ORPHAN = {"messages": [{"role": "tool", "tool_call_id": "call_X", "content": "ok"}, {"role": "user", "content": "?"}]}

# name -> (url template, methods, who may change: "read" (viewers too), "member", "admin",
# "own" (the author or owner), or None for routes outside any project).
ROUTES = {
    "calls": ("/p/clinic/", "GET", "read"),
    "keys": ("/p/clinic/keys/", "GET", "read"),
    "project-rules": ("/p/clinic/rules/", "GET POST", "admin"),
    "create-key": ("/p/clinic/keys/new", "POST", "admin"),
    "revoke-key": ("/p/clinic/keys/{key}/revoke", "POST", "admin"),
    "call": ("/p/clinic/calls/c/", "GET", "read"),
    "turn": ("/p/clinic/calls/c/turns/1/", "GET", "read"),
    "turn-raw": ("/p/clinic/calls/c/turns/1/raw", "GET", "read"),
    "turn-fixture": ("/p/clinic/calls/c/turns/1/fixture.json", "GET", "read"),
    "call-fixture": ("/p/clinic/calls/c/fixture.json", "GET", "read"),
    "turn-diff-fixture": ("/p/clinic/calls/c/turns/1/diff", "POST", "read"),  # stores nothing
    "project-templates": ("/p/clinic/templates/", "GET POST", "admin"),
    "delete-template": ("/p/clinic/templates/{template}/delete", "POST", "admin"),
    "queue": ("/p/clinic/queue/", "GET", "read"),
    "queue-bulk": ("/p/clinic/queue/bulk", "POST", "member"),
    "queue-save-view": ("/p/clinic/queue/views", "POST", "read"),  # a user's own view
    "queue-delete-view": ("/p/clinic/queue/views/{view}/delete", "POST", "own"),
    "members": ("/p/clinic/members/", "GET POST", "admin"),
    "rollups": ("/p/clinic/rollups/", "GET", "read"),
    "triage-call": ("/p/clinic/calls/c/triage", "POST", "member"),
    "comment": ("/p/clinic/calls/c/comments", "POST", "member"),
    "comment-edit": ("/p/clinic/comments/{comment}/edit", "POST", "own"),
    "comment-delete": ("/p/clinic/comments/{comment}/delete", "POST", "own"),
    # Outside any project: their own checks are tested elsewhere.
    "home": ("/", "GET", None),
    "rules": ("/rules/", "GET", None),
    "rule": ("/rules/TC001/", "GET", None),
    "inbox": ("/inbox/", "GET", None),
    "inbox-read": ("/inbox/read", "POST", None),
    "invite": ("/invite/x/", "GET POST", None),
    "login": ("/login/", "GET POST", None),
    "logout": ("/logout/", "POST", None),
    "api-check": ("/api/v1/check", "POST", None),
    "api-requests": ("/api/v1/calls/c/requests", "POST", None),
    "api-events": ("/api/v1/calls/c/events", "POST", None),
    "api-call": ("/api/v1/calls/c", "GET", None),
    "api-raw": ("/api/v1/calls/c/turns/1/raw", "GET", None),
}

POST_DATA = {
    "project-rules": {"target_provider": "deepseek"},
    "create-key": {"label": "x"},
    "turn-diff-fixture": {"fixture": "{}"},
    "project-templates": {"name": "t", "source": "{{ 1 }}"},
    "queue-bulk": {"action": "assign_me"},
    "queue-save-view": {"name": "v", "query": "assignee=mine"},
    "members": {"action": "invite", "role": "admin"},
    "triage-call": {"action": "assign_me"},
    "comment": {"body": "hello"},
    "comment-edit": {"body": "changed"},
}


def _names(resolver=None):
    resolver = resolver or get_resolver()
    for pattern in resolver.url_patterns:
        if hasattr(pattern, "url_patterns"):
            if getattr(pattern, "app_name", None) == "admin":
                continue
            yield from _names(pattern)
        elif pattern.name:
            yield pattern.name


def test_every_route_is_in_the_access_table():
    assert set(_names()) == set(ROUTES)


@pytest.fixture
def world(project, key, post_request, alice):
    post_request(key, "c", ORPHAN)
    call = Call.objects.get(external_id="c")
    comment = Comment.objects.create(call=call, author=alice, body="mine")
    view = SavedView.objects.create(user=alice, project=project, name="v0", query="")
    template = ChatTemplate.objects.create(project=project, name="t0", source="{{ 1 }}")
    key_row, _secret = create_key(project)
    return {"comment": comment.pk, "view": view.pk, "template": template.pk, "key": key_row.pk}


def snapshot(project):
    from calls.models import IngestKey
    from triage.models import Activity, Invite, Triage

    project.refresh_from_db()
    return (
        project.rule_settings,
        list(IngestKey.objects.values_list("pk", "revoked_at")),
        list(ChatTemplate.objects.values_list("pk", "name")),
        list(Triage.objects.values_list("status", "assignee", "flagged")),
        list(Comment.objects.values_list("pk", "body", "deleted_at")),
        list(SavedView.objects.values_list("pk", "name")),
        Invite.objects.count(),
        Activity.objects.count(),
        list(Membership.objects.values_list("user", "role")),
    )


PROJECT_ROUTES = [name for name, (_u, _m, who) in ROUTES.items() if who is not None]


@pytest.mark.parametrize("name", PROJECT_ROUTES)
def test_another_projects_user_gets_404_on_every_project_route(world, charlie, project, name):
    url, methods, _who = ROUTES[name]
    url = url.format(**world)
    client = Client()
    client.force_login(charlie)
    before = snapshot(project)
    for method in methods.split():
        answer = client.get(url) if method == "GET" else client.post(url, POST_DATA.get(name, {}))
        assert answer.status_code == 404, (method, url, answer.status_code)
    assert snapshot(project) == before


@pytest.mark.parametrize("name", [n for n in PROJECT_ROUTES if ROUTES[n][2] in ("member", "admin", "own")])
def test_a_viewer_changes_nothing(world, project, name):
    viewer = get_user_model().objects.create_user("vera")
    Membership.objects.create(project=project, user=viewer, role=Membership.Role.VIEWER)
    url, methods, _who = ROUTES[name]
    url = url.format(**world)
    client = Client()
    client.force_login(viewer)
    before = snapshot(project)
    if "POST" in methods:
        answer = client.post(url, POST_DATA.get(name, {}))
        assert answer.status_code in (403, 404), (url, answer.status_code)
    if "GET" in methods:
        assert client.get(url).status_code == 200  # reading is fine
    assert snapshot(project) == before


@pytest.mark.parametrize("name", [n for n in PROJECT_ROUTES if ROUTES[n][2] == "admin"])
def test_a_member_cannot_do_what_admins_do(world, project, name):
    member = get_user_model().objects.create_user("mo")
    Membership.objects.create(project=project, user=member, role=Membership.Role.MEMBER)
    url, methods, _who = ROUTES[name]
    client = Client()
    client.force_login(member)
    before = snapshot(project)
    answer = client.post(url.format(**world), POST_DATA.get(name, {}))
    assert answer.status_code in (403, 404)
    assert snapshot(project) == before


@pytest.mark.parametrize("name", PROJECT_ROUTES + ["inbox", "inbox-read"])
def test_anonymous_visitors_are_sent_to_log_in(world, client, name):
    url, methods, _who = ROUTES[name]
    method = methods.split()[0]
    answer = client.get(url.format(**world)) if method == "GET" else client.post(url.format(**world))
    assert answer.status_code == 302 and answer["Location"].startswith("/login/")
