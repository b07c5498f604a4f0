"""What a team records about calls: their triage state and its story."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from calls.models import Call, Membership, Project


class Triage(models.Model):
    """A call's place in the team's queue. Created when the call is first flagged (by a
    finding at or above the project's threshold, or by hand) or first acted on."""

    class Status(models.TextChoices):
        NEW = "new", "new"
        INVESTIGATING = "investigating", "investigating"
        RESOLVED = "resolved", "resolved"
        WONT_FIX = "wontfix", "won't fix"

    class Reason(models.TextChoices):
        FRAMEWORK = "framework", "framework bug"
        PROMPT = "prompt", "prompt"
        TOOL = "tool", "tool backend"
        PROVIDER = "provider", "provider"
        EXPECTED = "expected", "expected behaviour"
        OTHER = "other", "other"

    call = models.OneToOneField(Call, on_delete=models.CASCADE, related_name="triage")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    flagged = models.BooleanField(default=False)
    flagged_by_hand = models.BooleanField(default=False)
    flagged_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status, default=Status.NEW)
    resolution = models.CharField(max_length=16, choices=Reason, blank=True)
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    worst = models.CharField(max_length=8, blank=True)  # worst finding severity
    rules = models.JSONField(default=list)  # codes of the findings, sorted
    last_activity_at = models.DateTimeField(default=timezone.now)
    revision = models.PositiveIntegerField(default=0)  # for live upserts: never roll back

    class Meta:
        indexes = [
            models.Index(fields=["project", "flagged", "-last_activity_at"], name="queue_by_activity")
        ]


class Activity(models.Model):
    """One change to a call's triage, with who and when: the call's audit trail."""

    call = models.ForeignKey(Call, on_delete=models.CASCADE, related_name="activities")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=32)  # status, assignee, flag, comment, ...
    text = models.TextField()  # what happened, in words (plain text, escaped when shown)
    data = models.JSONField(default=dict)  # before/after values
    created_at = models.DateTimeField(default=timezone.now)


class Comment(models.Model):
    """A comment on a call, or anchored to a turn, a message of a turn, or a tool call."""

    call = models.ForeignKey(Call, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    turn = models.PositiveIntegerField(null=True, blank=True)
    message_index = models.PositiveIntegerField(null=True, blank=True)
    tool_call_id = models.CharField(max_length=200, blank=True)
    body = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)
    edited_at = models.DateTimeField(null=True, blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    @property
    def anchor(self) -> str:
        if self.tool_call_id:
            return f"tool call {self.tool_call_id}"
        if self.message_index is not None:
            return f"turn {self.turn}, message {self.message_index}"
        if self.turn is not None:
            return f"turn {self.turn}"
        return "the call"


class Notification(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    call = models.ForeignKey(Call, on_delete=models.CASCADE, related_name="+")
    comment = models.ForeignKey(Comment, null=True, blank=True, on_delete=models.CASCADE)
    text = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["user", "read_at"], name="unread_by_user")]


class SavedView(models.Model):
    """A user's named queue filter (the query string of the queue page)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=100)
    query = models.CharField(max_length=1000)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "project", "name"], name="one_view_per_name")
        ]


class Invite(models.Model):
    """A link that makes whoever opens it (signed in, or signing up) a member."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    role = models.CharField(max_length=16, choices=Membership.Role, default=Membership.Role.MEMBER)
    digest = models.CharField(max_length=64, unique=True)  # SHA-256 of the token; the link holds it
    expires_at = models.DateTimeField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )


class Presence(models.Model):
    """An open call page: one row per websocket, so several workers agree on who is here."""

    call = models.ForeignKey(Call, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    channel_name = models.CharField(max_length=200, unique=True)
    seen_at = models.DateTimeField(default=timezone.now)


class Webhook(models.Model):
    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="webhook")
    url = models.URLField(max_length=500)
    secret = models.CharField(max_length=100)  # signs deliveries (HMAC-SHA256); the receiver has it too
    active = models.BooleanField(default=True)


class WebhookDelivery(models.Model):
    """One outgoing POST, retried with backoff by a background sender, never by ingest."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    event = models.CharField(max_length=32)  # call.flagged, rule.first_seen
    payload = models.TextField()  # the JSON body, exactly as signed
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    delivered_at = models.DateTimeField(null=True, blank=True)
    failed_at = models.DateTimeField(null=True, blank=True)  # gave up
    last_status = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["delivered_at", "failed_at", "next_attempt_at"], name="due_deliveries")]
