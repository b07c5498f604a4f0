import html
import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from calls.models import IngestKey, Membership
from calls.synthetic import synthetic_call
from tests.conftest import sample_bodies

PAGES = [
    "/p/clinic/",
    "/p/clinic/keys/",
    "/p/clinic/calls/fip/",
    "/p/clinic/calls/fip/turns/1/",
    "/p/clinic/calls/fip/turns/1/raw",
    "/p/clinic/calls/fip/turns/2/?tab=raw",
    "/p/clinic/calls/fip/turns/2/?tab=diff",
    "/p/clinic/calls/fip/turns/2/?tab=model",
    "/p/clinic/calls/fip/turns/2/?tab=export",
    "/p/clinic/calls/fip/turns/2/fixture.json",
    "/p/clinic/calls/fip/fixture.json",
    "/p/clinic/templates/",
    "/p/clinic/rules/",
]


@pytest.fixture
def fip(key, post_request):
    """The fix_in_place capture: a placeholder overwritten in place with its result."""
    bodies = sample_bodies("fix_in_place")
    for body in bodies:
        assert post_request(key, "fip", body).status_code == 201
    return bodies


@pytest.mark.parametrize("url", PAGES + ["/"])
def test_every_page_needs_a_login(client, fip, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


@pytest.mark.parametrize("url", PAGES)
def test_another_teams_member_gets_404_everywhere(fip, charlie, url):
    client = Client()
    client.force_login(charlie)
    assert client.get(url).status_code == 404


def test_the_calls_list_shows_each_call_with_its_facts(alice_client, fip):
    page = alice_client.get("/p/clinic/").content.decode()
    row = re.search(r'<tr id="call-\d+".*?</tr>', page, re.S).group(0)
    assert "fip" in row and ">5<" in row  # five turns
    assert "status-live" in row
    assert 'ws-connect="/ws/p/clinic/"' in page


def test_home_goes_to_the_users_project(alice_client):
    assert alice_client.get("/")["Location"] == "/p/clinic/"


def test_a_user_without_projects_is_told_so(db):
    client = Client()
    client.force_login(get_user_model().objects.create_user("nobody"))
    assert b"No projects yet" in client.get("/").content


def test_the_call_page_shows_what_each_turn_changed(alice_client, fip):
    page = alice_client.get("/p/clinic/calls/fip/").content.decode()
    for number in range(1, 6):
        assert f'id="turn-{number}"' in page
    turn3 = re.search(r'<section id="turn-3".*?</section>', page, re.S).group(0)
    assert "1 changed in place" in turn3
    assert "async_tool" in turn3  # the placeholder it replaced ...
    assert html.escape('"outcome": "produced"', quote=True) in turn3  # ... and the result
    # The tool-call panel tells the slot's story.
    assert re.search(r"T2</a> issued.*T2</a> pending.*T3</a> result", page, re.S)


def test_content_strings_are_shown_exactly_and_never_as_html(alice_client, key, post_request):
    hostile = '<script>alert("x")</script> \\u0c36   trailing  '
    post_request(key, "evil", {"messages": [{"role": "user", "content": hostile}]})
    page = alice_client.get("/p/clinic/calls/evil/").content.decode()
    assert "<script>alert" not in page
    assert html.escape(hostile) in page


def test_the_turn_page_shows_the_exact_body_and_its_messages(alice_client, fip):
    raw_tab = alice_client.get("/p/clinic/calls/fip/turns/3/?tab=raw").content.decode()
    raw = re.search(r'<pre id="raw-body"[^>]*>(.*?)</pre>', raw_tab, re.S).group(1)
    assert html.unescape(raw).encode() == fip[2]
    page = alice_client.get("/p/clinic/calls/fip/turns/3/").content.decode()
    assert 'rel="prev"' in page and 'rel="next"' in page
    listed = re.search(r'<ol class="messages full">(.*?)</ol>\s*</section>', page, re.S).group(1)
    assert len(re.findall(r'<li id="m\d+"', listed)) == len(json.loads(fip[2])["messages"])


def test_the_raw_body_downloads_byte_for_byte(alice_client, fip):
    response = alice_client.get("/p/clinic/calls/fip/turns/5/raw?download=1")
    assert response.content == fip[4]
    assert response["Content-Disposition"].startswith("attachment;")


def test_a_300_turn_call_page_shows_a_page_of_turns_and_loads_earlier_ones(
    alice_client, key, post_request
):
    for body in synthetic_call(300, seed=5):
        post_request(key, "long", body)
    page = alice_client.get("/p/clinic/calls/long/").content.decode()
    numbers = [int(n) for n in re.findall(r'<section id="turn-(\d+)"', page)]
    assert numbers == list(range(271, 301))
    assert 'hx-get="?before=271"' in page
    earlier = alice_client.get("/p/clinic/calls/long/?before=271", headers={"HX-Request": "true"})
    numbers = [int(n) for n in re.findall(r'<section id="turn-(\d+)"', earlier.content.decode())]
    assert numbers == list(range(241, 271))
    assert b"<html" not in earlier.content


def test_pages_send_a_strict_content_security_policy(alice_client, fip):
    policy = alice_client.get("/p/clinic/calls/fip/")["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert "frame-ancestors 'none'" in policy


def test_htmx_is_served_from_our_own_static_files(alice_client, fip):
    page = alice_client.get("/p/clinic/").content.decode()
    scripts = re.findall(r'<script src="([^"]+)"', page)
    assert scripts and all(s.startswith("/static/") for s in scripts)
    assert any("htmx-2" in s for s in scripts) and any("hx-ws-2" in s for s in scripts)


def test_an_admin_creates_a_key_that_is_shown_once_and_stored_hashed(alice_client, project):
    response = alice_client.post("/p/clinic/keys/new", {"label": "prod"})
    secret = re.search(r'<pre id="new-key"[^>]*>(cs_[^<]+)</pre>', response.content.decode()).group(1)
    key = IngestKey.objects.get(label="prod")
    assert secret.startswith(key.prefix) and secret not in (key.digest, key.prefix)
    listing = alice_client.get("/p/clinic/keys/").content.decode()
    assert key.prefix in listing and secret not in listing


def test_an_admin_revokes_a_key_and_the_api_refuses_it(alice_client, key, post_request):
    stored = IngestKey.objects.get()
    alice_client.post(f"/p/clinic/keys/{stored.pk}/revoke")
    stored.refresh_from_db()
    assert stored.revoked_at is not None
    assert post_request(key, "c", {"messages": []}).status_code == 401


def test_forms_need_a_csrf_token(alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post("/p/clinic/keys/new", {"label": "x"}).status_code == 403
    assert IngestKey.objects.count() == 0


@pytest.mark.parametrize("role", [Membership.Role.VIEWER, Membership.Role.MEMBER])
def test_only_admins_manage_keys(project, key, role):
    user = get_user_model().objects.create_user("bob")
    Membership.objects.create(project=project, user=user, role=role)
    client = Client()
    client.force_login(user)
    assert client.post("/p/clinic/keys/new", {"label": "x"}).status_code == 404
    stored = IngestKey.objects.get()
    assert client.post(f"/p/clinic/keys/{stored.pk}/revoke").status_code == 404
    stored.refresh_from_db()
    assert stored.revoked_at is None
    assert b"Create key" not in client.get("/p/clinic/keys/").content


def test_logging_in_and_out_works(alice):
    client = Client()
    response = client.post("/login/", {"username": "alice", "password": "alice-password-1"})
    assert response.status_code == 302
    assert client.get("/p/clinic/").status_code == 200
    client.post("/logout/")
    assert client.get("/p/clinic/").status_code == 302


def test_events_sent_before_the_first_request_are_shown(alice_client, key, post_events):
    post_events(key, "early", {"type": "hold.started", "tool_call_ids": ["call_early"]})
    page = alice_client.get("/p/clinic/calls/early/").content.decode()
    section = re.search(r'<ol class="events before-first" id="turn-0-events".*?</ol>', page, re.S).group(0)
    assert "hold.started" in section and "call_early" in section


def test_the_calls_list_pages_without_skipping_calls_that_started_together(
    alice_client, key, post_request
):
    from calls.access import CALLS_PER_PAGE

    same_time = {"X-Sent-At": "2026-11-30T05:00:00Z"}
    for n in range(CALLS_PER_PAGE + 5):
        post_request(key, f"call-{n:03d}", {"messages": []}, **same_time)
    first = alice_client.get("/p/clinic/").content.decode()
    older = html.unescape(re.search(r'<a href="(\?before=[^"]+)">Older calls', first).group(1))
    second = alice_client.get("/p/clinic/" + older).content.decode()
    shown = re.findall(r'>(call-\d{3})</a>', first) + re.findall(r'>(call-\d{3})</a>', second)
    assert sorted(shown) == [f"call-{n:03d}" for n in range(CALLS_PER_PAGE + 5)]


def test_the_calls_list_filters_by_status_severity_rule_and_agent(alice_client, key, post_request, post_events):
    for body in sample_bodies("async_tool_user_speaks"):
        post_request(key, "async", body, **{"X-Agent": "pipecat"})
    for body in sample_bodies("sync_tool"):
        post_request(key, "clean", body, **{"X-Agent": "livekit"})
    post_events(key, "clean", {"type": "call.ended"})

    def shown(query):
        page = alice_client.get("/p/clinic/?" + query).content.decode()
        return sorted(re.findall(r'>(async|clean)</a>', page))

    assert shown("") == ["async", "clean"]
    assert shown("status=live") == ["async"] and shown("status=ended") == ["clean"]
    assert shown("severity=warning") == ["async"] and shown("severity=error") == []
    assert shown("rule=tr104") == ["async"] and shown("rule=TC001") == []
    assert shown("agent=livekit") == ["clean"]
    assert shown("status=bogus&rule=XX999") == ["async", "clean"]  # stale links still open
    page = alice_client.get("/p/clinic/?severity=warning").content.decode()
    assert 'data-filtered="1"' in page and 'id="filtered-new"' in page
    assert 'data-filtered' not in alice_client.get("/p/clinic/").content.decode()


def test_an_admin_turns_a_rule_off_and_changes_a_severity(alice_client, key, post_request):
    form = {f"on-{code}": "1" for code in __import__("calls.rules", fromlist=["CATALOGUE"]).CATALOGUE}
    del form["on-TR101"]
    form["severity-TR104"] = "error"
    form["target_provider"] = "deepseek"
    assert alice_client.post("/p/clinic/rules/", form).status_code == 302
    answers = [post_request(key, "c", body).json()["findings"] for body in sample_bodies("async_tool_user_speaks")]
    codes = {(f["code"], f["severity"]) for answer in answers for f in answer}
    assert ("TR101", "info") not in codes
    assert ("TR104", "error") in codes
    assert ("TC005", "error") in codes  # developer messages, for a provider without them
    page = alice_client.get("/p/clinic/rules/").content.decode()
    assert 'name="on-TR101" value="1" aria-label="Run TR101">' in page  # unchecked now


def all_rules_on():
    return {f"on-{code}": "1" for code in __import__("calls.rules", fromlist=["CATALOGUE"]).CATALOGUE}


def test_an_admin_sets_thresholds_and_placeholder_patterns(alice_client, project, key, post_request):
    form = {
        **all_rules_on(),
        "pending_seconds": "10",
        "never_settled_after": "3",
        "side_effect_pattern": "^(book|refund)_",
        "placeholders": "pending regex ^Working on it\r\nterminal field state=aborted\r\n",
    }
    assert alice_client.post("/p/clinic/rules/", form).status_code == 302
    project.refresh_from_db()
    assert project.rule_settings["thresholds"] == {"pending_seconds": 10, "never_settled_after": 3}
    assert project.rule_settings["placeholders"] == ["pending regex ^Working on it", "terminal field state=aborted"]
    page = alice_client.get("/p/clinic/rules/").content.decode()
    assert 'value="10"' in page and "^(book|refund)_" in page and "terminal field state=aborted</textarea>" in page
    # The pattern is used from the next request on.
    body = {"messages": [{"role": "user", "content": "Book"}, {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "book_x", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "call_1", "content": "Working on it"}]}
    assert "TR101" in [f["code"] for f in post_request(key, "c", body).json()["findings"]]


@pytest.mark.parametrize(
    "field, value",
    [
        ("pending_seconds", "0"),
        ("pending_seconds", "soon"),
        ("never_settled_after", "1000"),
        ("side_effect_pattern", "book(|"),
        ("placeholders", "pending glob *running*"),
        ("placeholders", "pending field =x"),
        ("placeholders", "pending regex ("),
        ("placeholders", "pending regex ^(a+)+$"),
        ("side_effect_pattern", "(book|pay)+"),
    ],
)
def test_bad_thresholds_and_patterns_are_refused_and_nothing_is_saved(alice_client, project, field, value):
    before = {"off": ["TR101"]}
    project.rule_settings = before
    project.save()
    answer = alice_client.post("/p/clinic/rules/", {**all_rules_on(), field: value})
    assert answer.status_code == 400
    page = answer.content.decode()
    assert 'role="alert"' in page and 'aria-invalid="true"' in page
    assert f"{value}" in page.replace("&#x27;", "'").replace("&lt;", "<")  # what was typed, to correct
    project.refresh_from_db()
    assert project.rule_settings == before


def test_a_hand_edited_settings_dict_never_breaks_ingest(project, key, post_request):
    project.rule_settings = {"thresholds": [1], "placeholders": "x", "side_effect_pattern": "(", "target_provider": 7}
    project.save()
    assert post_request(key, "c", sample_bodies("sync_tool")[0]).status_code == 201


def test_only_admins_change_rule_settings(project):
    from calls.models import Membership as M

    user = get_user_model().objects.create_user("vera")
    M.objects.create(project=project, user=user, role=M.Role.VIEWER)
    client = Client()
    client.force_login(user)
    assert client.get("/p/clinic/rules/").status_code == 200
    assert client.post("/p/clinic/rules/", {"target_provider": "deepseek"}).status_code == 404
    project.refresh_from_db()
    assert project.rule_settings == {}


def test_the_call_page_draws_the_call_over_time(alice_client, key, post_request, post_events):
    for body in sample_bodies("async_tool_user_speaks"):
        post_request(key, "c", body)
    post_events(key, "c", [
        {"type": "hold.started", "tool_call_ids": ["call_x"]},
        {"type": "hold.released", "tool_call_ids": ["call_x"], "cause": "timeout"},
    ])
    page = alice_client.get("/p/clinic/calls/c/").content.decode()
    svg = re.search(r'<section id="call-timeline".*?</svg>', page, re.S).group(0)
    assert svg.count('class="req"') == 5  # one mark per model request
    assert svg.count('class="caller"') == 3  # the caller spoke before turns 1, 2 and 4
    assert svg.count('class="bar ') == 2  # two tool calls
    assert 'class="bar bar-delivered"' in svg and 'class="bar bar-result"' in svg
    assert 'class="hold hold-timeout"' in svg
    assert 'class="mark-warning"' in svg and "TR104" in svg
    assert "<script" not in svg and "style=" not in svg
    assert "hold-inferred" not in svg and "hold-broken" not in svg  # real hold events win


def test_the_picture_infers_holds_from_placeholders_when_no_hold_events_come(alice_client, key, post_request):
    """The async capture never sends hold.* events: its 'running' slot is drawn as a hold
    the caller broke by speaking (TL202)."""
    for body in sample_bodies("async_tool_user_speaks"):
        post_request(key, "c", body)
    page = alice_client.get("/p/clinic/calls/c/").content.decode()
    svg = re.search(r'<section id="call-timeline".*?</svg>', page, re.S).group(0)
    assert svg.count('class="hold hold-broken"') == 1
    assert "caller NOT held while a tool ran" in svg
    user = {"role": "user", "content": "Book Friday."}
    call = {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "book", "arguments": "{}"}}]}
    post_request(key, "f", {"messages": [user, call, {"role": "tool", "tool_call_id": "call_1", "content": "IN_PROGRESS"}]})
    post_request(key, "f", {"messages": [user, call, {"role": "tool", "tool_call_id": "call_1", "content": "booked"}]})
    svg = re.search(r'<section id="call-timeline".*?</svg>', alice_client.get("/p/clinic/calls/f/").content.decode(), re.S).group(0)
    assert 'class="hold hold-inferred"' in svg and "hold-broken" not in svg
