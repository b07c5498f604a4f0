"""Flagging a call from its findings, inside the ingest transaction.

A call enters the queue the first time it shows a finding at or above the
project's threshold (warning by default). An error, or a rule the project has
never seen fire, also queues a webhook delivery: a row written here and sent by
a background sender after commit, so a dead endpoint never slows ingest.
"""

import logging

from django.db import transaction
from django.utils import timezone

from calls.models import Call, Finding
from calls.rules import SEVERITY_ORDER

from . import live, webhooks
from .models import Activity, Triage

logger = logging.getLogger(__name__)
THRESHOLDS = ("error", "warning", "info")


def threshold(project) -> str:
    value = project.rule_settings.get("flag_threshold") if isinstance(project.rule_settings, dict) else None
    return value if value in THRESHOLDS else "warning"


def worst(severities) -> str:
    return min(severities, key=SEVERITY_ORDER.get, default="")


def on_findings(sender, call: Call, findings: list, **kwargs) -> None:
    """Receiver of calls.signals.findings_recorded. Its own savepoint: a failure here
    is logged and rolled back alone; the agent's request stays stored."""
    try:
        with transaction.atomic():
            _flag(call, findings)
    except Exception:
        logger.exception("flagging failed for call %s", call.pk)


def _flag(call: Call, findings: list) -> None:
    project = call.project
    limit = SEVERITY_ORDER[threshold(project)]
    serious = [f for f in findings if SEVERITY_ORDER.get(f.severity, 9) <= limit]
    triage = Triage.objects.select_for_update().filter(call=call).first()
    if triage is None and not serious:
        return
    now = timezone.now()
    if triage is None:
        triage = Triage(call=call, project=project)
    newly = bool(serious) and not triage.flagged
    codes = sorted(set(triage.rules) | {f.code for f in findings})
    triage.rules = codes
    triage.worst = worst([s for s in (triage.worst, *(f.severity for f in findings)) if s])
    triage.last_activity_at = now
    triage.revision += 1
    if newly:
        triage.flagged, triage.flagged_at = True, now
        if triage.status in (Triage.Status.RESOLVED, Triage.Status.WONT_FIX):
            triage.status, triage.resolved_at = Triage.Status.NEW, None  # it broke again
    triage.save()
    if newly:
        first = min(serious, key=lambda f: SEVERITY_ORDER[f.severity])
        Activity.objects.create(
            call=call, kind="flag", text=f"Flagged by {first.code} ({first.severity}) at turn {first.turn}",
            data={"by": "rules", "code": first.code},
        )
    if newly and any(f.severity == "error" for f in findings):
        webhooks.enqueue(project, "call.flagged", webhooks.call_payload(call, triage, findings))
    for code in sorted({f.code for f in findings}):
        earlier = Finding.objects.filter(call__project=project, code=code).exclude(
            pk__in=[f.pk for f in findings]
        )
        if not earlier.exists():
            webhooks.enqueue(project, "rule.first_seen", webhooks.call_payload(call, triage, [f for f in findings if f.code == code]))
    transaction.on_commit(lambda: live.broadcast_triage(call.pk), robust=True)
