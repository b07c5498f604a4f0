from datetime import UTC, datetime


def parse(value: str) -> datetime | None:
    """An RFC 3339 timestamp with its offset, in a range the databases hold, or None."""
    if not isinstance(value, str) or not 10 < len(value) <= 64 or "T" not in value.upper():
        return None
    try:
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            return None
        parsed = parsed.astimezone(UTC)  # OverflowError near year 1 or 9999
    except (ValueError, OverflowError):
        return None
    return parsed if 1970 <= parsed.year <= 9000 else None
