"""The rule pages: one documented page per catalogue code, and the catalogue itself.

This module doubles as the urlconf of its tests (the project's urls.py does not route the
rule pages yet), with the real dashboard urls included for login, logout and home.
"""

import dataclasses
import json

import pytest
from django.contrib.auth import get_user_model
from django.urls import include, path
from django.utils.html import escape

from calls import ruleviews
from calls.rule_docs import DOCS, RuleDoc, doc_for
from calls.rules import CATALOGUE, ERROR, INFO, WARNING

urlpatterns = [
    path("rules/", ruleviews.rule_list, name="rules"),
    path("rules/<str:code>/", ruleviews.rule_detail, name="rule"),
    path("", include("dashboard.urls")),
]

pytestmark = pytest.mark.urls("tests.test_rule_pages")

CODES = list(CATALOGUE)


def html_of(response) -> str:
    return response.content.decode()


# ---- the docs themselves --------------------------------------------------------------------


def test_every_catalogue_code_has_a_complete_doc():
    assert set(DOCS) == set(CATALOGUE)
    for code, doc in DOCS.items():
        assert isinstance(doc, RuleDoc), code
        for field in ("why", "bad", "good", "fix"):
            value = getattr(doc, field)
            assert isinstance(value, str) and value.strip(), (code, field)
        assert isinstance(doc.provider_errors, tuple), code
        for pair in doc.provider_errors:
            assert isinstance(pair, tuple) and len(pair) == 2, code
            provider, text = pair
            assert provider.strip() and text.strip(), code


def test_docs_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        DOCS["TC001"].why = "changed"


@pytest.mark.parametrize("code", CODES)
def test_examples_are_whole_json_values(code):
    doc = DOCS[code]
    assert json.loads(doc.bad) != json.loads(doc.good), code
    assert "\n" in doc.bad and "\n" in doc.good, "examples are multi-line, readable excerpts"


def test_doc_for_accepts_any_case_and_refuses_unknown_codes():
    assert doc_for("tc001") is DOCS["TC001"]
    assert doc_for(" TR104 ") is DOCS["TR104"]
    with pytest.raises(KeyError):
        doc_for("TC999")


def test_error_rules_that_providers_reject_quote_their_texts():
    # The two structural rules every provider enforces carry OpenAI's exact wording.
    tc001 = dict(DOCS["TC001"].provider_errors)
    tc002 = dict(DOCS["TC002"].provider_errors)
    assert "must be a response to a preceeding message with 'tool_calls'" in " ".join(
        text for provider, text in DOCS["TC001"].provider_errors if provider.startswith("OpenAI")
    )
    assert "did not have response messages" in tc002["OpenAI Chat Completions"]
    assert "No tool call found for function call output" in tc001["OpenAI Responses"]
    assert "No tool output found for function call" in tc002["OpenAI Responses"]
    assert "Anthropic Messages" in tc001 and "Google Gemini" in tc001


def test_tc001_bad_example_is_a_result_whose_call_message_was_dropped():
    bad = json.loads(DOCS["TC001"].bad)
    good = json.loads(DOCS["TC001"].good)
    assert bad[-1]["role"] == "tool"
    assert not any(m.get("tool_calls") for m in bad)
    call_ids = [c["id"] for m in good for c in m.get("tool_calls", [])]
    assert bad[-1]["tool_call_id"] in call_ids


@pytest.mark.parametrize("code", ["TR103", "TR104"])
def test_async_examples_carry_escapes_and_json_inside_a_decoded_string(code):
    (message,) = json.loads(DOCS[code].bad)
    assert message["role"] == "developer"
    assert "\\u0c36" in message["content"]  # a literal escape: what the model reads
    assert "శుక్రవారం" not in message["content"]
    payload = json.loads(message["content"])
    assert payload["type"] == "async_tool" and payload["status"] == "finished"
    assert isinstance(payload["result"], str)  # JSON text inside a JSON string
    assert json.loads(payload["result"])["day"] == "శుక్రవారం"
    (fixed,) = json.loads(DOCS[code].good)
    assert fixed["role"] == "tool" and "శుక్రవారం" in fixed["content"]
    assert "\\u" not in fixed["content"]


