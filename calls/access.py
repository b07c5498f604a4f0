"""Who may see what. Every page, API read and socket goes through here.

A user sees a project only as a member; anything else answers as if it did
not exist (404), so ids of other teams' calls leak nothing.
"""

from django.db.models import Q, QuerySet

from .models import Call, Membership, Project

CALLS_PER_PAGE = 50


def projects_of(user) -> QuerySet[Project]:
    if not user.is_authenticated:
        return Project.objects.none()
    return Project.objects.filter(membership__user=user).order_by("name", "slug")


def project_for(user, slug: str) -> Project | None:
    return projects_of(user).filter(slug=slug).first()


def role_in(user, project: Project) -> str | None:
    return (
        Membership.objects.filter(user=user, project=project).values_list("role", flat=True).first()
    )


def call_in(project: Project, external_id: str) -> Call | None:
    return Call.objects.filter(project=project, external_id=external_id).first()


def call_by_pk_for(user, pk) -> Call | None:
    try:
        pk = int(pk)
    except (TypeError, ValueError):
        return None
    return (
        Call.objects.select_related("project")
        .filter(pk=pk, project__membership__user=user)
        .first()
        if user.is_authenticated
        else None
    )


def newest_calls(project: Project, before: tuple | None = None, only=None) -> list[Call]:
    """A page of calls, newest first; `before` is the (started_at, pk) of the last one
    shown, `only` a CallFilter."""
    calls = Call.objects.filter(project=project).select_related("project")
    if only is not None:
        calls = only.apply(calls)
    if before is not None:
        started_at, pk = before
        calls = calls.filter(Q(started_at__lt=started_at) | Q(started_at=started_at, pk__lt=pk))
    return list(calls.order_by("-started_at", "-pk")[:CALLS_PER_PAGE])



def agents_of(project: Project) -> list[str]:
    return sorted(
        a for a in Call.objects.filter(project=project).values_list("agent", flat=True).distinct() if a
    )
