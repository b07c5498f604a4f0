"""A project's own view of the rule catalogue: rules turned off, severities changed,
the provider it targets, the thresholds of the timeline rules, and its own
placeholder patterns. Plain functions over the stored settings dict."""

import re
from dataclasses import dataclass, field

from . import slots
from .rules import CATALOGUE, SEVERITY_ORDER, Finding
from .rules.timeline import NEVER_SETTLED_AFTER, PENDING_SECONDS, SIDE_EFFECT

# Providers for role rules; "" guesses from the request's model name.
TARGET_PROVIDERS = {
    "": "Guess from the model name",
    "openai": "OpenAI",
    "anthropic": "Anthropic",
    "gemini": "Google Gemini",
    "deepseek": "DeepSeek (no developer role)",
    "mistral": "Mistral (no developer role)",
    "llama": "Open-weight Llama / Qwen / Gemma server (no developer role)",
}

# (name, default, lowest, highest): the numbers a project may set.
THRESHOLDS = {
    "pending_seconds": (PENDING_SECONDS, 1, 3600),  # TL207: a placeholder pending longer than this
    "never_settled_after": (NEVER_SETTLED_AFTER, 1, 100),  # TL201: requests a placeholder may survive
}
FORM_FIELDS = ("flag_threshold", *THRESHOLDS, "side_effect_pattern", "placeholders")
MAX_PATTERNS = 20
MAX_PATTERN_LENGTH = 300


@dataclass(frozen=True)
class Policy:
    """What the rules need to know of a project, compiled once per request."""

    target: str = ""
    pending_seconds: int = THRESHOLDS["pending_seconds"][0]
    never_settled_after: int = THRESHOLDS["never_settled_after"][0]
    side_effect: re.Pattern = field(default_factory=lambda: re.compile(SIDE_EFFECT, re.I))
    placeholders: tuple[slots.Pattern, ...] = ()


DEFAULT = Policy()


def policy(settings: dict) -> Policy:
    """The stored settings as a Policy; anything unreadable falls back to the default
    (settings are validated on save, so that only happens after a hand edit)."""
    if not isinstance(settings, dict) or not settings:
        return DEFAULT
    thresholds = settings.get("thresholds")
    thresholds = thresholds if isinstance(thresholds, dict) else {}
    numbers = {name: _number(thresholds.get(name), *limits) for name, limits in THRESHOLDS.items()}
    side_effect = settings.get("side_effect_pattern")
    side_effect = (_compile(side_effect) if isinstance(side_effect, str) and side_effect else None)
    lines = settings.get("placeholders")
    patterns = tuple(
        p
        for p in (_pattern(line) for line in (lines if isinstance(lines, list) else ()))
        if p is not None
    )
    target = settings.get("target_provider")
    return Policy(
        target if target in TARGET_PROVIDERS else "",
        side_effect=side_effect or DEFAULT.side_effect,
        placeholders=patterns,
        **numbers,
    )


def clean(form) -> tuple[dict, dict]:
    """Settings from the posted form, keeping only known codes and values, and the
    errors by field name (settings are only saved when there are none)."""
    errors = {}
    off = sorted(code for code in CATALOGUE if form.get(f"on-{code}") != "1")
    severity = {
        code: form[f"severity-{code}"]
        for code in CATALOGUE
        if form.get(f"severity-{code}") in SEVERITY_ORDER
        and form[f"severity-{code}"] != CATALOGUE[code].severity
    }
    target = form.get("target_provider", "")
    thresholds = {}
    for name, (default, lowest, highest) in THRESHOLDS.items():
        value = form.get(name, "").strip()
        number = _number(value, default, lowest, highest, strict=True) if value else default
        if number is None:
            errors[name] = f"A whole number from {lowest} to {highest}."
        elif number != default:
            thresholds[name] = number
    side_effect = form.get("side_effect_pattern", "").strip()
    if side_effect == SIDE_EFFECT:
        side_effect = ""
    if len(side_effect) > MAX_PATTERN_LENGTH or (side_effect and _compile(side_effect) is None):
        errors["side_effect_pattern"] = (
            "Not a valid regular expression of at most 300 characters, or a repeated group "
            "that repeats inside, like (a+)+, which can take exponential time."
        )
    placeholders = [line.strip() for line in form.get("placeholders", "").splitlines() if line.strip()]
    if len(placeholders) > MAX_PATTERNS:
        errors["placeholders"] = f"At most {MAX_PATTERNS} patterns."
    for number, line in enumerate(placeholders, start=1):
        if _pattern(line) is None:
            errors["placeholders"] = (
                f"Line {number} is not `pending|terminal regex <expression>` or "
                "`pending|terminal field <path>=<value>` (and a regex may not repeat a group "
                "that repeats inside, like (a+)+)."
            )
            break
    flag_threshold = form.get("flag_threshold", "warning")
    settings = {
        "flag_threshold": flag_threshold if flag_threshold in SEVERITY_ORDER else "warning",
        "off": off,
        "severity": severity,
        "target_provider": target if target in TARGET_PROVIDERS else "",
        "thresholds": thresholds,
        "side_effect_pattern": side_effect,
        "placeholders": placeholders,
    }
    return settings, errors


