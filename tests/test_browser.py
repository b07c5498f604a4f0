"""What a person sees, in real headless Chromium against a live daphne server.

Run by `make test-browser` (and .ci/run); needs Debian's chromium.
"""

import json
import os
import shutil

import pytest

# Playwright's sync API keeps an event loop running in this thread, which
# Django would take for async code; this process only drives the browser.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

from channels.testing import ChannelsLiveServerTestCase  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402

from calls.keys import create_key  # noqa: E402
from calls.models import Membership, Project  # noqa: E402
from tests.conftest import sample_bodies  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Lets a test cut the page's socket, as a network drop would.
CAPTURE_SOCKETS = """
window.__sockets = [];
const Native = window.WebSocket;
window.WebSocket = function (...args) { const s = new Native(...args); window.__sockets.push(s); return s; };
window.WebSocket.prototype = Native.prototype;
Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
"""


@pytest.mark.browser
class LivePagesTest(ChannelsLiveServerTestCase):
    serve_static = True

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls._playwright = sync_playwright().start()
        cls.browser = cls._playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        cls._playwright.stop()
        super().tearDownClass()

    def setUp(self):
        self.project = Project.objects.create(slug="clinic", name="Clinic")
        user = get_user_model().objects.create_user("alice", password="alice-password-1")
        Membership.objects.create(project=self.project, user=user, role=Membership.Role.ADMIN)
        self.key = create_key(self.project)[1]
        self.context = self.browser.new_context(viewport={"width": 1400, "height": 900})
        self.page = self.context.new_page()
        self.page.add_init_script(CAPTURE_SOCKETS)
        self.errors = []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.goto(self.live_server_url + "/login/")
        self.page.fill("input[name=username]", "alice")
        self.page.fill("input[name=password]", "alice-password-1")
        self.page.click("button.primary")
        self.page.wait_for_url(self.live_server_url + "/p/clinic/")

    def tearDown(self):
        self.context.close()

    def ingest(self, call_id, body):
        response = self.page.request.post(
            f"{self.live_server_url}/api/v1/calls/{call_id}/requests",
            data=body,
            headers={"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"},
        )
        assert response.status == 201, response.text()
        return response.json()

    def wait_live(self, connections=1):
        # A function, not an expression: our CSP forbids eval even to Playwright.
        self.page.wait_for_function(
            "n => (window.__callscopeLive || 0) >= n", arg=connections, timeout=10000
        )

    def mark_page(self):
        """Set a flag that a reload would wipe."""
        self.page.evaluate("() => { window.__sameDocument = true; }")

    def assert_not_reloaded(self):
        assert self.page.evaluate("() => window.__sameDocument === true")

    def test_a_new_call_appears_on_the_open_calls_list(self):
        self.wait_live()
        self.mark_page()
        expect(self.page.locator("[data-empty-for=call-rows]")).to_be_visible()
        self.ingest("call-from-agent", sample_bodies("sync_tool")[0])
        row = self.page.locator("#call-rows tr", has_text="call-from-agent")
        expect(row).to_be_visible(timeout=5000)
        expect(row.locator("td").nth(5)).to_have_text("1")  # turns
        self.ingest("call-from-agent", sample_bodies("sync_tool")[1])
        expect(row.locator("td").nth(5)).to_have_text("2", timeout=5000)
        expect(self.page.locator("#call-rows tr")).to_have_count(1)
        expect(self.page.locator("[data-empty-for=call-rows]")).to_have_count(0)
        self.assert_not_reloaded()
        assert self.errors == []

    def test_a_filtered_list_updates_its_rows_but_announces_new_calls(self):
        self.ingest("known", sample_bodies("sync_tool")[0])
        self.ingest("ended-call", sample_bodies("sync_tool")[0])
        self.page.request.post(
            f"{self.live_server_url}/api/v1/calls/ended-call/events",
            data='{"type": "call.ended"}',
            headers={"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"},
        )
        self.page.goto(f"{self.live_server_url}/p/clinic/?status=live")
        self.wait_live()
        self.page.wait_for_timeout(300)  # the resync answer has arrived
        expect(self.page.locator("#filtered-new")).to_be_hidden()
        expect(self.page.locator("#call-rows tr")).to_have_count(1)
        self.ingest("known", sample_bodies("sync_tool")[1])
        row = self.page.locator("#call-rows tr", has_text="known")
        expect(row.locator("td").nth(5)).to_have_text("2", timeout=5000)
        self.ingest("newcomer", sample_bodies("sync_tool")[0])
        expect(self.page.locator("#filtered-new")).to_be_visible(timeout=5000)
        expect(self.page.locator("#call-rows tr")).to_have_count(1)

    def test_new_turns_appear_on_the_open_call_page(self):
        bodies = sample_bodies("fix_in_place")
        self.ingest("c1", bodies[0])
        self.page.goto(f"{self.live_server_url}/p/clinic/calls/c1/")
        self.wait_live()
        self.mark_page()
        self.ingest("c1", bodies[1])
        self.ingest("c1", bodies[2])
        expect(self.page.locator("#turn-3")).to_contain_text("1 changed in place", timeout=5000)
        numbers = self.page.locator("#turns > section").evaluate_all("s => s.map(e => e.id)")
        assert numbers == ["turn-1", "turn-2", "turn-3"]
        expect(self.page.locator("#call-header")).to_contain_text("3")
        # Table rows arrive after other fragments in one message: they must still land.
        expect(self.page.locator("#tool-rows tr")).to_have_count(1)
        expect(self.page.locator("#tool-rows")).to_contain_text("check_availability")
        expect(self.page.locator("#tool-rows")).to_contain_text("T3 result")
        self.assert_not_reloaded()
        assert self.errors == []

    def test_a_dropped_connection_catches_up_on_what_it_missed(self):
        bodies = sample_bodies("sync_tool")
        self.ingest("c1", bodies[0])
        self.page.goto(f"{self.live_server_url}/p/clinic/calls/c1/")
        self.wait_live()
        self.mark_page()
        self.page.evaluate("() => window.__sockets.at(-1).close()")
        expect(self.page.locator("#live-status")).to_have_attribute("data-state", "down")
        self.ingest("c1", bodies[1])  # while the page has no socket
        self.wait_live(connections=2)
        expect(self.page.locator("#turn-2")).to_be_visible(timeout=5000)
        expect(self.page.locator("#live-status")).to_have_attribute("data-state", "live")
        self.assert_not_reloaded()

    def test_the_turn_page_shows_and_copies_the_exact_body(self):
        body = sample_bodies("async_tool_user_speaks")[-1]
        self.ingest("c1", body)
        self.context.grant_permissions(["clipboard-read", "clipboard-write"])
        self.page.goto(f"{self.live_server_url}/p/clinic/calls/c1/turns/1/?tab=raw")
        assert self.page.locator("#raw-body").text_content().encode() == body
        self.page.click("[data-copy=raw-body]")
        assert self.page.evaluate("() => navigator.clipboard.readText()").encode() == body
        assert json.loads(body)["messages"][6]["role"] == "developer"
        assert self.errors == []

    def test_the_turn_drill_down_marks_strings_and_moves_by_keyboard(self):
        for body in sample_bodies("async_tool_user_speaks"):
            self.ingest("c2", body)
        self.context.grant_permissions(["clipboard-read", "clipboard-write"])
        self.page.goto(f"{self.live_server_url}/p/clinic/calls/c2/turns/3/")
        escape = self.page.locator("#m6 .mk-escape").first
        expect(escape).to_be_visible()
        assert escape.text_content().startswith("\\u0c36")
        # The marker is drawn by CSS: the element's text is the exact character.
        joiner = self.page.locator("#m1 .mk-joiner").first
        assert joiner.text_content() == "\u200c"
        assert "ZWNJ" in joiner.evaluate("e => getComputedStyle(e, '::before').content")
        # n jumps to the first finding at its message; ] goes to the next turn, same tab.
        self.page.keyboard.press("n")
        focused = self.page.evaluate("() => document.activeElement.closest('li[id^=m]').id")
        assert focused == "m6"
        self.page.click("text=What the model sees")
        expect(self.page.locator("tr.dropped")).to_contain_text("developer")
        self.page.keyboard.press("]")
        self.page.wait_for_url("**/turns/4/?tab=model")
        # Export: the curl snippet copies exactly what is shown.
        self.page.click("text=Export")
        self.page.click("[data-copy=curl-snippet]")
        copied = self.page.evaluate("() => navigator.clipboard.readText()")
        assert copied.startswith("curl -sS https://api.openai.com/v1/chat/completions")
        assert self.errors == []

    def login(self, context, name, password):
        page = context.new_page()
        page.add_init_script(CAPTURE_SOCKETS)
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.goto(self.live_server_url + "/login/")
        page.fill("input[name=username]", name)
        page.fill("input[name=password]", password)
        page.click("button.primary")
        page.wait_for_url(self.live_server_url + "/p/clinic/")
        return page

    def test_two_people_triage_one_call_together_live(self):
        bob = get_user_model().objects.create_user("bob", password="bob-password-1")
        Membership.objects.create(project=self.project, user=bob, role=Membership.Role.MEMBER)
        orphan = json.dumps({"messages": [{"role": "tool", "tool_call_id": "call_X", "content": "ok"}, {"role": "user", "content": "Hello?"}]})
        self.ingest("broken-call", orphan)
        bob_context = self.browser.new_context(viewport={"width": 1400, "height": 900})
        bob_page = self.login(bob_context, "bob", "bob-password-1")
        alice = self.page
        call_url = f"{self.live_server_url}/p/clinic/calls/broken-call/"
        # Bob watches the queue; Alice opens the call.
        bob_page.goto(f"{self.live_server_url}/p/clinic/queue/")
        expect(bob_page.locator("#queue-rows tr", has_text="broken-call")).to_be_visible()
        alice.goto(call_url)
        bob_page.wait_for_function("n => (window.__callscopeLive || 0) >= n", arg=1, timeout=10000)
        alice.wait_for_function("n => (window.__callscopeLive || 0) >= n", arg=2, timeout=10000)
        # Alice assigns the call to herself with one key: Bob's queue row follows live.
        alice.keyboard.press("a")
        expect(bob_page.locator("#queue-rows tr", has_text="broken-call")).to_contain_text("alice", timeout=5000)
        # Bob opens the call too: both see each other here.
        bob_page.goto(call_url)
        expect(alice.locator(".presence .avatar", has_text="B")).to_be_visible(timeout=5000)
        expect(bob_page.locator(".presence .avatar", has_text="A")).to_be_visible(timeout=5000)
        # Bob moves it to investigating; Alice's panel changes without a reload.
        alice.evaluate("() => { window.__sameDocument = true; }")
        bob_page.wait_for_function("n => (window.__callscopeLive || 0) >= n", arg=2, timeout=10000)
        bob_page.select_option("#team-panel select[name=status]", "investigating")
        bob_page.click("#team-panel button[value=status]")
        expect(alice.locator("#team-panel .sectionhead .tstatus")).to_have_text("investigating", timeout=5000)
        expect(alice.locator("#activity")).to_contain_text("bob status investigating")
        # Alice mentions Bob: his inbox count rises live.
        alice.fill("#comment-body", "@bob the call message was dropped before turn 1")
        alice.click(".commentform button.primary")
        expect(bob_page.locator("#unread .badge")).to_have_text("1", timeout=5000)
        expect(bob_page.locator("#comments")).to_contain_text("the call message was dropped", timeout=5000)
        expect(alice.locator("#comment-body")).to_have_value("")  # the form cleared itself
        assert alice.evaluate("() => window.__sameDocument === true")  # all without a reload
        # A refused change says why, in place.
        bob_page.select_option("#team-panel select[name=status]", "resolved")
        bob_page.click("#team-panel button[value=status]")
        expect(bob_page.locator("#form-error")).to_contain_text("resolution reason is required")
        assert [e for e in self.errors if "400" not in e] == []
        bob_context.close()
