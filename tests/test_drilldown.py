"""Turn drill-down: strings made visible, diffs, the text the model sees, fixtures."""

import html
import json
import re

import pytest

from calls import diffs, fixtures, strings
from tests.conftest import sample_bodies

SYSTEM = {"role": "system", "content": "You are Sita."}


# --- strings made visible ---------------------------------------------------------------


def kinds(text):
    return [(s.kind, s.text) for s in strings.inspect(text).segments if s.kind != strings.TEXT]


def test_segments_are_the_string_exactly():
    text = 'Friday \\u0c36\u0c41 \u200b\ufeff\u00a0x\r\n\ttab  \n"quoted" \\n end  '
    view = strings.inspect(text)
    assert "".join(s.text for s in view.segments) == text


def test_a_literal_escape_is_marked_and_the_real_letter_is_not():
    assert kinds("day: \\u0c36") == [(strings.ESCAPE, "\\u0c36")]
    assert kinds("day: \u0c36") == []
    view = strings.inspect("\\u0c36\\u0c41\\u0c15")
    # A run of escapes is one mark that says what it spells; the count is per escape.
    assert view.escapes == 3 and len(view.segments) == 1 and "spelling 'శుక'" in view.segments[0].label
    assert "not 'శ'" in strings.inspect("\\u0c36 x").segments[0].label
    # ASCII escapes and other sequences are shown, but as a milder kind.
    assert kinds('say \\"hi\\" \\u0041\\n') == [(strings.SEQUENCE, '\\"'), (strings.SEQUENCE, '\\"'), (strings.SEQUENCE, "\\u0041\\n")]


@pytest.mark.parametrize(
    "char, name",
    [("\u200b", "ZWSP"), ("\u200d", "ZWJ"), ("\ufeff", "BOM"), ("\u00a0", "NBSP"), ("\u202e", "RLO"), ("\u00ad", "SHY")],
)
def test_invisible_characters_are_marked_by_name(char, name):
    (segment,) = [s for s in strings.inspect(f"a{char}b").segments if s.kind != strings.TEXT]
    assert (segment.kind, segment.text, segment.label) == (strings.INVISIBLE, char, name)


def test_controls_and_trailing_spaces_are_marked():
    found = kinds("line one  \r\n\tindented\x07 end ")
    assert found == [
        (strings.TRAILING, "  "), (strings.CONTROL, "\r"), (strings.CONTROL, "\t"),
        (strings.CONTROL, "\x07"), (strings.TRAILING, " "),
    ]
    assert kinds("plain text\nsecond line") == []  # newlines and inner spaces are fine


def test_lengths_tokens_and_scripts():
    text = "శుక్రవారం 3pm नमस्ते 你好"
    view = strings.inspect(text)
    assert view.characters == len(text) and view.utf8_bytes == len(text.encode())
    assert {name for name, _n in view.scripts} == {"Telugu", "Devanagari", "CJK", "Latin"}
    assert strings.estimate_tokens("abcdefgh") == 2 and strings.estimate_tokens("శు") == 2


def test_json_inside_a_string_decodes_layer_by_layer():
    inner = json.dumps({"day": "శుక్రవారం"})  # ensure_ascii: \\u0c36...
    text = json.dumps({"type": "async_tool", "result": inner})
    layers = strings.inspect(text).layers
    assert len(layers) == 2
    assert '"result": "{\\"day\\"' in layers[0] and "శుక్రవారం" in layers[1]
    assert strings.inspect("not json").layers == []


# --- diffs ------------------------------------------------------------------------------


def side(index, digest, placeholder=False, results=()):
    return diffs.Side(index, digest, "user", {"content": digest}, results, placeholder)


