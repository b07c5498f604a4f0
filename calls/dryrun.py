"""`POST /api/v1/check` for a sequence: the real ingest path, rolled back.

A sequence of requests (and the events between them) goes through exactly the
code that stores a live call, so an agent's CI sees every rule the dashboard
would show, timeline rules included, with its project's settings. Nothing
survives: the transaction is rolled back, and the live broadcasts registered
inside it are dropped with it.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone

from . import capture, events, rfc3339
from .models import Project
from .requestbody import BodyError, ParsedRequest, canonical_json_bytes, parse_request

MAX_STEPS = 200


@dataclass(frozen=True)
class Step:
    raw: bytes | None  # a request body, or None for events alone
    parsed: ParsedRequest | None
    events: list  # events.IncomingEvent, recorded after the request
    sent_at: datetime | None


class _RollBack(Exception):
    pass


def parse_steps(items: list, fmt: str | None) -> list[Step]:
    """Each item: a request body, or {"request": body?, "events": [...]?, "sent_at": ...?}."""
    if not items or len(items) > MAX_STEPS:
        raise BodyError("invalid_shape", f"Send between 1 and {MAX_STEPS} steps.")
    steps = []
    for index, item in enumerate(items):
        if isinstance(item, dict) and ("request" in item or "events" in item) and not _is_body(item):
            steps.append(_wrapped(index, item, fmt))
        else:
            raw = canonical_json_bytes(item)
            steps.append(Step(raw, _parse(index, raw, fmt), [], None))
    return steps


def _is_body(item: dict) -> bool:
    return any(key in item for key in ("messages", "contents", "input"))


def _parse(index: int, raw: bytes, fmt: str | None) -> ParsedRequest:
    try:
        return parse_request(raw, fmt)
    except BodyError as error:
        raise BodyError(error.code, f"Step [{index}]: {error.message}") from None


def _wrapped(index: int, item: dict, fmt: str | None) -> Step:
    raw = parsed = None
    if item.get("request") is not None:
        raw = canonical_json_bytes(item["request"])
        parsed = _parse(index, raw, fmt)
    sent_at = None
    if "sent_at" in item:
        sent_at = rfc3339.parse(item["sent_at"])
        if sent_at is None:
            raise BodyError("invalid_sent_at", f"Step [{index}]: `sent_at` must be an RFC 3339 timestamp.")
    incoming = []
    if item.get("events") is not None:
        try:
            incoming = events.parse_events(canonical_json_bytes(item["events"]), None)
        except BodyError as error:
            raise BodyError(error.code, f"Step [{index}]: {error.message}") from None
    return Step(raw, parsed, incoming, sent_at)


def check_sequence(project: Project, steps: list[Step]) -> list[dict]:
    """What each step would add to a live call of `project`: its format and findings."""
    answers = []
    external_id = f"check-{uuid.uuid4()}"
    start = timezone.now()
    try:
        with capture.write_transaction():
            for index, step in enumerate(steps):
                # Without times of their own, steps are a second apart, in order.
                at = step.sent_at or start + timedelta(seconds=index)
                found = []
                if step.parsed is not None:
                    found += capture.record_request(
                        project, external_id, step.raw, step.parsed,
                        content_type="application/json", received_at=at, sent_at=at,
                        agent="", idempotency_key=None,
                    ).findings
                if step.events:
                    found += events.record_events(project, external_id, step.events, at).findings
                answers.append(
                    {
                        "index": index,
                        "format": step.parsed.format if step.parsed else None,
                        "findings": [f.as_json() for f in found],
                    }
                )
            raise _RollBack
    except _RollBack:
        pass
    return answers
