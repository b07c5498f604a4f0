"""What Callscope stores.

A call is a sequence of model requests (turns). Each request re-sends the
whole history, so storing bodies naively grows with the square of the call's
length. Instead:

- every distinct message of a call is stored once (`Message`, keyed by the
  SHA-256 of its canonical JSON), and a turn records only the positions of its
  message list that differ from the previous turn (`Turn.changes`), with a
  full list every `CALLSCOPE_RAW_CHECKPOINT_EVERY` turns (`Turn.snapshot`);
- the exact raw bytes are zstd-compressed against the previous turn's body
  (see `calls.rawstore`), again with a whole copy at each checkpoint.

`CallTip` holds what the next ingest needs from the last one (the current
message list and the last body), so an ingest never walks the history.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from .rules import finding_json


class Project(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="projects"
    )
    # {"off": [codes], "severity": {code: severity}, "target_provider": name}; see
    # calls.projectrules. Admins edit it on the project's rule settings page.
    rule_settings = models.JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    class Role(models.TextChoices):
        VIEWER = "viewer"
        MEMBER = "member"
        ADMIN = "admin"

    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    role = models.CharField(max_length=16, choices=Role, default=Role.MEMBER)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="one_membership_per_user")
        ]


class IngestKey(models.Model):
    """An API key for agents. Only a SHA-256 digest of the secret is stored."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="ingest_keys")
    prefix = models.CharField(max_length=16, unique=True)  # shown in the UI, used for lookup
    digest = models.CharField(max_length=64)
    label = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    revoked_at = models.DateTimeField(null=True, blank=True)

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class Call(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="calls")
    external_id = models.CharField(max_length=200)  # the agent's own call id
    agent = models.CharField(max_length=100, blank=True)
    model = models.CharField(max_length=100, blank=True)
    started_at = models.DateTimeField()
    last_activity_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    turn_count = models.PositiveIntegerField(default=0)
    event_count = models.PositiveIntegerField(default=0)
    tool_call_count = models.PositiveIntegerField(default=0)
    pending_placeholders = models.PositiveIntegerField(default=0)
    findings_error = models.PositiveIntegerField(default=0)
    findings_warning = models.PositiveIntegerField(default=0)
    findings_info = models.PositiveIntegerField(default=0)
    # Bumped on every change; live fragments carry it so a browser never
    # replaces a newer row with an older one that arrived late.
    revision = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id"], name="one_call_per_id")
        ]
        indexes = [models.Index(fields=["project", "-started_at"], name="calls_newest_first")]

    def __str__(self) -> str:
        return self.external_id

    def is_live(self, now=None) -> bool:
        if self.ended_at is not None:
            return False
        now = now or timezone.now()
        idle = (now - self.last_activity_at).total_seconds()
        return idle < settings.CALLSCOPE_IDLE_TIMEOUT

    @property
    def status(self) -> str:
        return "live" if self.is_live() else "ended"

    @property
    def idle_deadline_ms(self) -> int | None:
        """When a live call will count as ended if nothing more arrives (epoch ms)."""
        if self.ended_at is not None:
            return None
        deadline = self.last_activity_at.timestamp() + settings.CALLSCOPE_IDLE_TIMEOUT
        return int(deadline * 1000)

    @property
    def duration_seconds(self) -> float:
        end = self.ended_at or self.last_activity_at
        return max(0.0, (end - self.started_at).total_seconds())

    def get_absolute_url(self) -> str:
        return reverse("call", args=[self.project.slug, self.external_id])

    @property
    def worst_severity(self) -> str:
        for severity in ("error", "warning", "info"):
            if getattr(self, f"findings_{severity}"):
                return severity
        return ""


class CallTip(models.Model):
    """The latest state of a call, kept so the next ingest costs what is new only."""

    call = models.OneToOneField(Call, on_delete=models.CASCADE, primary_key=True, related_name="tip")
    # [[message_id, digest], ...] of the latest turn, in request order.
    messages = models.JSONField(default=list)
    # The latest raw body, zstd-compressed on its own: the dictionary for the next delta.
    raw = models.BinaryField(default=b"")


class Message(models.Model):
    """One distinct message of a call, stored once however many turns re-send it."""

    call = models.ForeignKey(Call, on_delete=models.CASCADE, related_name="messages")
    digest = models.CharField(max_length=64)
    role = models.CharField(max_length=32, blank=True)  # the provider's own role string
    # The message object re-serialised compactly (key order and every string
    # value exactly as received). The byte-exact original is the turn's raw body.
    body = models.TextField()
    call_ids = models.JSONField(default=list)  # tool-call ids this message issues
    result_ids = models.JSONField(default=list)  # tool-call ids this message answers
    first_turn = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["call", "digest"], name="one_message_per_digest")
        ]