def test_each_kind_of_change_is_told_apart():
    before = [side(0, "sys"), side(1, "a"), side(2, "b"), side(3, "p", True, ("call_1",)), side(4, "gone")]
    after = [side(0, "sys"), side(1, "b"), side(2, "a2"), side(3, "r", False, ("call_1",)), side(4, "new")]
    rows = diffs.diff(before, after)
    found = [(r.kind, r.before and r.before.digest, r.after and r.after.digest) for r in rows]
    assert ("same", "sys", "sys") in found
    assert ("settled", "p", "r") in found
    assert ("moved", "b", "b") in found or ("moved", "a", "a") not in found
    assert diffs.counts(rows)["settled"] == 1
    assert {k for k, _b, _a in found} >= {"same", "settled", "edited"}


def test_appended_inserted_removed_and_edited():
    base = [side(0, "a"), side(1, "b")]
    assert [r.kind for r in diffs.diff(base, base + [side(2, "c")])] == ["same", "same", "appended"]
    assert [r.kind for r in diffs.diff(base, [side(0, "a"), side(1, "x"), side(2, "b")])] == ["same", "inserted", "same"]
    assert [r.kind for r in diffs.diff(base, [side(0, "a")])] == ["same", "removed"]
    edited = diffs.diff(base, [side(0, "a"), side(1, "B")])
    assert [r.kind for r in edited] == ["same", "edited"]
    assert ("-", '  "content": "b"') in edited[1].lines and ("+", '  "content": "B"') in edited[1].lines
    assert [r.kind for r in diffs.diff(base, [side(0, "b"), side(1, "a")])].count("moved") == 1


def test_a_placeholder_replaced_by_a_different_call_is_an_edit_not_a_settle():
    rows = diffs.diff([side(0, "p", True, ("call_1",))], [side(0, "r", False, ("call_2",))])
    assert [r.kind for r in rows] == ["edited"]


@pytest.fixture
def fip(key, post_request):
    bodies = sample_bodies("fix_in_place")
    for body in bodies:
        post_request(key, "fip", body)
    return bodies


def test_the_diff_tab_shows_a_slot_settled_in_place(alice_client, fip):
    page = alice_client.get("/p/clinic/calls/fip/turns/3/?tab=diff").content.decode()
    assert "Against turn 2" in page
    assert 'class="drow dk-settled"' in page
    assert 'class="drow dk-same"' not in page  # only the changes by default
    everything = alice_client.get("/p/clinic/calls/fip/turns/3/?tab=diff&all=1").content.decode()
    assert 'class="drow dk-same"' in everything


def test_the_diff_tab_compares_any_two_turns(alice_client, fip):
    page = alice_client.get("/p/clinic/calls/fip/turns/5/?tab=diff&against=1").content.decode()
    assert "Against turn 1" in page and 'class="drow dk-appended"' in page
    assert alice_client.get("/p/clinic/calls/fip/turns/5/?tab=diff&against=99").status_code == 404


def test_a_pasted_fixture_is_compared_with_the_turn(alice_client, fip):
    body = json.loads(fip[2])
    body["messages"][1]["content"] = "An eval's version of what the caller said"
    url = "/p/clinic/calls/fip/turns/3/diff"
    page = alice_client.post(url, {"fixture": json.dumps(body)}).content.decode()
    assert "Against your fixture" in page and 'class="drow dk-edited"' in page
    assert "An eval&#x27;s version" in page
    # Our own export is a fixture too.
    exported = alice_client.get("/p/clinic/calls/fip/turns/3/fixture.json").content
    same = alice_client.post(url, {"fixture": exported.decode()}).content.decode()
    assert "No differences" in same


def test_a_fixture_file_upload_and_bad_fixtures(alice_client, fip):
    from django.core.files.uploadedfile import SimpleUploadedFile

    url = "/p/clinic/calls/fip/turns/3/diff"
    upload = SimpleUploadedFile("fixture.json", fip[1], content_type="application/json")
    page = alice_client.post(url, {"fixture_file": upload}).content.decode()
    assert "Against your fixture" in page
    bad = alice_client.post(url, {"fixture": "{not json"})
    assert bad.status_code == 400 and "not valid JSON" in bad.content.decode()
    wrong = alice_client.post(url, {"fixture": json.dumps({"contents": []})})
    assert wrong.status_code == 400
    assert alice_client.post(url, {"fixture": ""}).status_code == 400


