"""Live triage: the queue, a call's team panel, presence and notifications.

Fragments reuse the pages' partials (upserts by id and data-rev, as in calls.live)
and never depend on who is looking, except a user's own notification count,
which goes to that user's group only. Broadcasts run after commit; a failure is
logged by the caller's on_commit(robust=True), never raised into a request.
"""

import json

from asgiref.sync import async_to_sync
from channels.generic.websocket import WebsocketConsumer
from channels.layers import get_channel_layer
from django.template.loader import render_to_string
from django.utils import timezone

from calls import access
from calls.models import Call

from . import queries
from .models import Presence, Triage


def queue_group(project_id: int) -> str:
    return f"queue-{project_id}"


def team_group(call_id: int) -> str:
    return f"team-{call_id}"


def user_group(user_id: int) -> str:
    return f"user-{user_id}"


def _send(group: str, html: str) -> None:
    async_to_sync(get_channel_layer().group_send)(group, {"type": "live.fragment", "html": html})


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
        _send(queue_group(call.project_id), queue_row(triage))
    _send(team_group(call_id), team_panel(call))


def broadcast_presence(call_id: int) -> None:
    _send(team_group(call_id), presence_html(call_id))


def broadcast_unread(user_id: int) -> None:
    count = queries.unread_count(user_id)
    _send(user_group(user_id), render_to_string("triage/partials/unread.html", {"unread": count, "oob": True}))


class TeamConsumer(WebsocketConsumer):
    """A call page's team socket: triage panel, comments, activity, who is here."""

    groups_joined: list = []

    def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            self.close(code=4401)
            return
        self.call = access.call_by_pk_for(user, self.scope["url_route"]["kwargs"]["call_pk"])
        if self.call is None:
            self.close(code=4404)
            return
        self.groups_joined = [team_group(self.call.pk), user_group(user.pk)]
        for group in self.groups_joined:
            async_to_sync(self.channel_layer.group_add)(group, self.channel_name)
        self.accept()
        Presence.objects.create(call=self.call, user=user, channel_name=self.channel_name)
        broadcast_presence(self.call.pk)

    def disconnect(self, code):
        for group in self.groups_joined:
            async_to_sync(self.channel_layer.group_discard)(group, self.channel_name)
        if self.groups_joined:
            Presence.objects.filter(channel_name=self.channel_name).delete()
            broadcast_presence(self.call.pk)

    def receive(self, text_data=None, bytes_data=None):
        # Any message is a resync after a (re)connect: send the whole panel again.
        try:
            json.loads(text_data or "")
        except ValueError:
            return
        Presence.objects.filter(channel_name=self.channel_name).update(seen_at=timezone.now())
        self.send(text_data=team_panel(self.call) + presence_html(self.call.pk))

    def live_fragment(self, event):
        self.send(text_data=event["html"])


class QueueConsumer(WebsocketConsumer):
    """A project's queue page."""

    group = ""

    def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            self.close(code=4401)
            return
        project = access.project_for(user, self.scope["url_route"]["kwargs"]["slug"])
        if project is None:
            self.close(code=4404)
            return
        self.group = queue_group(project.pk)
        self.user_group = user_group(user.pk)
        for group in (self.group, self.user_group):
            async_to_sync(self.channel_layer.group_add)(group, self.channel_name)
        self.accept()

    def disconnect(self, code):
        if self.group:
            for group in (self.group, self.user_group):
                async_to_sync(self.channel_layer.group_discard)(group, self.channel_name)

    def receive(self, text_data=None, bytes_data=None):
        pass  # rows are upserts by revision; a reconnect misses at most a refresh

    def live_fragment(self, event):
        self.send(text_data=event["html"])
