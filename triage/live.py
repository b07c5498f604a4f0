"""Live triage: the queue, a call's team panel, presence and notifications.

Fragments reuse the pages' partials (upserts by id and data-rev, as in calls.live)
and never depend on who is looking, except a user's own notification count,
which goes to that user's group only. Broadcasts run after commit; a failure is
logged by the caller's on_commit(robust=True), never raised into a request.
"""

from django.template.loader import render_to_string
from django.utils import timezone

from calls import access
from calls.live import LiveConsumer, send_fragment
from calls.models import Call

from . import queries
from .models import Presence, Triage


def queue_group(project_id: int) -> str:
    return f"queue-{project_id}"


def team_group(call_id: int) -> str:
    return f"team-{call_id}"


def user_group(user_id: int) -> str:
    return f"user-{user_id}"


def queue_row(triage: Triage) -> str:
    row = render_to_string("triage/partials/queue_row.html", {"t": triage})
    return f'<template hx-swap-oob="afterbegin:#queue-rows">{row}</template>'


def team_panel(call: Call) -> str:
    return render_to_string("triage/partials/team_panel.html", {**queries.team_context(call), "oob": True})


def presence_html(call_id: int) -> str:
    return render_to_string(
        "triage/partials/presence.html", {"present": queries.present(call_id), "oob": True, "call_id": call_id}
    )


def broadcast_triage(call_id: int) -> None:
    call = Call.objects.select_related("project").get(pk=call_id)
    triage = queries.triage_rows(call.project).filter(call=call).first()
    if triage is not None and triage.flagged:
        send_fragment(queue_group(call.project_id), queue_row(triage))
    send_fragment(team_group(call_id), team_panel(call))


def broadcast_presence(call_id: int) -> None:
    send_fragment(team_group(call_id), presence_html(call_id))


def broadcast_unread(user_id: int) -> None:
    count = queries.unread_count(user_id)
    send_fragment(user_group(user_id), render_to_string("triage/partials/unread.html", {"unread": count, "oob": True}))


class TeamConsumer(LiveConsumer):
    """A call page's team socket: triage panel, comments, activity, who is here."""

    def groups_for(self, user) -> list[str]:
        self.call = access.call_by_pk_for(user, self.scope["url_route"]["kwargs"]["call_pk"])
        return [team_group(self.call.pk), user_group(user.pk)] if self.call else []

    def joined(self, user) -> None:
        Presence.objects.create(call=self.call, user=user, channel_name=self.channel_name)
        broadcast_presence(self.call.pk)

    def left(self) -> None:
        Presence.objects.filter(channel_name=self.channel_name).delete()
        broadcast_presence(self.call.pk)

    def resync(self, request: dict) -> str:
        # After a (re)connect: the whole panel again, and this page is still here.
        Presence.objects.filter(channel_name=self.channel_name).update(seen_at=timezone.now())
        return team_panel(self.call) + presence_html(self.call.pk)


class QueueConsumer(LiveConsumer):
    """A project's queue page: rows are upserts by revision, so a reconnect needs no
    resync beyond what the next change brings."""

    def groups_for(self, user) -> list[str]:
        project = access.project_for(user, self.scope["url_route"]["kwargs"]["slug"])
        return [queue_group(project.pk), user_group(user.pk)] if project else []