# --- the text the model sees ------------------------------------------------------------


def test_chatml_drops_the_developer_message_and_says_so(alice_client, key, post_request):
    for body in sample_bodies("async_tool_user_speaks"):
        post_request(key, "async", body)
    page = alice_client.get("/p/clinic/calls/async/turns/3/?tab=model&template=chatml").content.decode()
    assert "&lt;|im_start|&gt;user" in page
    row = re.search(r'<tr class="dropped">.*?</tr>', page, re.S).group(0)
    assert ">developer<" in row and "dropped" in row
    assert "శుక్రవారం" in page  # non-ASCII kept by tojson


def test_a_template_error_shows_as_a_finding(alice_client, key, post_request):
    parallel = {"role": "assistant", "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "check", "arguments": '{"day": "Fri"}'}},
        {"id": "call_b", "type": "function", "function": {"name": "check", "arguments": '{"day": "Sat"}'}}]}
    post_request(key, "par", {"messages": [SYSTEM, {"role": "user", "content": "Fri or Sat?"}, parallel]})
    page = alice_client.get("/p/clinic/calls/par/turns/1/?tab=model&template=llama3").content.decode()
    assert "TP401" in page and "This model only supports single tool-calls at once!" in page
    mistral = alice_client.get("/p/clinic/calls/par/turns/1/?tab=model&template=mistral").content.decode()
    assert "Tool call IDs should be alphanumeric strings with length 9!" in mistral
    chatml = alice_client.get("/p/clinic/calls/par/turns/1/?tab=model&template=chatml").content.decode()
    assert "TP401" not in chatml and chatml.count("&lt;tool_call&gt;") == 2
    assert alice_client.get("/p/clinic/calls/par/turns/1/?tab=model&template=nope").status_code == 404


def tiny_tokenizer_json():
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator(["hello there friday", "<|im_start|> user"], trainers.WordLevelTrainer(special_tokens=["[UNK]"]))
    return tokenizer.to_str()


def test_an_admin_uploads_a_tokenizer_config_and_a_tokenizer(alice_client, project, key, post_request):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from calls.models import ChatTemplate

    config = {"bos_token": {"content": "<s>"}, "eos_token": "</s>", "chat_template": "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"}
    answer = alice_client.post("/p/clinic/templates/", {
        "name": "House template",
        "template_file": SimpleUploadedFile("tokenizer_config.json", json.dumps(config).encode()),
        "tokenizer_file": SimpleUploadedFile("tokenizer.json", tiny_tokenizer_json().encode()),
    })
    assert answer.status_code == 302
    template = ChatTemplate.objects.get(project=project)
    assert template.special_tokens == {"bos_token": "<s>", "eos_token": "</s>"}
    post_request(key, "t", {"messages": [{"role": "user", "content": "hello there"}]})
    page = alice_client.get(f"/p/clinic/calls/t/turns/1/?tab=model&template=project-{template.pk}").content.decode()
    assert "&lt;s&gt;[user] hello there" in page
    assert "tokens (project tokenizer)" in page and 'class="tok"' in page


@pytest.mark.parametrize(
    "form, field",
    [
        ({"name": "", "source": "{{ x }}"}, "name"),
        ({"name": "t", "source": "{% for %}"}, "does not compile"),
        ({"name": "t", "source": ""}, "Paste a template"),
    ],
)
def test_bad_templates_are_refused(alice_client, form, field):
    answer = alice_client.post("/p/clinic/templates/", form)
    assert answer.status_code == 400 and (field in answer.content.decode() or 'aria-invalid="true"' in answer.content.decode())


def test_viewers_cannot_upload_templates(project):
    from django.contrib.auth import get_user_model
    from django.test import Client

    from calls.models import Membership

    user = get_user_model().objects.create_user("vic")
    Membership.objects.create(project=project, user=user, role=Membership.Role.VIEWER)
    client = Client()
    client.force_login(user)
    assert client.get("/p/clinic/templates/").status_code == 200
    assert client.post("/p/clinic/templates/", {"name": "x", "source": "{{ 1 }}"}).status_code == 404


