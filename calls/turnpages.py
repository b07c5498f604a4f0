"""The turn drill-down: one request's exact body and what it means, in tabs, plus
fixture exports and the project's chat templates. Thin views over calls.drilldown."""


from asgiref.sync import sync_to_async

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from . import access, chattemplates, diffs, drilldown, fixtures, history
from .jsontext import loads, readable_dumps
from .models import ChatTemplate, Membership, Turn
from .requestbody import decode_json
from .rules import CATALOGUE
from .templatetags.callscope import INSPECT_BUDGET
from .turnview import attach_findings, message_list, turn_views
from .views import RAW_INLINE_LIMIT, _call, _project, _turn

TABS = (
    ("messages", "Messages"),
    ("raw", "Exact body"),
    ("diff", "Diff"),
    ("model", "What the model sees"),
    ("export", "Export"),
)
MAX_FIXTURE_BYTES = 32 * 1024 * 1024
MAX_UPLOAD_BYTES = 64 * 1024 * 1024  # tokenizer.json files run to tens of MB


def _base(request, slug, call_id, number):
    project = _project(request, slug)
    call = _call(project, call_id)
    turn = _turn(call, number)
    return project, call, turn


def _context(request, project, call, turn, tab, **extra) -> dict:
    return {
        "project": project,
        "projects": access.projects_of(request.user),
        "call": call,
        "turn": turn,
        "tab": tab,
        "tabs": TABS,
        "previous": turn.number - 1 if turn.number > 1 else None,
        "next": turn.number + 1 if turn.number < call.turn_count else None,
        **extra,
    }


@login_required
@require_GET
def turn_detail(request: HttpRequest, slug: str, call_id: str, number: int) -> HttpResponse:
    project, call, turn = _base(request, slug, call_id, number)
    tab = request.GET.get("tab", "messages")
    if tab not in dict(TABS):
        raise Http404("No such tab.")
    view = turn_views(call, [turn])[0]
    context = _context(request, project, call, turn, tab, view=view)
    if tab == "messages":
        all_messages = message_list(turn, call)
        attach_findings(all_messages, view.findings)
        context.update(
            messages_=all_messages,
            changed_positions={c[0] for c in turn.changes},
            inspect_budget={"left": INSPECT_BUDGET},
        )
    elif tab == "raw":
        raw = history.raw_body(turn)
        inline = len(raw) <= RAW_INLINE_LIMIT
        context.update(
            raw_text=raw.decode("utf-8") if inline else None,
            pretty=readable_dumps(decode_json(raw), indent=2) if inline else None,
            raw_limit=RAW_INLINE_LIMIT,
        )
    elif tab == "diff":
        context.update(_diff_context(request, project, call, turn))
    elif tab == "model":
        context.update(_model_context(request, project, turn))
    elif tab == "export":
        filename = drilldown.raw_filename(project, turn)
        context.update(
            renderings=[(key, label, key in fixtures.available(turn.format)) for key, label in fixtures.RENDERINGS.items()],
            filename=filename,
            curl=fixtures.curl_command(turn.format, turn.model, filename),
            python=fixtures.python_snippet(turn.format, turn.model, filename),
        )
    return render(request, "calls/turn_detail.html", context)


def _diff_context(request, project, call, turn) -> dict:
    against = request.GET.get("against", "")
    valid = against.isascii() and against.isdecimal() and len(against) < 10
    other_number = int(against) if valid else turn.number - 1
    show_all = request.GET.get("all") == "1"
    if other_number < 1 or other_number == turn.number:
        return {"other": None, "show_all": show_all, "turn_numbers": range(1, call.turn_count + 1)}
    other = Turn.objects.filter(call=call, number=other_number).defer("raw_blob").first()
    if other is None:
        raise Http404("No such turn to compare with.")
    rows = diffs.diff(drilldown.stored_sides(other, project), drilldown.stored_sides(turn, project))
    return {
        "other": other_number,
        "rows": rows if show_all else [r for r in rows if r.changed],
        "counts": diffs.counts(rows),
        "show_all": show_all,
        "turn_numbers": range(1, call.turn_count + 1),
    }


def _model_context(request, project, turn) -> dict:
    choices = drilldown.template_choices(project)
    key = request.GET.get("template", choices[0].key)
    choice = next((c for c in choices if c.key == key), None)
    if choice is None:
        raise Http404("No such template.")
    model = drilldown.model_view(history.raw_body(turn), turn.format, choice)
    return {"choices": choices, "model": model, "template_rule": CATALOGUE["TP401"]}


@login_required
@require_POST
def turn_diff_fixture(request: HttpRequest, slug: str, call_id: str, number: int) -> HttpResponse:
    """The turn against an eval fixture pasted or uploaded (read only: stores nothing)."""
    project, call, turn = _base(request, slug, call_id, number)
    upload = request.FILES.get("fixture_file")
    if upload is not None and upload.size > MAX_FIXTURE_BYTES:
        raw, error = b"", "The file is larger than 32 MB."
    else:
        raw = upload.read() if upload is not None else request.POST.get("fixture", "").encode("utf-8")
        error = "" if raw.strip() else "Paste a fixture or choose a file."
    context = _context(
        request, project, call, turn, "diff", view=turn_views(call, [turn])[0],
        turn_numbers=range(1, call.turn_count + 1), fixture_text=request.POST.get("fixture", ""),
    )
    if not error:
        try:
            parsed = drilldown.fixture_request(raw, turn.format, turn.number)
        except drilldown.FixtureError as exc:
            error = str(exc)
    if error:
        context["fixture_error"] = error
        return render(request, "calls/turn_detail.html", context, status=400)
    show_all = request.POST.get("all") == "1"
    rows = diffs.diff(drilldown.parsed_sides(parsed, project), drilldown.stored_sides(turn, project))
    context.update(
        against_fixture=True,
        rows=rows if show_all else [r for r in rows if r.changed],
        counts=diffs.counts(rows),
        show_all=show_all,
    )
    return render(request, "calls/turn_detail.html", context)


