"""Pages for people. Thin: access checks, a query or two, a template."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from . import access, history, keys, projectrules, rfc3339
from .callfilters import SEVERITIES, STATUSES, CallFilter
from .callpicture import picture
from .models import Call, Event, IngestKey, Membership, Turn
from .rules import CATALOGUE
from .turnview import tool_call_rows, turn_views

RAW_INLINE_LIMIT = 1024 * 1024  # larger bodies are offered as a download only


def _project(request: HttpRequest, slug: str):
    project = access.project_for(request.user, slug)
    if project is None:
        raise Http404("No such project.")
    return project


def _call(project, call_id: str) -> Call:
    call = access.call_in(project, call_id)
    if call is None:
        raise Http404("No such call.")
    return call


def _turn(call: Call, number: int) -> Turn:
    turn = Turn.objects.filter(call=call, number=number).first()
    if turn is None:
        raise Http404("No such turn.")
    turn.call = call
    return turn


@login_required
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    project = access.projects_of(request.user).first()
    if project is None:
        return render(request, "calls/no_project.html")
    return redirect("calls", project.slug)


@login_required
@require_GET
def call_list(request: HttpRequest, slug: str) -> HttpResponse:
    project = _project(request, slug)
    before = rfc3339.parse(request.GET.get("before", ""))
    before_id = request.GET.get("id", "")
    cursor = (before, int(before_id)) if before and before_id.isdigit() else None
    only = CallFilter.from_query(request.GET)
    calls = access.newest_calls(project, before=cursor, only=only)
    older = None
    if len(calls) == access.CALLS_PER_PAGE:
        last = calls[-1]
        older = only.querystring(before=last.started_at.isoformat(), id=last.pk)
    return render(
        request,
        "calls/call_list.html",
        {
            "project": project,
            "projects": access.projects_of(request.user),
            "calls": calls,
            "paged": cursor is not None,
            "older": older,
            "only": only,
            "agents": access.agents_of(project),
            "rules": CATALOGUE.values(),
            "statuses": STATUSES,
            "severities": SEVERITIES,
            "ingest_url": request.build_absolute_uri("/api/v1/calls/"),
        },
    )


@login_required
@require_GET
def call_detail(request: HttpRequest, slug: str, call_id: str) -> HttpResponse:
    project = _project(request, slug)
    call = _call(project, call_id)
    per_page = settings.CALLSCOPE_TURNS_PER_PAGE
    turns = Turn.objects.filter(call=call).defer("raw_blob", "snapshot").order_by("-number")
    if (before := request.GET.get("before", "")).isdigit():
        turns = turns.filter(number__lt=int(before))
    page = list(turns[:per_page])[::-1]
    context = {
        "project": project,
        "call": call,
        "views": turn_views(call, page),
        "earlier": page[0].number if page and page[0].number > 1 else None,
        "early_events": Event.objects.filter(call=call, turn=0).order_by("pk"),
    }
    if request.htmx:  # "show earlier turns": just the sections, inserted above
        return render(request, "calls/partials/turn_page.html", context)
    context["tool_call_rows"] = tool_call_rows(call)
    context["picture"] = picture(call)
    context["projects"] = access.projects_of(request.user)
    return render(request, "calls/call_detail.html", context)


@login_required
@require_GET
def turn_raw(request: HttpRequest, slug: str, call_id: str, number: int) -> HttpResponse:
    project = _project(request, slug)
    turn = _turn(_call(project, call_id), number)
    response = HttpResponse(history.raw_body(turn), content_type=turn.content_type)
    if request.GET.get("download"):
        filename = f"callscope-{project.slug}-turn-{number}.json"
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
@require_GET
def project_keys(request: HttpRequest, slug: str) -> HttpResponse:
    project = _project(request, slug)
    return render(request, "calls/keys.html", _keys_context(request, project))


def _keys_context(request, project, **extra) -> dict:
    return {
        "project": project,
        "projects": access.projects_of(request.user),
        "keys": IngestKey.objects.filter(project=project).order_by("-created_at"),
        "can_manage": access.role_in(request.user, project) == Membership.Role.ADMIN,
        "ingest_url": request.build_absolute_uri("/api/v1/calls/"),
        **extra,
    }


def _require_admin(request, project) -> None:
    if access.role_in(request.user, project) != Membership.Role.ADMIN:
        raise Http404("No such page.")  # viewers and members learn nothing of keys


@never_cache  # the response shows a secret
@login_required
@require_POST
def create_key(request: HttpRequest, slug: str) -> HttpResponse:
    project = _project(request, slug)
    _require_admin(request, project)
    label = request.POST.get("label", "").strip()[:100]
    _key, secret = keys.create_key(project, label=label)
    # Shown once, in this response only; never stored or put in a URL.
    return render(request, "calls/keys.html", _keys_context(request, project, new_secret=secret))


@login_required
@require_POST
def revoke_key(request: HttpRequest, slug: str, key_id: int) -> HttpResponse:
    project = _project(request, slug)
    _require_admin(request, project)
    key = IngestKey.objects.filter(project=project, pk=key_id).first()
    if key is None:
        raise Http404("No such key.")
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
        messages.success(request, f"Key {key.prefix}… revoked.")
    return redirect("keys", project.slug)


@login_required
def project_rules(request: HttpRequest, slug: str) -> HttpResponse:
    """Which rules this project runs, at what severity, for which provider."""
    project = _project(request, slug)
    can_manage = access.role_in(request.user, project) == Membership.Role.ADMIN
    settings, errors = project.rule_settings, {}
    if request.method == "POST":
        if not can_manage:
            raise Http404("No such page.")
        settings, errors = projectrules.clean(request.POST)
        if not errors:
            project.rule_settings = settings
            project.save(update_fields=["rule_settings"])
            messages.success(request, "Rule settings saved; they apply to requests from now on.")
            return redirect("project-rules", project.slug)
    elif request.method != "GET":
        return HttpResponse(status=405)
    return render(
        request,
        "calls/project_rules.html",
        {
            "project": project,
            "projects": access.projects_of(request.user),
            "rows": projectrules.rows(settings),
            "targets": projectrules.TARGET_PROVIDERS.items(),
            "target": settings.get("target_provider", ""),
            # After a refused post, what the admin typed, to correct it.
            "values": {**projectrules.form_values(settings), **(
                {k: request.POST.get(k, "") for k in projectrules.FORM_FIELDS} if errors else {}
            )},
            "limits": projectrules.THRESHOLDS,
            "errors": errors,
            "severities": SEVERITIES,
            "can_manage": can_manage,
        },
        status=400 if errors else 200,
    )
