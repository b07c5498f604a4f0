"""Ingest keys: random secrets, stored as SHA-256 digests and looked up by prefix."""

import hashlib
import hmac
import secrets

from .models import IngestKey, Project

_PREFIX_BYTES = 6
_SECRET_BYTES = 24


def digest(key: str) -> str:
    # Keys carry 192 random bits, so a plain SHA-256 is as strong as a slow
    # hash here and keeps authentication cheap on every ingest.
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def create_key(project: Project, label: str = "") -> tuple[IngestKey, str]:
    """A new key for `project`: the row, and the secret (shown once, never stored)."""
    prefix = "cs_" + secrets.token_hex(_PREFIX_BYTES)
    secret = f"{prefix}_{secrets.token_urlsafe(_SECRET_BYTES)}"
    key = IngestKey.objects.create(project=project, prefix=prefix, digest=digest(secret), label=label)
    return key, secret


def authenticate(secret: str) -> IngestKey | None:
    """The key `secret` belongs to, revoked or not, or None."""
    prefix_length = len("cs_") + 2 * _PREFIX_BYTES
    prefix, separator = secret[:prefix_length], secret[prefix_length : prefix_length + 1]
    if not prefix.startswith("cs_") or separator != "_":
        return None
    key = IngestKey.objects.select_related("project").filter(prefix=prefix).first()
    if key is None or not hmac.compare_digest(key.digest, digest(secret)):
        return None
    return key