def test_the_sandbox_refuses_unsafe_templates():
    from calls import chattemplates
    from calls.normalize import normalize

    request = normalize("openai.chat", {"messages": [{"role": "user", "content": "hi"}]})
    rendering = chattemplates.render("{{ messages.__class__.__mro__ }}", request)
    assert rendering.error and "unsafe" in rendering.error.lower()


# --- export ------------------------------------------------------------------------------


def test_a_turn_exports_in_three_renderings(alice_client, key, post_request):
    bodies = sample_bodies("async_tool_user_speaks")
    for body in bodies:
        post_request(key, "async", body)
    base = "/p/clinic/calls/async/turns/5/fixture.json"
    captured = json.loads(alice_client.get(base).content)
    assert captured["callscope_fixture"] == 1 and captured["rendering"] == "captured"
    assert captured["request"] == json.loads(bodies[4])
    readable = json.loads(alice_client.get(base + "?rendering=readable").content)["request"]["messages"]
    assert [m["role"] for m in readable].count("developer") == 0  # the result is back in its slot
    slot = next(m for m in readable if m.get("tool_call_id", "").startswith("call_3q4t"))
    assert json.loads(slot["content"]) == {"outcome": "produced", "day": "శుక్రవారం", "free": ["15:00", "15:30"]}
    assert "\\u0c36" not in slot["content"]
    sync = sample_bodies("sync_tool")
    for body in sync:
        post_request(key, "sync", body)
    shaped = json.loads(alice_client.get("/p/clinic/calls/sync/turns/4/fixture.json?rendering=async").content)
    messages = shaped["request"]["messages"]
    developer = [m for m in messages if m["role"] == "developer"]
    assert developer and all(json.loads(m["content"])["status"] == "finished" for m in developer)
    inner = json.loads(developer[0]["content"])["result"]
    assert isinstance(inner, str) and "\\u0c36" in inner  # JSON in a JSON string, escaped


def test_async_rendering_is_refused_for_other_formats(alice_client, key, post_request):
    post_request(key, "anth", {"model": "claude-sonnet-4", "system": "x", "messages": [{"role": "user", "content": "hi"}]})
    assert alice_client.get("/p/clinic/calls/anth/turns/1/fixture.json?rendering=async").status_code == 400
    assert alice_client.get("/p/clinic/calls/anth/turns/1/fixture.json?rendering=readable").status_code == 200


def test_a_whole_call_exports_as_one_streamed_fixture(alice_client, fip):
    response = alice_client.get("/p/clinic/calls/fip/fixture.json?rendering=readable")
    document = json.loads(b"".join(response))
    assert [t["turn"] for t in document["turns"]] == [1, 2, 3, 4, 5]
    assert document["turns"][2]["request"]["messages"] == fixtures.render(json.loads(fip[2]), "openai.chat", "readable")["messages"]


def test_replay_snippets_hold_no_secret_and_read_the_exact_body(alice_client, fip):
    page = html.unescape(alice_client.get("/p/clinic/calls/fip/turns/2/?tab=export").content.decode())
    assert "--data-binary @callscope-clinic-turn-2.json" in page
    assert "$OPENAI_API_KEY" in page and "os.environ['OPENAI_API_KEY']" in page
    assert "Bearer cs_" not in page and "sk-" not in page


# --- the messages tab ---------------------------------------------------------------------


def test_the_messages_tab_marks_escapes_and_invisible_characters(alice_client, key, post_request):
    for body in sample_bodies("async_tool_user_speaks"):
        post_request(key, "async", body)
    page = alice_client.get("/p/clinic/calls/async/turns/3/").content.decode()
    page = page.split('<ol class="messages full">')[1]  # past the legend
    assert "spelling &#x27;శుక్రవారం&#x27;" in page  # spelt as escapes, marked as one run
    assert "9 \\u escapes of non-Latin text" in page
    assert "JSON: decode 2 layers" in page
    hostile = "<b>bold</b>\u200b\u00a0 \\u0c36\r"
    post_request(key, "evil", {"messages": [{"role": "user", "content": hostile}]})
    evil = alice_client.get("/p/clinic/calls/evil/turns/1/").content.decode().split('<ol class="messages full">')[1]
    assert "<b>bold" not in evil and "&lt;b&gt;bold&lt;/b&gt;" in evil
    assert 'data-mark="ZWSP"' in evil and 'data-mark="NBSP"' in evil and 'data-mark="CR"' in evil