class Turn(models.Model):
    """One model request of a call."""

    call = models.ForeignKey(Call, on_delete=models.CASCADE, related_name="turns")
    number = models.PositiveIntegerField()  # 1-based, in order of receipt
    received_at = models.DateTimeField()
    sent_at = models.DateTimeField()
    format = models.CharField(max_length=32)
    model = models.CharField(max_length=100, blank=True)
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)
    body_sha256 = models.CharField(max_length=64)
    size = models.PositiveIntegerField()
    content_type = models.CharField(max_length=200)
    raw_codec = models.CharField(max_length=16)  # see calls.rawstore
    raw_blob = models.BinaryField()
    message_count = models.PositiveIntegerField()
    previous_message_count = models.PositiveIntegerField()
    # [[position, message_id, previous_message_id_or_null], ...]: the positions
    # whose message differs from the previous turn (appended or changed in place).
    changes = models.JSONField(default=list)
    # The whole message-id list, on checkpoint turns only.
    snapshot = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["call", "number"], name="one_turn_per_number"),
            models.UniqueConstraint(
                fields=["call", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="one_turn_per_idempotency_key",
            ),
        ]

    def get_absolute_url(self) -> str:
        return reverse("turn", args=[self.call.project.slug, self.call.external_id, self.number])


class ToolCall(models.Model):
    """A tool call id of a call, and how its slot changed from turn to turn."""

    class State(models.TextChoices):
        ISSUED = "issued"  # seen in an assistant message, no result in the request yet
        PENDING = "pending"  # the slot holds a "still running" placeholder
        SETTLED = "settled"  # the slot holds a terminal placeholder (CANCELLED, COMPLETED)
        RESULT = "result"  # the slot holds a real result
        # The result reached the model in another message (developer, user),
        # while the slot itself may still say "running".
        DELIVERED = "delivered"
        VANISHED = "vanished"  # the call's message is no longer in the history
        LOST = "lost"  # a real result the model had is carried by no message any more

    call = models.ForeignKey(Call, on_delete=models.CASCADE, related_name="tool_calls")
    tool_call_id = models.CharField(max_length=200)
    name = models.CharField(max_length=200, blank=True)
    arguments = models.TextField(blank=True)  # the raw arguments string, exactly
    issued_turn = models.PositiveIntegerField()
    state = models.CharField(max_length=16, choices=State, default=State.ISSUED)
    result_message = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # [{"turn": n, "state": ..., "message": id_or_null, "at": iso}, ...]; entries
    # learnt from events (response, tool.*) also name the "event" type.
    history = models.JSONField(default=list)
    # When a tool.finished event said the tool produced its result.
    finished_turn = models.PositiveIntegerField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["call", "tool_call_id"], name="one_row_per_tool_call")
        ]


class Event(models.Model):
    """Something the agent reported beside its requests (responses, tool and hold events)."""

    call = models.ForeignKey(Call, on_delete=models.CASCADE, related_name="events")
    type = models.CharField(max_length=32)
    at = models.DateTimeField()
    received_at = models.DateTimeField()
    # The turn it belongs to: explicit, or the latest at receipt (0: before the first).
    turn = models.PositiveIntegerField(default=0)
    tool_call_id = models.CharField(max_length=200, blank=True)
    # The event object as compact JSON text (not jsonb: PostgreSQL's jsonb
    # refuses NUL and lone surrogates, which are valid JSON).
    data = models.TextField()
    # "id:<event id>" or "header:<Idempotency-Key>#<index in the post>".
    idempotency_key = models.CharField(max_length=240, null=True, blank=True)

    @property
    def fields(self) -> dict:
        from .requestbody import loads

        return loads(self.data)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["call", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="one_event_per_idempotency_key",
            ),
        ]
        indexes = [models.Index(fields=["call", "turn"], name="events_by_turn")]


class Finding(models.Model):
    """A rule that fired, reported once per call at the turn where it first appeared."""

    call = models.ForeignKey(Call, on_delete=models.CASCADE, related_name="findings")
    turn = models.PositiveIntegerField()
    code = models.CharField(max_length=8)
    severity = models.CharField(max_length=8)
    message_index = models.IntegerField(null=True, blank=True)  # in the provider's own array
    tool_call_id = models.CharField(max_length=200, blank=True)
    text = models.TextField()
    detail = models.JSONField(default=dict)
    # Code, tool call and the concerned message's digest: the same problem in a
    # re-sent message is the same finding.
    key = models.CharField(max_length=300)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["call", "key"], name="one_finding_per_key")]
        indexes = [models.Index(fields=["call", "turn"], name="findings_by_turn")]

    def as_json(self) -> dict:
        json = finding_json(
            self.code, self.severity, self.text, self.message_index, self.tool_call_id, self.detail
        )
        return {**json, "turn": self.turn}


class ChatTemplate(models.Model):
    """A project's own chat template (and optionally its tokenizer), for the turn page's
    "what the model sees" view. Uploaded by admins; rendered in a sandbox."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="chat_templates")
    name = models.CharField(max_length=100)
    source = models.TextField()  # the Jinja template text
    special_tokens = models.JSONField(default=dict, blank=True)  # bos_token, eos_token, ...
    tokenizer_json = models.TextField(blank=True)  # a tokenizer.json, for real token counts
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="one_template_per_name")
        ]
