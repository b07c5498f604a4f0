"""Filters of the calls list: parsed once from the URL (so a view can be shared), then
applied to a query. Unknown values are ignored rather than refused: a stale link still
opens the list."""

from dataclasses import asdict, dataclass
from datetime import timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from .models import Finding
from .rules import CATALOGUE

STATUSES = ("live", "ended")
SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class CallFilter:
    status: str = ""
    severity: str = ""  # this severity or worse
    rule: str = ""
    agent: str = ""

    @classmethod
    def from_query(cls, params) -> "CallFilter":
        rule = params.get("rule", "").upper()
        return cls(
            status=params.get("status", "") if params.get("status") in STATUSES else "",
            severity=params.get("severity", "") if params.get("severity") in SEVERITIES else "",
            rule=rule if rule in CATALOGUE else "",
            agent=params.get("agent", "")[:100],
        )

    @property
    def active(self) -> bool:
        return any(asdict(self).values())

    def querystring(self, **extra) -> str:
        return urlencode({k: v for k, v in {**asdict(self), **extra}.items() if v})

    def apply(self, calls: QuerySet) -> QuerySet:
        if self.status:
            idle_since = timezone.now() - timedelta(seconds=settings.CALLSCOPE_IDLE_TIMEOUT)
            live = Q(ended_at__isnull=True, last_activity_at__gte=idle_since)
            calls = calls.filter(live) if self.status == "live" else calls.exclude(live)
        if self.severity:
            worse = SEVERITIES[: SEVERITIES.index(self.severity) + 1]
            condition = Q()
            for severity in worse:
                condition |= Q(**{f"findings_{severity}__gt": 0})
            calls = calls.filter(condition)
        if self.rule:
            calls = calls.filter(Exists(Finding.objects.filter(call=OuterRef("pk"), code=self.rule)))
        if self.agent:
            calls = calls.filter(agent=self.agent)
        return calls