def applied(settings: dict, finding: Finding) -> Finding | None:
    """The finding as this project wants it: None when its rule is off."""
    if finding.code in settings.get("off", ()):
        return None
    severity = settings.get("severity", {}).get(finding.code)
    if severity in SEVERITY_ORDER and severity != finding.severity:
        return Finding(
            finding.code, severity, finding.message, finding.message_index,
            finding.tool_call_id, finding.detail,
        )
    return finding


def rows(settings: dict) -> list[dict]:
    """The catalogue with this project's choices, for the settings page."""
    off = set(settings.get("off", ()))
    severities = settings.get("severity", {})
    return [
        {
            "rule": rule,
            "on": rule.code not in off,
            "severity": severities.get(rule.code, rule.severity),
        }
        for rule in CATALOGUE.values()
    ]


def form_values(settings: dict) -> dict:
    """The non-rule fields of the settings form, as the admin last saved them."""
    thresholds = settings.get("thresholds", {})
    return {
        "flag_threshold": settings.get("flag_threshold", "warning"),
        **{name: thresholds.get(name, limits[0]) for name, limits in THRESHOLDS.items()},
        "side_effect_pattern": settings.get("side_effect_pattern") or SIDE_EFFECT,
        "placeholders": "\n".join(settings.get("placeholders", ())),
    }


def _number(value, default: int, lowest: int, highest: int, strict: bool = False) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None if strict else default
    if lowest <= number <= highest:
        return number
    return None if strict else default


# A repeated group that itself repeats or alternates: (a+)+, (a|aa)*, (x{2,})+. Python's
# engine backtracks exponentially on such patterns, and they run at ingest on text
# callers and tools control, so they are refused when saved.
_NESTED_REPEAT = re.compile(
    r"\((?:[^()\\]|\\.)*(?:[+*|]|\{\d*,?\d*\})(?:[^()\\]|\\.)*\)\??\s*(?:[+*]|\{\d*,?\d*\})"
)


def _compile(expression: str) -> re.Pattern | None:
    if _NESTED_REPEAT.search(expression):
        return None
    try:
        return re.compile(expression, re.I)
    except (re.error, RecursionError, OverflowError):
        return None


def _pattern(line) -> slots.Pattern | None:
    """`pending regex ^Still working` or `terminal field status=cancelled`."""
    if not isinstance(line, str) or len(line) > MAX_PATTERN_LENGTH:
        return None
    words = line.strip().split(None, 2)
    if len(words) != 3 or words[0] not in (slots.PENDING, slots.TERMINAL):
        return None
    meaning, kind, rest = words
    if kind == "regex":
        regex = _compile(rest)
        return slots.Pattern(meaning, regex=regex) if regex is not None else None
    if kind == "field":
        path, equals, value = rest.partition("=")
        path = path.strip()
        if not equals or not path or any(not key for key in path.split(".")):
            return None
        return slots.Pattern(meaning, field=path, value=value.strip())
    return None
