"""A project's own view of the rule catalogue: rules turned off, severities changed,
the provider it targets. Plain functions over the stored settings dict."""

from .rules import CATALOGUE, SEVERITY_ORDER, Finding

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


def clean(form) -> dict:
    """Settings from the posted form, keeping only known codes and values."""
    off = sorted(code for code in CATALOGUE if form.get(f"on-{code}") != "1")
    severity = {
        code: form[f"severity-{code}"]
        for code in CATALOGUE
        if form.get(f"severity-{code}") in SEVERITY_ORDER
        and form[f"severity-{code}"] != CATALOGUE[code].severity
    }
    target = form.get("target_provider", "")
    return {
        "off": off,
        "severity": severity,
        "target_provider": target if target in TARGET_PROVIDERS else "",
    }


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
