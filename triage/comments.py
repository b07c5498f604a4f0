"""Comments: written in a small markdown, rendered safely, @mentions notify.

Rendering escapes everything a person wrote; the only markup is what this
module builds around the escaped pieces with format_html: **bold**, *italic*,
`code`, [links](https://...) to http(s) addresses only, @mentions of members,
and line breaks.
"""

import re

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from calls.capture import write_transaction
from calls.models import Call

from . import live, workflow
from .models import Activity, Comment, Notification

MAX_LENGTH = 10_000
_TOKENS = re.compile(
    r"`(?P<code>[^`\n]+)`"
    r"|\*\*(?P<bold>[^*\n]+)\*\*"
    r"|\*(?P<italic>[^*\n]+)\*"
    r"|\[(?P<label>[^\]\n]+)\]\((?P<url>https?://[^\s)]+)\)"
    r"|(?<![\w@])@(?P<mention>[\w.+-]{1,150})"
    r"|(?P<newline>\n)"
)


class Refused(ValueError):
    pass


def render(body: str, member_names: set[str]) -> str:
    """The comment as HTML: every character the author typed escaped."""
    pieces = []
    at = 0
    for match in _TOKENS.finditer(body):
        if match.start() > at:
            pieces.append(format_html("{}", body[at : match.start()]))
        kind = match.lastgroup
        if kind == "code":
            pieces.append(format_html("<code>{}</code>", match["code"]))
        elif kind == "bold":
            pieces.append(format_html("<strong>{}</strong>", match["bold"]))
        elif kind == "italic":
            pieces.append(format_html("<em>{}</em>", match["italic"]))
        elif kind == "url":  # lastgroup of a link is its address
            pieces.append(
                format_html('<a href="{}" rel="noopener noreferrer nofollow" target="_blank">{}</a>', match["url"], match["label"])
            )
        elif kind == "mention":
            name = match["mention"].rstrip(".")
            trailing = match["mention"][len(name):]
            if name in member_names:
                pieces.append(format_html('<span class="mention">@{}</span>{}', name, trailing))
            else:
                pieces.append(format_html("@{}", match["mention"]))
        elif kind == "newline":
            pieces.append(format_html("<br{}>", ""))
        at = match.end()
    if at < len(body):
        pieces.append(format_html("{}", body[at:]))
    return format_html_join("", "{}", ((p,) for p in pieces))


def mentions(body: str, member_names: set[str]) -> set[str]:
    found = set()
    for match in _TOKENS.finditer(body):
        if match.lastgroup == "mention":
            name = match["mention"].rstrip(".")
            if name in member_names:
                found.add(name)
    return found


def _clean(body: str) -> str:
    body = body.replace("\r\n", "\n").strip()
    if not body:
        raise Refused("Write something first.")
    if len(body) > MAX_LENGTH:
        raise Refused(f"Comments are at most {MAX_LENGTH} characters.")
    return body


def create(call: Call, author, body: str, member_names: set[str], *, turn=None, message_index=None, tool_call_id="") -> Comment:
    body = _clean(body)
    with write_transaction():
        comment = Comment.objects.create(
            call=call, author=author, body=body, turn=turn, message_index=message_index,
            tool_call_id=tool_call_id[:200],
        )
        Activity.objects.create(
            call=call, actor=author, kind="comment", text=f"commented on {comment.anchor}",
            data={"comment": comment.pk},
        )
        notified = _notify(call, author, comment, mentions(body, member_names))
        workflow.touch(call)
        transaction.on_commit(lambda: _after(call.pk, notified), robust=True)
    return comment


def edit(comment: Comment, actor, body: str, member_names: set[str]) -> Comment:
    body = _clean(body)
    with write_transaction():
        before = comment.body
        comment.body, comment.edited_at = body, timezone.now()
        comment.save(update_fields=["body", "edited_at"])
        Activity.objects.create(
            call=comment.call, actor=actor, kind="comment.edit", text=f"edited a comment on {comment.anchor}",
            data={"comment": comment.pk, "before": before, "after": body},
        )
        new_names = mentions(body, member_names) - mentions(before, member_names)
        notified = _notify(comment.call, actor, comment, new_names)
        transaction.on_commit(lambda: _after(comment.call_id, notified), robust=True)
    return comment


def delete(comment: Comment, actor) -> None:
    with write_transaction():
        comment.deleted_at = timezone.now()
        comment.save(update_fields=["deleted_at"])
        Activity.objects.create(
            call=comment.call, actor=actor, kind="comment.delete", text=f"deleted a comment on {comment.anchor}",
            data={"comment": comment.pk, "before": comment.body},
        )
        transaction.on_commit(lambda: _after(comment.call_id, []), robust=True)


def _notify(call: Call, author, comment: Comment, names: set[str]) -> list[int]:
    users = get_user_model().objects.filter(username__in=names).exclude(pk=author.pk)
    Notification.objects.bulk_create(
        Notification(
            user=user, call=call, comment=comment,
            text=f"{author.get_username()} mentioned you on {call.external_id} ({comment.anchor})",
        )
        for user in users
    )
    return [u.pk for u in users]


def _after(call_id: int, notified: list[int]) -> None:
    live.broadcast_triage(call_id)
    for user_id in notified:
        live.broadcast_unread(user_id)