def test_a_long_call_turn_page_renders_every_tab(alice_client, key, post_request):
    from calls.synthetic import synthetic_call

    for body in synthetic_call(300, seed=3):
        post_request(key, "long", body)
    for tab in ("messages", "raw", "diff", "model", "export"):
        assert alice_client.get(f"/p/clinic/calls/long/turns/300/?tab={tab}").status_code == 200


def test_a_joiner_inside_an_indic_word_is_spelling_not_a_stray_character():
    word = "అపాయింట్\u200cమెంట్"
    view = strings.inspect(word)
    assert view.invisibles == 0 and [s.kind for s in view.segments if s.kind != strings.TEXT] == [strings.JOINER]
    assert strings.inspect("a\u200cb").invisibles == 1  # between Latin letters it is a stray


def test_a_result_and_its_call_link_to_each_other_on_the_turn_page(alice_client, fip):
    page = alice_client.get("/p/clinic/calls/fip/turns/3/").content.decode()
    assert 'href="#m2" class="mono" title="Go to the call, message 2"' in page
    assert 'href="#m3" title="Go to the result, message 3"' in page


def test_the_marked_string_is_still_the_exact_string(alice_client, key, post_request):
    """Markers are CSS only: the text inside the <pre> is the content, character for character."""
    content = "<i>x</i> \\u0c36\\u0c41 \u200b\u00a0tab\there  \r\nశుక్రవారం"
    post_request(key, "exact", {"messages": [{"role": "user", "content": content}]})
    page = alice_client.get("/p/clinic/calls/exact/turns/1/").content.decode()
    shown = re.search(r'<li id="m0".*?<pre class="str">(.*?)</pre>', page, re.S).group(1)
    assert html.unescape(re.sub(r"<[^>]+>", "", shown)) == content


def test_each_tool_call_has_a_permalink_and_its_lifecycle_beside_it(alice_client, fip):
    from calls.models import ToolCall

    row = ToolCall.objects.filter(state="result").order_by("pk").first()
    call_page = alice_client.get("/p/clinic/calls/fip/").content.decode()
    assert f'/p/clinic/calls/fip/turns/{row.issued_turn}/#tc-{row.pk}' in call_page
    turn_page = alice_client.get(f"/p/clinic/calls/fip/turns/{row.issued_turn + 1}/").content.decode()
    pair = re.search(rf'<div class="pair" id="tc-{row.pk}">.*?</ol>', turn_page, re.S).group(0)
    assert "pending" in pair and "result" in pair and 'class="step slot-result here"' in pair


def test_anthropic_and_gemini_strings_are_shown_and_marked_too(alice_client, key, post_request):
    anthropic = {"model": "claude-sonnet-4", "system": "x", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "శుక్రవారం\u200b?"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "check", "input": {"day": "Fri"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"day": "\\u0c36"}'}]},
    ]}
    post_request(key, "anth", anthropic)
    page = alice_client.get("/p/clinic/calls/anth/turns/1/").content.decode()
    messages = page.split('<ol class="messages full">')[1]  # past the legend
    assert 'data-mark="ZWSP"' in messages and 'class="mk mk-escape"' in messages
    assert "The user item as sent" in page  # the exact item is one click away
    gemini = {"contents": [{"role": "user", "parts": [{"text": "hello\u00a0there"}]}]}
    post_request(key, "gem", gemini)
    gem_page = alice_client.get("/p/clinic/calls/gem/turns/1/").content.decode()
    assert 'data-mark="NBSP"' in gem_page.split('<ol class="messages full">')[1]


