"""Reading triage state for pages and fragments (no writes here)."""

from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.http import QueryDict
from django.utils import timezone

from calls.models import Call, Membership, Project
from calls.rules import SEVERITY_ORDER

from .models import Activity, Comment, Notification, Presence, Triage

QUEUE_PAGE = 100
RANGES = {"24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}


def triage_rows(project: Project) -> QuerySet[Triage]:
    return Triage.objects.filter(project=project).select_related("call", "call__project", "assignee")


def members(project: Project) -> list:
    return list(
        get_user_model()
        .objects.filter(membership__project=project)
        .order_by("username")
        .distinct()
    )


def can_triage(role: str | None) -> bool:
    return role in (Membership.Role.MEMBER, Membership.Role.ADMIN)


@dataclass
class QueueFilter:
    """The queue's filters, from and back to its query string (so a view can be shared)."""

    status: str = "open"  # open (new + investigating), all, or one status
    assignee: str = ""  # "", "mine", "unassigned" or a username
    rule: str = ""
    severity: str = ""  # this severity or worse
    agent: str = ""
    since: str = ""  # 24h, 7d, 30d
    text: str = ""  # in the call id

    FIELDS = ("status", "assignee", "rule", "severity", "agent", "since", "text")

    @classmethod
    def from_query(cls, query: QueryDict) -> "QueueFilter":
        values = {f: query.get(f, "").strip()[:200] for f in cls.FIELDS}
        if not values["status"]:
            values["status"] = "open"
        return cls(**values)

    def querystring(self) -> str:
        query = QueryDict(mutable=True)
        for name in self.FIELDS:
            value = getattr(self, name)
            if value and not (name == "status" and value == "open"):
                query[name] = value
        return query.urlencode()

    def apply(self, rows: QuerySet[Triage], user) -> QuerySet[Triage]:
        rows = rows.filter(flagged=True)
        if self.status == "open":
            rows = rows.filter(status__in=[Triage.Status.NEW, Triage.Status.INVESTIGATING])
        elif self.status in Triage.Status.values:
            rows = rows.filter(status=self.status)
        if self.assignee == "mine":
            rows = rows.filter(assignee=user)
        elif self.assignee == "unassigned":
            rows = rows.filter(assignee__isnull=True)
        elif self.assignee:
            rows = rows.filter(assignee__username=self.assignee)
        if self.rule:
            rows = rows.filter(call__findings__code=self.rule.upper()).distinct()
        if self.severity in SEVERITY_ORDER:
            worse = [s for s, order in SEVERITY_ORDER.items() if order <= SEVERITY_ORDER[self.severity]]
            rows = rows.filter(worst__in=worse)
        if self.agent:
            rows = rows.filter(call__agent=self.agent)
        if self.since in RANGES:
            rows = rows.filter(flagged_at__gte=timezone.now() - RANGES[self.since])
        if self.text:
            rows = rows.filter(call__external_id__icontains=self.text)
        return rows


def queue(project: Project, only: QueueFilter, user) -> list[Triage]:
    return list(only.apply(triage_rows(project), user).order_by("-last_activity_at", "-pk")[:QUEUE_PAGE])


def team_context(call: Call) -> dict:
    triage = Triage.objects.filter(call=call).select_related("assignee").first()
    return {
        "call": call,
        "triage": triage,
        "statuses": Triage.Status.choices,
        "reasons": Triage.Reason.choices,
        "members": members(call.project),
        "activities": list(
            Activity.objects.filter(call=call).select_related("actor").order_by("-created_at", "-pk")[:50]
        ),
        "comments": list(
            Comment.objects.filter(call=call).select_related("author").order_by("created_at", "pk")
        ),
    }


def present(call_id: int) -> list[dict]:
    """Who has this call open right now: one entry per user, with initials."""
    fresh = timezone.now() - timedelta(hours=6)  # rows a crashed worker left behind age out
    users = {}
    for presence in Presence.objects.filter(call_id=call_id, seen_at__gte=fresh).select_related("user"):
        users[presence.user_id] = presence.user
    return [{"name": u.get_username(), "initials": initials(u)} for u in sorted(users.values(), key=lambda u: u.get_username())]


def initials(user) -> str:
    full = (user.get_full_name() or user.get_username()).replace("_", " ").replace(".", " ").split()
    letters = "".join(word[0] for word in full[:2]).upper()
    return letters or "?"


def unread_count(user_id: int) -> int:
    return Notification.objects.filter(user_id=user_id, read_at__isnull=True).count()


def comments_of(call_id: int) -> dict:
    """The call's live comments by anchor: (turn, message_index, tool_call_id) -> [Comment]."""
    found: dict = {}
    for comment in Comment.objects.filter(call_id=call_id, deleted_at__isnull=True).select_related("author").order_by("created_at", "pk"):
        found.setdefault((comment.turn, comment.message_index, comment.tool_call_id), []).append(comment)
    return found
