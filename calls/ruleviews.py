"""The rule pages: the catalogue, and one page per rule code (linked from every finding).

The catalogue is global, so these pages need a login but no project. Texts come from
`calls.rule_docs` and are rendered autoescaped, never marked safe.
"""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from . import access
from .rule_docs import DOCS
from .rules import CATALOGUE, ERROR, INFO, WARNING

FAMILIES = (
    ("TC", "Structure (providers reject)"),
    ("TR", "Results (the model misreads)"),
    ("TL", "Timeline across requests"),
    ("RS", "Responses"),
    ("TP", "Chat templates (open-weight servers)"),
)
OTHER_FAMILY = "Other rules"

# Existing colour classes of app.css, reused for the severity badge (no CSS of our own);
# `sev-<severity>` is the hook the finding badges use.
SEVERITY_CLASS = {
    ERROR: "slot-vanished sev-error",
    WARNING: "slot-pending sev-warning",
    INFO: "slot-issued sev-info",
}
SEVERITY_MEANING = {
    ERROR: "the provider rejects the request",
    WARNING: "accepted, but the model is likely to misread",
    INFO: "not harmful alone",
}


def _family_of(code: str) -> str:
    return dict(FAMILIES).get(code[:2].upper(), OTHER_FAMILY)


def _row(rule) -> dict:
    return {
        "rule": rule,
        "severity_class": SEVERITY_CLASS.get(rule.severity, ""),
        "severity_meaning": SEVERITY_MEANING.get(rule.severity, ""),
    }


def _inline(text: str) -> list[tuple[bool, str]]:
    """`code` spans of a doc text as (is_code, text) pieces, for the template to wrap."""
    pieces = text.split("`")
    if len(pieces) % 2 == 0:  # unbalanced backticks: show the text as it is
        return [(False, text)]
    return [(index % 2 == 1, piece) for index, piece in enumerate(pieces) if piece]


@login_required
@require_GET
def rule_list(request: HttpRequest) -> HttpResponse:
    groups: dict[str, list[dict]] = {title: [] for _prefix, title in FAMILIES}
    for rule in CATALOGUE.values():
        groups.setdefault(_family_of(rule.code), []).append(_row(rule))
    families = [
        {"title": title, "id": f"family-{index}", "rows": rows}
        for index, (title, rows) in enumerate(groups.items())
        if rows
    ]
    return render(
        request,
        "calls/rule_list.html",
        {
            "projects": access.projects_of(request.user),
            "families": families,
            "rule_count": len(CATALOGUE),
            "severities": [
                {"name": name, "class": SEVERITY_CLASS[name], "meaning": SEVERITY_MEANING[name]}
                for name in (ERROR, WARNING, INFO)
            ],
        },
    )


@login_required
@require_GET
def rule_detail(request: HttpRequest, code: str) -> HttpResponse:
    code = code.strip().upper()
    rule = CATALOGUE.get(code)
    if rule is None:
        raise Http404("No such rule.")
    codes = list(CATALOGUE)
    position = codes.index(code)
    doc = DOCS.get(code)
    return render(
        request,
        "calls/rule_detail.html",
        {
            "projects": access.projects_of(request.user),
            **_row(rule),
            "family": _family_of(code),
            "doc": doc,
            "why": _inline(doc.why) if doc else [],
            "fix": _inline(doc.fix) if doc else [],
            "previous": CATALOGUE[codes[position - 1]] if position > 0 else None,
            "next": CATALOGUE[codes[position + 1]] if position + 1 < len(codes) else None,
        },
    )