# --- hostile but valid input never breaks the drill-down ------------------------------------


def test_lone_surrogates_show_escaped_on_every_tab(alice_client, key, post_request):
    body = b'{"messages": [{"role": "user", "content": "half an emoji: \\ud83d!"}]}'
    post_request(key, "sur", body)
    for tab in ("messages", "raw", "diff", "model", "export"):
        answer = alice_client.get(f"/p/clinic/calls/sur/turns/1/?tab={tab}")
        assert answer.status_code == 200, tab
    shown = re.sub(r"<[^>]+>", "", alice_client.get("/p/clinic/calls/sur/turns/1/").content.decode())
    assert "half an emoji: \\ud83d!" in shown
    for url in ("/p/clinic/calls/sur/turns/1/fixture.json?rendering=readable", "/p/clinic/calls/sur/fixture.json"):
        answer = alice_client.get(url)
        content = b"".join(answer) if answer.streaming else answer.content
        assert json.loads(content)  # valid JSON, surrogate escaped


def test_odd_parameters_and_fixtures_are_refused_not_crashed(alice_client, key, post_request):
    post_request(key, "c", {"messages": [{"role": "tool", "tool_call_id": ["x"], "content": "IN_PROGRESS"}]})
    assert alice_client.get("/p/clinic/calls/c/turns/1/?tab=diff&against=²").status_code == 200
    assert alice_client.get("/p/clinic/calls/c/turns/1/?tab=diff&against=" + "9" * 5000).status_code == 200
    assert alice_client.get("/p/clinic/calls/c/turns/1/fixture.json?rendering=readable").status_code == 200
    bad = alice_client.post("/p/clinic/calls/c/turns/1/diff", {"fixture": '{"callscope_fixture": 1, "turns": 5}'})
    assert bad.status_code == 400
    deep = {"messages": [{"role": "user", "content": "x", "meta": json.loads("[" * 900 + "]" * 900)}]}
    post_request(key, "deep", json.dumps(deep).encode())
    assert alice_client.get("/p/clinic/calls/deep/turns/1/fixture.json?rendering=readable").status_code in (200, 400)


def test_a_long_edit_diffs_quickly_line_by_line():
    old = {"role": "user", "content": [{"type": "text", "text": f"part {n}"} for n in range(300)]}
    new = {"role": "user", "content": [{"type": "text", "text": f"part {n}!"} for n in range(300)]}
    lines = diffs.line_diff(old, new)  # ndiff took minutes on this
    assert sum(1 for tag, _l in lines if tag == "-") == 300 and sum(1 for tag, _l in lines if tag == "+") == 300
    huge = diffs.line_diff({"c": list(range(3000))}, {"c": list(range(3001))})
    assert huge[0][0] == "-" and huge[-1] == ("+", "}")  # past the cap: both sides whole


def test_a_long_run_of_spaces_is_marked_in_one_pass():
    text = " " * 50_000 + "x"
    assert strings.inspect(text).trailing == 0
    assert kinds("foo\t   \nbar") == [(strings.TRAILING, "\t   ")]


@pytest.mark.parametrize(
    "source, message",
    [
        ("{{ 1 // (messages|length - messages|length) }}", "ZeroDivisionError"),
        ("{{ range(10**6) }}", "Overflow"),
        ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "stopped"),
    ],
)
def test_an_uploaded_template_that_fails_or_loops_is_stopped(alice_client, project, key, post_request, monkeypatch, source, message):
    from calls import chattemplates
    from calls.models import ChatTemplate

    monkeypatch.setattr(chattemplates, "TIME_LIMIT_SECONDS", 1)
    template = ChatTemplate.objects.create(project=project, name="evil", source=source)
    post_request(key, "t", {"messages": [{"role": "user", "content": "hi"}]})
    page = alice_client.get(f"/p/clinic/calls/t/turns/1/?tab=model&template=project-{template.pk}")
    assert page.status_code == 200
    assert "TP401" in page.content.decode() and message in page.content.decode()
