"""Text from request bodies made safe for every database we run on.

JSON can carry lone surrogates ("\\ud800") and NUL ("\\u0000"); SQLite and
PostgreSQL text columns refuse the first, PostgreSQL the second. Values we
derive from a body (roles, models, tool ids, names, arguments) keep them as
visible escapes instead, so a hostile body gets stored, not a 500. The exact
original is always the raw body.
"""


def text(value: str, limit: int | None = None) -> str:
    if "\x00" in value:
        value = value.replace("\x00", "\\u0000")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value[:limit] if limit is not None else value


def displayable(value: str) -> str:
    """A string for a page: lone surrogates (valid in JSON, not encodable as UTF-8) as
    their \\uXXXX escapes; everything else exactly as it is."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "".join(c if not 0xD800 <= ord(c) <= 0xDFFF else f"\\u{ord(c):04x}" for c in value)
    return value
