"""Team pages: the queue, a call's triage actions and comments, notifications,
members and invites, the webhook, rollups. Thin: role checks, then triage's functions.

Roles: a viewer reads; a member also triages and comments; an admin also manages
members, invites and the webhook. Anyone outside the project gets 404, as
everywhere; a member without the role gets 403.
"""

import hashlib
import secrets
from datetime import timedelta
from functools import wraps

from django.contrib import messages as flash
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from calls import access
from calls.models import Call, Membership, Project
from calls.rules import CATALOGUE

from . import comments, queries, rollups, workflow
from .models import Comment, Invite, Notification, SavedView, Triage, Webhook

class _BadRequest(Exception):
    """A form we refuse: answered 400 with its message, nothing changed."""


def answers_400(view):
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except (_BadRequest, workflow.Refused, comments.Refused) as exc:
            return render(
                request, "triage/refused.html",
                {"reason": str(exc), "projects": access.projects_of(request.user)}, status=400,
            )

    return wrapper


ROLE_RANK = {Membership.Role.VIEWER: 0, Membership.Role.MEMBER: 1, Membership.Role.ADMIN: 2}
INVITE_DAYS = 7


def _project(request, slug: str, need: str = Membership.Role.VIEWER) -> tuple[Project, str]:
    project = access.project_for(request.user, slug)
    if project is None:
        raise Http404("No such project.")
    role = access.role_in(request.user, project)
    if ROLE_RANK.get(role, -1) < ROLE_RANK[need]:
        raise PermissionDenied("Your role in this project does not allow this.")
    return project, role


def _call(project: Project, call_id: str) -> Call:
    call = access.call_in(project, call_id)
    if call is None:
        raise Http404("No such call.")
    call.project = project
    return call


def _back(request, fallback: str):
    if getattr(request, "htmx", False):
        return HttpResponse(status=204)  # the page updates over its socket
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure()):
        return redirect(target)
    return redirect(fallback)


def _names(project) -> set[str]:
    return {u.get_username() for u in queries.members(project)}


# --- the queue ----------------------------------------------------------------------------


@login_required
@require_GET
def queue(request: HttpRequest, slug: str) -> HttpResponse:
    project, role = _project(request, slug)
    only = queries.QueueFilter.from_query(request.GET)
    return render(
        request,
        "triage/queue.html",
        {
            "project": project,
            "projects": access.projects_of(request.user),
            "rows": queries.queue(project, only, request.user),
            "only": only,
            "query": only.querystring(),
            "statuses": Triage.Status.choices,
            "reasons": Triage.Reason.choices,
            "members": queries.members(project),
            "rules": CATALOGUE.values(),
            "agents": access.agents_of(project),
            "ranges": queries.RANGES,
            "saved": SavedView.objects.filter(user=request.user, project=project).order_by("name"),
            "can_triage": queries.can_triage(role),
        },
    )


@login_required
@require_POST
@answers_400
def bulk(request: HttpRequest, slug: str) -> HttpResponse:
    project, _role = _project(request, slug, Membership.Role.MEMBER)
    ids = [i for i in request.POST.getlist("call") if i.isdigit()]
    change = _change_from(request, project)
    calls = Call.objects.filter(project=project, pk__in=ids)
    if not ids or not calls:
        flash.error(request, "Select at least one call.")
    else:
        for call in calls:
            call.project = project
            workflow.apply(call, request.user, change)
        flash.success(request, f"Updated {len(calls)} call{'s' if len(calls) != 1 else ''}.")
    return _back(request, reverse("queue", args=[project.slug]))


def _change_from(request, project) -> workflow.Change:
    post = request.POST
    action = post.get("action", "")
    if action == "assign_me":
        change = workflow.Change(assignee=request.user.get_username())
    elif action == "assign":
        change = workflow.Change(assignee=post.get("assignee", ""))
    elif action == "status":
        change = workflow.Change(status=post.get("status", ""), resolution=post.get("resolution", "") or None)
    elif action in ("flag", "unflag"):
        change = workflow.Change(flag=action == "flag")
    else:
        raise _BadRequest("Unknown action.")
    try:
        workflow.validate(change, _names(project))
    except workflow.Refused as exc:
        raise _BadRequest(str(exc)) from None
    return change