def test_tr101_bad_example_shows_pipecat_placeholders():
    contents = [m.get("content") for m in json.loads(DOCS["TR101"].bad) if m["role"] == "tool"]
    assert contents == ["CANCELLED", "IN_PROGRESS"]


# ---- the catalogue page ---------------------------------------------------------------------


def test_list_page_links_every_code_grouped_by_family(alice_client):
    response = alice_client.get("/rules/")
    assert response.status_code == 200
    page = html_of(response)
    for code, rule in CATALOGUE.items():
        assert f'href="/rules/{code}/"' in page, code
        assert escape(rule.summary) in page, code
        assert rule.slug in page, code
    for title in (
        "Structure (providers reject)",
        "Results (the model misreads)",
        "Timeline across requests",
        "Responses",
    ):
        assert f">{title}</h2>" in page
    # Each family's rows come in catalogue order, under the right heading.
    assert page.index("Structure (providers reject)</h2>") < page.index('href="/rules/TC001/"')
    assert page.index('href="/rules/TC006/"') < page.index("Results (the model misreads)</h2>")
    assert page.index("Timeline across requests</h2>") < page.index('href="/rules/TL201/"')
    assert page.index("Responses</h2>") < page.index('href="/rules/RS301/"')


def test_list_page_shows_each_severity_badge(alice_client):
    page = html_of(alice_client.get("/rules/"))
    for severity in (ERROR, WARNING, INFO):
        assert f'class="status {ruleviews.SEVERITY_CLASS[severity]}"' in page
    row = page[page.index('href="/rules/TR101/"') :]
    assert row.index(f">{INFO}</span>") < row.index("</tr>")


# ---- one page per rule ----------------------------------------------------------------------


@pytest.mark.parametrize("code", CODES)
def test_every_rule_page_renders_its_doc(alice_client, code):
    response = alice_client.get(f"/rules/{code}/")
    assert response.status_code == 200
    page = html_of(response)
    rule, doc = CATALOGUE[code], DOCS[code]
    assert f"<h1><span class=\"mono\">{code}</span> {rule.slug}</h1>" in page
    badge = ruleviews.SEVERITY_CLASS[rule.severity]
    assert f'class="status {badge}">{rule.severity}</span>' in page
    assert escape(rule.summary) in page
    for heading in (
        "Why it matters on a live call",
        "Bad",
        "Good",
        "What the providers answer",
        "The usual fix",
    ):
        assert f">{heading}</h2>" in page, heading
    for name, example in (("bad", doc.bad), ("good", doc.good)):
        pre = f'<pre class="snippet evtext" tabindex="0" aria-labelledby="{name}-title">'
        assert f"{pre}{escape(example)}</pre>" in page, name
    for provider, text in doc.provider_errors:
        assert f"<td>{escape(provider)}</td><td><code>{escape(text)}</code></td>" in page
    if not doc.provider_errors:
        assert "providers accept this request" in page or "No verbatim provider error" in page
    # Severity and summary come before the explanations.
    assert page.index(escape(rule.summary)) < page.index("Why it matters on a live call")


def test_tc001_and_tc002_pages_quote_openai(alice_client):
    tc001 = html_of(alice_client.get("/rules/TC001/"))
    tc002 = html_of(alice_client.get("/rules/TC002/"))
    assert escape("must be a response to a preceeding message with 'tool_calls'") in tc001
    assert escape("not found in 'tool_calls' of previous message") in tc001
    assert "did not have response messages" in tc002
    for page in (tc001, tc002):
        assert "<td>OpenAI Chat Completions</td>" in page


def test_rules_without_provider_errors_say_so(alice_client):
    page = html_of(alice_client.get("/rules/TR105/"))
    assert "None: providers accept this request" in page
    assert "<table class=\"provider-errors\">" not in page


