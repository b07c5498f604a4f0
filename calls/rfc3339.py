from datetime import datetime


def parse(value: str) -> datetime | None:
    """An RFC 3339 timestamp with its offset, or None when it is not one."""
    if not isinstance(value, str) or not 10 < len(value) <= 64 or "T" not in value.upper():
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None