@login_required
@require_POST
def save_view(request: HttpRequest, slug: str) -> HttpResponse:
    project, _role = _project(request, slug)
    name = request.POST.get("name", "").strip()[:100]
    query = request.POST.get("query", "")[:1000]
    if name:
        SavedView.objects.update_or_create(user=request.user, project=project, name=name, defaults={"query": query})
        flash.success(request, f"Saved the view {name!r}.")
    return redirect(reverse("queue", args=[project.slug]) + (f"?{query}" if query else ""))


@login_required
@require_POST
def delete_view(request: HttpRequest, slug: str, view_id: int) -> HttpResponse:
    project, _role = _project(request, slug)
    deleted, _kinds = SavedView.objects.filter(user=request.user, project=project, pk=view_id).delete()
    if not deleted:
        raise Http404("No such view of yours.")
    return redirect("queue", project.slug)


# --- one call ------------------------------------------------------------------------------


@login_required
@require_POST
@answers_400
def triage_call(request: HttpRequest, slug: str, call_id: str) -> HttpResponse:
    project, _role = _project(request, slug, Membership.Role.MEMBER)
    call = _call(project, call_id)
    workflow.apply(call, request.user, _change_from(request, project))
    return _back(request, call.get_absolute_url())


@login_required
@require_POST
@answers_400
def comment(request: HttpRequest, slug: str, call_id: str) -> HttpResponse:
    project, _role = _project(request, slug, Membership.Role.MEMBER)
    call = _call(project, call_id)
    anchor = _anchor(request, call)
    try:
        comments.create(call, request.user, request.POST.get("body", ""), _names(project), **anchor)
    except comments.Refused as exc:
        raise _BadRequest(str(exc)) from None
    return _back(request, call.get_absolute_url() + "#team")


def _anchor(request, call) -> dict:
    def number(name):
        value = request.POST.get(name, "")
        return int(value) if value.isdigit() else None

    turn, message_index = number("turn"), number("message_index")
    if turn is not None and not 1 <= turn <= call.turn_count:
        raise _BadRequest("No such turn in this call.")
    return {"turn": turn, "message_index": message_index if turn else None, "tool_call_id": request.POST.get("tool_call_id", "")[:200]}


def _own_comment(request, slug, comment_id) -> Comment:
    project, role = _project(request, slug, Membership.Role.MEMBER)
    found = Comment.objects.select_related("call", "call__project").filter(
        pk=comment_id, call__project=project, deleted_at__isnull=True
    ).first()
    if found is None:
        raise Http404("No such comment.")
    if found.author_id != request.user.pk and role != Membership.Role.ADMIN:
        raise PermissionDenied("Only its author (or an admin) can change a comment.")
    return found


@login_required
@require_POST
@answers_400
def edit_comment(request: HttpRequest, slug: str, comment_id: int) -> HttpResponse:
    found = _own_comment(request, slug, comment_id)
    if found.author_id != request.user.pk:
        raise PermissionDenied("Only its author can edit a comment.")
    try:
        comments.edit(found, request.user, request.POST.get("body", ""), _names(found.call.project))
    except comments.Refused as exc:
        raise _BadRequest(str(exc)) from None
    return _back(request, found.call.get_absolute_url() + "#team")


@login_required
@require_POST
def delete_comment(request: HttpRequest, slug: str, comment_id: int) -> HttpResponse:
    found = _own_comment(request, slug, comment_id)
    comments.delete(found, request.user)
    return _back(request, found.call.get_absolute_url() + "#team")


# --- notifications ----------------------------------------------------------------------------


@login_required
@require_GET
def inbox(request: HttpRequest) -> HttpResponse:
    mine = Notification.objects.filter(user=request.user, call__project__membership__user=request.user)
    return render(
        request,
        "triage/inbox.html",
        {
            "projects": access.projects_of(request.user),
            "notifications": mine.select_related("call", "call__project").order_by("-created_at")[:200],
        },
    )


@login_required
@require_POST
def read_all(request: HttpRequest) -> HttpResponse:
    Notification.objects.filter(user=request.user, read_at__isnull=True).update(read_at=timezone.now())
    from . import live

    transaction.on_commit(lambda: live.broadcast_unread(request.user.pk), robust=True)
    return redirect("inbox")