@login_required
@require_GET
def turn_fixture(request: HttpRequest, slug: str, call_id: str, number: int) -> HttpResponse:
    project, call, turn = _base(request, slug, call_id, number)
    rendering = request.GET.get("rendering", fixtures.CAPTURED)
    try:
        body = fixtures.render(decode_json(history.raw_body(turn)), turn.format, rendering)
    except fixtures.NotAvailable as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    document = fixtures.fixture(drilldown.fixture_meta(project, turn), rendering, body)
    response = HttpResponse(readable_dumps(document, indent=2), content_type="application/json")
    name = f"callscope-{project.slug}-{call.pk}-turn-{turn.number}-{rendering}.json"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@login_required
@require_GET
def call_fixture(request: HttpRequest, slug: str, call_id: str) -> HttpResponse:
    """Every turn of the call as one fixture, streamed: a long call never sits in memory."""
    project = _project(request, slug)
    call = _call(project, call_id)
    rendering = request.GET.get("rendering", fixtures.CAPTURED)
    if rendering not in fixtures.RENDERINGS:
        return HttpResponse("Unknown rendering.", status=400, content_type="text/plain; charset=utf-8")
    numbers = list(Turn.objects.filter(call=call).order_by("number").values_list("number", flat=True))

    head = {"callscope_fixture": fixtures.FIXTURE_VERSION, "project": project.slug, "call": call.external_id, "rendering": rendering}

    def entry(number: int) -> str:
        turn = Turn.objects.get(call=call, number=number)
        turn.call = call
        try:
            body = fixtures.render(loads(history.raw_body(turn)), turn.format, rendering)
        except fixtures.NotAvailable:
            body = None  # this turn's format has no such rendering
        return readable_dumps({"turn": number, "format": turn.format, "sent_at": turn.sent_at.isoformat(), "request": body})

    async def chunks():
        # An async iterator: under ASGI, Django would read a sync one whole into memory.
        yield readable_dumps(head)[:-1] + ', "turns": ['
        for position, number in enumerate(numbers):
            yield ("" if position == 0 else ", ") + await sync_to_async(entry)(number)
        yield "]}"

    response = StreamingHttpResponse(chunks(), content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="callscope-{project.slug}-{call.pk}-{rendering}.json"'
    return response


@login_required
@require_http_methods(["GET", "POST"])
def project_templates(request: HttpRequest, slug: str) -> HttpResponse:
    """Chat templates for "what the model sees": the shipped ones and the project's own."""
    project = _project(request, slug)
    can_manage = access.role_in(request.user, project) == Membership.Role.ADMIN
    errors, status = {}, 200
    if request.method == "POST":
        if not can_manage:
            raise Http404("No such page.")
        errors = _upload(request, project)
        if not errors:
            flash.success(request, "Template saved.")
            return redirect("project-templates", project.slug)
        status = 400
    return render(
        request,
        "calls/project_templates.html",
        {
            "project": project,
            "projects": access.projects_of(request.user),
            "shipped": chattemplates.SHIPPED.items(),
            "templates": ChatTemplate.objects.filter(project=project).order_by("name"),
            "can_manage": can_manage,
            "errors": errors,
            "form": request.POST if errors else {},
        },
        status=status,
    )


def _upload(request, project) -> dict:
    name = request.POST.get("name", "").strip()[:100]
    errors = {}
    if not name:
        errors["name"] = "Give the template a name."
    elif ChatTemplate.objects.filter(project=project, name=name).exists():
        errors["name"] = "This project already has a template of that name."
    source, special = request.POST.get("source", ""), {}
    file = request.FILES.get("template_file")
    if file is not None:
        if file.size > MAX_UPLOAD_BYTES:
            errors["template_file"] = "The file is larger than 64 MB."
            return errors
        text = file.read().decode("utf-8", "replace")
        if file.name.endswith(".json"):
            try:
                source, special = chattemplates.from_tokenizer_config(text)
            except ValueError as exc:
                errors["template_file"] = str(exc)
        else:
            source = text
    if not source.strip() and "template_file" not in errors:
        errors["source"] = "Paste a template or upload a .jinja file or a tokenizer_config.json."
    elif source.strip() and (problem := chattemplates.check_source(source)):
        errors["source"] = f"The template does not compile: {problem}"
    tokenizer_json = ""
    tokenizer = request.FILES.get("tokenizer_file")
    if tokenizer is not None:
        if tokenizer.size > MAX_UPLOAD_BYTES:
            errors["tokenizer_file"] = "The file is larger than 64 MB."
        else:
            tokenizer_json = tokenizer.read().decode("utf-8", "replace")
            if problem := chattemplates.check_tokenizer(tokenizer_json):
                errors["tokenizer_file"] = f"Not a tokenizer.json the tokenizers library reads: {problem}"
    if not errors:
        ChatTemplate.objects.create(
            project=project, name=name, source=source, special_tokens=special,
            tokenizer_json=tokenizer_json, created_by=request.user,
        )
    return errors


@login_required
@require_POST
def delete_template(request: HttpRequest, slug: str, template_id: int) -> HttpResponse:
    project = _project(request, slug)
    if access.role_in(request.user, project) != Membership.Role.ADMIN:
        raise Http404("No such page.")
    ChatTemplate.objects.filter(project=project, pk=template_id).delete()
    flash.success(request, "Template deleted.")
    return redirect("project-templates", project.slug)
