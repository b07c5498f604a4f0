"""Changing a call's triage: status, resolution, assignee, flag. One locked
transaction per call, so two people acting at once end in one state, each change
written to the activity log, and every screen told after commit."""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from calls.capture import write_transaction
from calls.models import Call

from . import live
from .flagging import THRESHOLDS, threshold
from .models import Activity, Triage


class Refused(ValueError):
    """A change that makes no sense (an unknown status, a non-member assignee)."""


@dataclass(frozen=True)
class Change:
    status: str | None = None
    resolution: str | None = None
    assignee: str | None = None  # a username, or "" to unassign
    flag: bool | None = None  # by hand: True flags, False unflags


def validate(change: Change, member_names: set[str]) -> None:
    if change.status is not None and change.status not in Triage.Status.values:
        raise Refused(f"Unknown status {change.status!r}.")
    if change.resolution not in (None, "") and change.resolution not in Triage.Reason.values:
        raise Refused(f"Unknown resolution reason {change.resolution!r}.")
    if change.assignee not in (None, "") and change.assignee not in member_names:
        raise Refused("Only a member of this project can be assigned.")
    if change.status in (Triage.Status.RESOLVED, Triage.Status.WONT_FIX) and not change.resolution:
        raise Refused("Say why: a resolution reason is required to resolve or close.")


def apply(call: Call, actor, change: Change) -> Triage:
    """Apply `change` to the call's triage (created if needed) and log what changed."""
    with write_transaction():
        # The call row is the lock every writer of this call takes (ingest too).
        Call.objects.select_for_update().filter(pk=call.pk).first()
        triage = Triage.objects.filter(call=call).first() or Triage(call=call, project=call.project)
        now = timezone.now()
        logged = []
        if change.flag is not None and change.flag != (triage.flagged and triage.flagged_by_hand):
            if change.flag:
                if not triage.flagged:
                    triage.flagged_at = now
                triage.flagged, triage.flagged_by_hand = True, True
                logged.append(("flag", "flagged by hand", {"flagged": True}))
            else:
                triage.flagged_by_hand = False
                triage.flagged = bool(triage.rules) and triage.worst in _flagging(call)
                logged.append(("flag", "removed the hand flag", {"flagged": triage.flagged}))
        if change.assignee is not None:
            user = get_user_model().objects.filter(username=change.assignee).first() if change.assignee else None
            if (user.pk if user else None) != triage.assignee_id:
                before = triage.assignee.get_username() if triage.assignee else ""
                triage.assignee = user
                logged.append((
                    "assignee",
                    f"assigned to {user.get_username()}" if user else "unassigned",
                    {"before": before, "after": change.assignee},
                ))
        if change.status is not None and change.status != triage.status:
            before = triage.status
            triage.status = change.status
            if change.status in (Triage.Status.RESOLVED, Triage.Status.WONT_FIX):
                triage.resolution, triage.resolved_at = change.resolution or "", now
                reason = Triage.Reason(triage.resolution).label if triage.resolution else ""
                text = f"{Triage.Status(change.status).label} ({reason})"
            else:
                triage.resolution, triage.resolved_at = "", None
                text = f"status {Triage.Status(change.status).label}"
            logged.append(("status", text, {"before": before, "after": change.status}))
        elif change.resolution and change.resolution != triage.resolution and triage.status in (
            Triage.Status.RESOLVED, Triage.Status.WONT_FIX,
        ):
            logged.append(("status", f"reason {Triage.Reason(change.resolution).label}", {"resolution": change.resolution}))
            triage.resolution = change.resolution
        if not logged and triage.pk:
            return triage
        triage.last_activity_at = now
        triage.revision += 1
        triage.save()
        Activity.objects.bulk_create(
            Activity(call=call, actor=actor, kind=kind, text=text, data=data, created_at=now)
            for kind, text, data in logged
        )
        transaction.on_commit(lambda: live.broadcast_triage(call.pk), robust=True)
    return triage


def touch(call: Call) -> None:
    """Note activity on the call (a comment) in the queue, creating nothing."""
    updated = Triage.objects.filter(call=call)
    for triage in updated:
        triage.last_activity_at = timezone.now()
        triage.revision += 1
        triage.save(update_fields=["last_activity_at", "revision"])


def _flagging(call: Call) -> tuple[str, ...]:
    return THRESHOLDS[: THRESHOLDS.index(threshold(call.project)) + 1]