# --- members, invites, webhook ----------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
@answers_400
def members(request: HttpRequest, slug: str) -> HttpResponse:
    project, role = _project(request, slug)
    invite_url = None
    if request.method == "POST":
        _project(request, slug, Membership.Role.ADMIN)
        invite_url = _member_action(request, project)
        if invite_url is None:
            return redirect("members", project.slug)
    return render(
        request,
        "triage/members.html",
        {
            "project": project,
            "projects": access.projects_of(request.user),
            "memberships": Membership.objects.filter(project=project).select_related("user").order_by("user__username"),
            "roles": Membership.Role.choices,
            "is_admin": role == Membership.Role.ADMIN,
            "invite_url": invite_url,
            "invites": Invite.objects.filter(project=project, used_at__isnull=True, expires_at__gt=timezone.now()).order_by("-expires_at"),
            "webhook": Webhook.objects.filter(project=project).first(),
        },
    )


def _member_action(request, project) -> str | None:
    post, action = request.POST, request.POST.get("action", "")
    role = post.get("role", Membership.Role.MEMBER)
    if role not in Membership.Role.values:
        raise _BadRequest("Unknown role.")
    if action == "add":
        user = get_user_model().objects.filter(username=post.get("username", "").strip()).first()
        if user is None:
            flash.error(request, "No user of that name: send them an invite link instead.")
        else:
            Membership.objects.update_or_create(project=project, user=user, defaults={"role": role})
            flash.success(request, f"{user.get_username()} is now {role} of {project.name}.")
    elif action in ("role", "remove"):
        membership = Membership.objects.filter(project=project, pk=post.get("membership", "0") or 0).first()
        if membership is None:
            raise Http404("No such member.")
        admins = Membership.objects.filter(project=project, role=Membership.Role.ADMIN)
        if membership.role == Membership.Role.ADMIN and admins.count() == 1 and (action == "remove" or role != Membership.Role.ADMIN):
            flash.error(request, "A project keeps at least one admin.")
        elif action == "remove":
            membership.delete()
            flash.success(request, f"Removed {membership.user.get_username()}.")
        else:
            membership.role = role
            membership.save(update_fields=["role"])
            flash.success(request, f"{membership.user.get_username()} is now {role}.")
    elif action == "invite":
        token = secrets.token_urlsafe(24)
        Invite.objects.create(
            project=project, role=role, digest=_digest(token), created_by=request.user,
            expires_at=timezone.now() + timedelta(days=INVITE_DAYS),
        )
        return request.build_absolute_uri(reverse("invite", args=[token]))
    elif action == "webhook":
        _save_webhook(request, project)
    else:
        raise _BadRequest("Unknown action.")
    return None


def _save_webhook(request, project) -> None:
    url = request.POST.get("url", "").strip()
    if not url:
        Webhook.objects.filter(project=project).delete()
        flash.success(request, "Webhook removed.")
        return
    if not url.startswith(("https://", "http://")) or len(url) > 500:
        flash.error(request, "The webhook needs an http(s) address.")
        return
    hook, created = Webhook.objects.get_or_create(project=project, defaults={"url": url, "secret": secrets.token_hex(24)})
    hook.url, hook.active = url, request.POST.get("active", "1") == "1"
    hook.save()
    flash.success(request, "Webhook saved." + (" Its signing secret is shown below." if created else ""))


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@require_http_methods(["GET", "POST"])
def invite(request: HttpRequest, token: str) -> HttpResponse:
    """Anyone with the link joins: signed in, or by creating an account here."""
    found = Invite.objects.select_related("project").filter(digest=_digest(token)).first()
    if found is None or found.used_at is not None or found.expires_at <= timezone.now():
        return render(request, "triage/invite.html", {"expired": True}, status=410)
    form = UserCreationForm(request.POST or None) if not request.user.is_authenticated else None
    if request.method == "POST":
        if form is not None:
            if not form.is_valid():
                return render(request, "triage/invite.html", {"invite": found, "form": form}, status=400)
            user = form.save()
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        with transaction.atomic():
            claimed = Invite.objects.filter(pk=found.pk, used_at__isnull=True).update(used_at=timezone.now(), used_by=request.user)
            if not claimed:
                return render(request, "triage/invite.html", {"expired": True}, status=410)
            try:
                Membership.objects.get_or_create(project=found.project, user=request.user, defaults={"role": found.role})
            except IntegrityError:
                pass
        return redirect("calls", found.project.slug)
    return render(request, "triage/invite.html", {"invite": found, "form": form})


# --- rollups -------------------------------------------------------------------------------------


@login_required
@require_GET
def rollup_page(request: HttpRequest, slug: str) -> HttpResponse:
    project, _role = _project(request, slug)
    return render(
        request,
        "triage/rollups.html",
        {"project": project, "projects": access.projects_of(request.user), **rollups.rollups(project)},
    )
