"""Outgoing webhooks: signed JSON POSTs, retried with backoff, never on the ingest path.

Deliveries are rows. Ingest only inserts one (in its transaction); a sender thread
in each server process claims due rows and posts them, so a slow or dead endpoint
costs that thread, never an agent's request. Claiming is a conditional UPDATE, so
several workers never send the same attempt twice.
"""

import hashlib
import hmac
import json
import logging
import threading
import time
import urllib.error
import urllib.request
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from .models import Webhook, WebhookDelivery

logger = logging.getLogger(__name__)
MAX_ATTEMPTS = 8
TIMEOUT_SECONDS = 5
POLL_SECONDS = 2.0


def backoff(attempts: int) -> timedelta:
    """5 s, 10 s, 20 s ... capped at an hour."""
    return timedelta(seconds=min(5 * 2 ** max(0, attempts - 1), 3600))


def sign(secret: str, timestamp: str, body: bytes) -> str:
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def call_payload(call, triage, findings) -> dict:
    return {
        "project": call.project.slug,
        "call": call.external_id,
        "status": triage.status,
        "worst": triage.worst,
        "findings": [f.as_json() for f in findings],
    }


def enqueue(project, event: str, payload: dict) -> None:
    hook = Webhook.objects.filter(project=project, active=True).first()
    if hook is None:
        return
    body = json.dumps({"event": event, "at": timezone.now().isoformat(), **payload}, ensure_ascii=False)
    WebhookDelivery.objects.create(project=project, event=event, payload=body)
    ensure_sender()


def deliver_due(now=None) -> int:
    """Send every delivery that is due; returns how many were attempted."""
    now = now or timezone.now()
    attempted = 0
    due = WebhookDelivery.objects.filter(
        delivered_at__isnull=True, failed_at__isnull=True, next_attempt_at__lte=now
    ).order_by("next_attempt_at")[:20]
    for delivery in list(due):
        claimed = WebhookDelivery.objects.filter(
            pk=delivery.pk, next_attempt_at=delivery.next_attempt_at, delivered_at__isnull=True
        ).update(next_attempt_at=now + timedelta(minutes=5))  # ours while we try
        if not claimed:
            continue
        attempted += 1
        _attempt(delivery, now)
    return attempted


def _attempt(delivery: WebhookDelivery, now) -> None:
    hook = Webhook.objects.filter(project_id=delivery.project_id).first()
    attempts = delivery.attempts + 1
    status, error = None, ""
    if hook is None or not hook.active:
        error = "the project's webhook was removed or turned off"
    else:
        body = delivery.payload.encode()
        timestamp = str(int(time.time()))
        request = urllib.request.Request(
            hook.url,
            data=body,
            method="POST",
            headers={
                "Content-Type": "application/json",
                "User-Agent": "Callscope-Webhook/1",
                "X-Callscope-Event": delivery.event,
                "X-Callscope-Delivery": str(delivery.pk),
                "X-Callscope-Timestamp": timestamp,
                "X-Callscope-Signature": sign(hook.secret, timestamp, body),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
                status = response.status
        except urllib.error.HTTPError as exc:
            status, error = exc.code, f"HTTP {exc.code}"
        except (urllib.error.URLError, OSError, ValueError) as exc:
            error = str(getattr(exc, "reason", exc))[:500]
    fields = {"attempts": attempts, "last_status": status, "last_error": error}
    if status is not None and 200 <= status < 300:
        fields["delivered_at"] = timezone.now()
    elif attempts >= MAX_ATTEMPTS or hook is None or not hook.active:
        fields["failed_at"] = timezone.now()
    else:
        fields["next_attempt_at"] = now + backoff(attempts)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(**fields)


_sender_lock = threading.Lock()
_sender: threading.Thread | None = None


def ensure_sender() -> None:
    """Start this process's sender thread once (it idles cheaply when nothing is due)."""
    global _sender
    if not settings.CALLSCOPE_WEBHOOK_SENDER:
        return
    with _sender_lock:
        if _sender is not None and _sender.is_alive():
            return
        _sender = threading.Thread(target=_run, name="callscope-webhooks", daemon=True)
        _sender.start()


def _run() -> None:
    while True:
        time.sleep(POLL_SECONDS)
        try:
            close_old_connections()
            deliver_due()
        except Exception:  # the sender must outlive a bad moment of the database
            logger.exception("webhook sender failed; trying again")
        finally:
            close_old_connections()
