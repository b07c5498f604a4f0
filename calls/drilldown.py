"""The data behind the turn page's tabs: diffs, the rendered template, exports.

Plain functions over stored rows and decoded bodies; the views only pick
which to call. Bodies come back exactly from the raw store, so every view
here starts from the bytes the agent sent.
"""

from dataclasses import dataclass

from . import chattemplates, diffs, fixtures, history, slots, strings
from .jsontext import canonical_json_bytes, loads
from .models import ChatTemplate, Project, Turn
from .normalize import normalize
from .projectrules import policy
from .requestbody import BodyError, ParsedRequest, decode_json, parse_request, result_text


def stored_sides(turn: Turn, project: Project) -> list[diffs.Side]:
    """A stored turn's messages as diff sides."""
    placeholders = policy(project.rule_settings).placeholders
    return [
        _side(i, m.digest, m.role, loads(m.body), m.body, m.result_ids, placeholders)
        for i, m in enumerate(history.messages(turn))
    ]


def parsed_sides(parsed: ParsedRequest, project: Project) -> list[diffs.Side]:
    """A request that was never stored (a pasted fixture) as diff sides."""
    placeholders = policy(project.rule_settings).placeholders
    return [
        _side(i, m.digest, m.role, m.item, m.canonical, m.results, placeholders)
        for i, m in enumerate(parsed.messages)
    ]


def _side(index, digest, role, item, canonical: str, result_ids, placeholders) -> diffs.Side:
    results = tuple(i for i in result_ids if i)
    placeholder = any(
        slots.classify_result(result_text(canonical, i, result_ids), placeholders) for i in results
    )
    return diffs.Side(index, digest, role, item, results, placeholder)


class FixtureError(ValueError):
    pass


def fixture_request(raw: bytes, fmt: str, turn_number: int) -> ParsedRequest:
    """The request inside a pasted or uploaded fixture, in the turn's format."""
    try:
        document = decode_json(raw)
        body = fixtures.request_of(document, turn_number)
        return parse_request(canonical_json_bytes(body), fmt)
    except BodyError as error:
        raise FixtureError(error.message) from None
    except ValueError as error:
        raise FixtureError(str(error)) from None


@dataclass
class TemplateChoice:
    key: str  # "chatml" or "project-<pk>"
    label: str
    source: str
    special: dict
    has_tokenizer: bool = False


def template_choices(project: Project) -> list[TemplateChoice]:
    choices = [
        TemplateChoice(name, label, chattemplates.shipped_source(name), special)
        for name, (label, special) in chattemplates.SHIPPED.items()
    ]
    # tokenizer.json files run to tens of MB: only note whether one is there.
    for t in ChatTemplate.objects.filter(project=project).order_by("name").defer("tokenizer_json"):
        choices.append(TemplateChoice(f"project-{t.pk}", t.name, t.source, t.special_tokens))
    with_tokenizer = set(
        ChatTemplate.objects.filter(project=project).exclude(tokenizer_json="").values_list("pk", flat=True)
    )
    for choice in choices:
        choice.has_tokenizer = choice.key.startswith("project-") and int(choice.key[8:]) in with_tokenizer
    return choices


def tokenizer_of(choice: TemplateChoice) -> str:
    if not choice.has_tokenizer:
        return ""
    return ChatTemplate.objects.filter(pk=int(choice.key[8:])).values_list("tokenizer_json", flat=True).first() or ""


@dataclass
class ModelView:
    choice: TemplateChoice
    rendering: chattemplates.Rendering
    token_count: int
    exact_tokens: bool
    tokens: list  # [(id, piece)] when a tokenizer is known


def model_view(raw: bytes, fmt: str, choice: TemplateChoice) -> ModelView:
    body = decode_json(raw)
    request = normalize(fmt, body)
    # The project's own templates run in a child process with limits; shipped ones are ours.
    isolated = choice.key.startswith("project-")
    rendering = chattemplates.render(choice.source, request, choice.special, isolated=isolated)
    tokenizer_json = tokenizer_of(choice) if rendering.text else ""
    if tokenizer_json:
        count, pieces = chattemplates.tokens(tokenizer_json, rendering.text)
        return ModelView(choice, rendering, count, True, pieces)
    return ModelView(choice, rendering, strings.estimate_tokens(rendering.text), False, [])


def fixture_meta(project: Project, turn: Turn) -> dict:
    return {
        "project": project.slug,
        "call": turn.call.external_id,
        "turn": turn.number,
        "format": turn.format,
        "model": turn.model,
        "sent_at": turn.sent_at.isoformat(),
    }


def raw_filename(project: Project, turn: Turn) -> str:
    return f"callscope-{project.slug}-turn-{turn.number}.json"