def test_backticks_in_doc_texts_become_code_elements(alice_client):
    page = html_of(alice_client.get("/rules/TC002/"))
    assert "put its result in a <code>tool</code> message" in page
    assert "`" not in page[page.index(">The usual fix</h2>") :]


def test_code_is_accepted_in_any_case(alice_client):
    response = alice_client.get("/rules/tc001/")
    assert response.status_code == 200
    assert '<span class="mono">TC001</span> orphan-tool-result' in html_of(response)


def test_previous_and_next_links_follow_the_catalogue(alice_client):
    first = html_of(alice_client.get(f"/rules/{CODES[0]}/"))
    assert 'rel="prev"' not in first
    assert f'data-shortcut="]" href="/rules/{CODES[1]}/"' in first
    last = html_of(alice_client.get(f"/rules/{CODES[-1]}/"))
    assert f'data-shortcut="[" href="/rules/{CODES[-2]}/"' in last
    assert 'rel="next"' not in last


@pytest.mark.parametrize("code", ["TC999", "nope", "TC00", "TC0011"])
def test_unknown_code_is_404(alice_client, code):
    assert alice_client.get(f"/rules/{code}/").status_code == 404


@pytest.mark.parametrize("url", ["/rules/", "/rules/TC001/", "/rules/TC999/"])
def test_anonymous_users_are_sent_to_login(client, db, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


@pytest.mark.parametrize("url", ["/rules/", "/rules/TC001/"])
def test_only_get(alice_client, url):
    assert alice_client.post(url).status_code == 405


def test_pages_need_no_project(client, db):
    """The catalogue is global: a user of no project reads it too."""
    loner = get_user_model().objects.create_user("loner", password="loner-password-1")
    client.force_login(loner)
    for url in ("/rules/", "/rules/TL208/"):
        response = client.get(url)
        assert response.status_code == 200
        assert list(response.context["projects"]) == []
        assert response.context.get("project") is None


def test_header_renders_for_a_member(alice_client, project):
    response = alice_client.get("/rules/TC001/")
    assert list(response.context["projects"]) == [project]
    page = html_of(response)
    assert '<span class="who">alice</span>' in page
    assert 'class="crumbs"' not in page  # no project is passed, so no project crumbs


def test_content_is_escaped(alice_client):
    tc006 = html_of(alice_client.get("/rules/TC006/"))
    assert "<code>invalid message content type: &lt;nil&gt;</code>" in tc006
    assert "<nil>" not in tc006
    tc002 = html_of(alice_client.get("/rules/TC002/"))
    assert "&lt;400&gt; InternalError.Algo.InvalidParameter" in tc002
    assert "<400>" not in tc002
    # JSON quotes of the examples are escaped too, and nothing was marked safe.
    assert "{&quot;role&quot;: &quot;tool&quot;" in tc006
    assert '{"role": "tool"' not in tc006


def test_hostile_doc_text_is_escaped(alice_client, monkeypatch):
    hostile = RuleDoc(
        why="A `<script>alert(1)</script>` in why & <b>bold</b>.",
        bad='[{"role": "user", "content": "</pre><script>alert(2)</script>"}]',
        good="[]",
        provider_errors=(("<i>Provider</i>", "<img src=x onerror=alert(3)>"),),
        fix="Use <em>care</em>.",
    )
    monkeypatch.setitem(DOCS, "TC003", hostile)
    page = html_of(alice_client.get("/rules/TC003/"))
    assert "<script>" not in page and "<img" not in page and "<b>" not in page
    assert "<em>" not in page and "<i>" not in page
    assert "<code>&lt;script&gt;alert(1)&lt;/script&gt;</code>" in page
    assert "&lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;" in page
    assert "<code>&lt;img src=x onerror=alert(3)&gt;</code>" in page


def test_tl209_examples_are_what_the_rule_says():
    from calls.normalize import normalize
    from calls.rules import structure

    doc = doc_for("TL209")
    fired = [f.code for f in structure.check(normalize("openai.chat", {"messages": json.loads(doc.bad)}))]
    assert "TL209" in fired
    assert structure.check(normalize("openai.chat", {"messages": json.loads(doc.good)})) == []
