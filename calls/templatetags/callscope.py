import orjson
from django import template
from django.utils.html import format_html, format_html_join

from calls import strings
from calls.storable import displayable
from calls.requestbody import canonical_json

register = template.Library()


@register.filter
def duration(seconds) -> str:
    """12.3 -> '12s', 135 -> '2m 15s', 3725 -> '1h 2m'."""
    seconds = int(seconds or 0)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {(seconds % 3600) // 60:02d}m"


@register.filter
def offset(seconds) -> str:
    """Seconds since the call started, as '+12.3s'."""
    return f"+{max(0.0, float(seconds or 0)):.1f}s"


@register.filter
def size(count) -> str:
    count = int(count or 0)
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KB"
    return f"{count / (1024 * 1024):.1f} MB"


@register.filter
def compact_json(value) -> str:
    """A JSON value as compact text, strings exactly as sent (never HTML: autoescaped later)."""
    return value if isinstance(value, str) else canonical_json(value)


@register.filter
def response_summary(body) -> str:
    """What a model response said: its text, or the tools it called."""
    if isinstance(body, str):
        try:
            body = orjson.loads(body)
        except orjson.JSONDecodeError:
            return body
    if not isinstance(body, dict):
        return canonical_json(body)
    choices = body.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message") or {}
        if isinstance(message, dict):
            if message.get("content"):
                return str(message["content"])
            calls = message.get("tool_calls") or []
            names = [
                c.get("function", {}).get("name", "?") for c in calls if isinstance(c, dict)
            ]
            if names:
                return "calls " + ", ".join(names)
        return f"(no text; finish_reason {choices[0].get('finish_reason')!s})"
    return canonical_json(body)


@register.filter
def severity_counts(findings) -> list[tuple[str, int]]:
    """[("error", 2), ("warning", 1)]: most severe first, zero counts left out."""
    counts = {}
    for finding in findings:
        counts[finding.severity] = counts.get(finding.severity, 0) + 1
    return [(s, counts[s]) for s in ("error", "warning", "info") if counts.get(s)]


# Characters of strings the turn page marks up in full; beyond this (a several-MB body)
# the rest are shown plain, so the page stays responsive.
INSPECT_BUDGET = 400_000


@register.inclusion_tag("calls/partials/string.html", takes_context=True)
def inspected(context, text):
    """A content or arguments string shown exactly, with what a person should notice
    in it marked (calls.strings). Plain when the page's budget is spent."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    text = displayable(text)
    budget = context.get("inspect_budget")
    if budget is None or budget["left"] < len(text):
        return {"plain": text, "over": budget is not None}
    budget["left"] -= len(text)
    view = strings.inspect(text)
    return {"view": view, "marked": _marked(view.segments)}


def _marked(segments) -> str:
    """The string as HTML, each marked segment in a span; every piece escaped by
    format_html (a template loop over a few hundred thousand segments is too slow)."""
    return format_html_join(
        "",
        "{}",
        (
            (s.text,)
            if s.kind == strings.TEXT
            else (format_html('<span class="mk mk-{}" title="{}" data-mark="{}">{}</span>', s.kind, s.label, s.label, s.text),)
            for s in segments
        ),
    )
