"""A project's triage over time: what was flagged, by rule and by status, and how
fast it was resolved. Charts are laid out here as plain shapes; the template
draws them as SVG (server-side, no script)."""

import statistics
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.utils import timezone

from calls.models import Finding

from .models import Triage

STATUS_ORDER = [s for s, _label in Triage.Status.choices]
WIDTH, HEIGHT, PAD = 640, 160, 24
TOP_RULES = 5


@dataclass
class Bar:
    x: float
    y: float
    w: float
    h: float
    css: str
    label: str


@dataclass
class Chart:
    title: str
    bars: list[Bar] = field(default_factory=list)
    ticks: list[tuple[float, str]] = field(default_factory=list)
    legend: list[tuple[str, str]] = field(default_factory=list)  # (css, label)
    peak: int = 0
    width: int = WIDTH
    height: int = HEIGHT


def stacked(title: str, buckets: list[tuple[str, Counter]], keys: list[str], css: dict, names: dict) -> Chart:
    """One bar per bucket, stacked by key, scaled to the tallest bucket."""
    chart = Chart(title, legend=[(css[k], names.get(k, k)) for k in keys])
    chart.peak = max((sum(c.values()) for _label, c in buckets), default=0)
    usable_w, usable_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    step = usable_w / max(1, len(buckets))
    for index, (label, counts) in enumerate(buckets):
        x = PAD + index * step
        y = HEIGHT - PAD
        for key in keys:
            count = counts.get(key, 0)
            if not count or not chart.peak:
                continue
            h = usable_h * count / chart.peak
            y -= h
            chart.bars.append(Bar(round(x + 1, 1), round(y, 1), round(max(step - 2, 1), 1), round(h, 1), css[key], f"{label}: {count} {names.get(key, key)}"))
        if index % max(1, len(buckets) // 6) == 0:
            chart.ticks.append((round(x + step / 2, 1), label))
    return chart


def rollups(project, now: datetime | None = None) -> dict:
    now = now or timezone.now()
    flagged = list(
        Triage.objects.filter(project=project, flagged=True, flagged_at__gte=now - timedelta(days=7))
        .values_list("flagged_at", "status", "rules")
    )
    hours = []
    for back in range(23, -1, -1):
        start = (now - timedelta(hours=back)).replace(minute=0, second=0, microsecond=0)
        end = start + timedelta(hours=1)
        counts = Counter(status for at, status, _r in flagged if start <= at < end)
        hours.append((timezone.localtime(start).strftime("%H:00"), counts))
    status_css = {s: f"st-{s}" for s in STATUS_ORDER}
    by_status = stacked("Flagged calls by status, last 24 hours (hourly)", hours, STATUS_ORDER, status_css, dict(Triage.Status.choices))

    rule_calls = Counter(code for _at, _s, rules in flagged for code in set(rules))
    top = [code for code, _n in rule_calls.most_common(TOP_RULES)]
    days = []
    for back in range(6, -1, -1):
        start = (now - timedelta(days=back)).replace(hour=0, minute=0, second=0, microsecond=0)
        end = start + timedelta(days=1)
        counts = Counter()
        for at, _s, rules in flagged:
            if start <= at < end:
                for code in set(rules):
                    counts[code if code in top else "other"] += 1
        days.append((timezone.localtime(start).strftime("%a %d"), counts))
    keys = top + ["other"]
    rule_css = {k: f"rule-{i}" for i, k in enumerate(keys)}
    by_rule = stacked("Flagged calls by rule, last 7 days (daily)", days, keys, rule_css, {})

    week_findings = Counter(
        Finding.objects.filter(call__project=project, call__started_at__gte=now - timedelta(days=7))
        .values_list("code", flat=True)
    )
    resolved = Triage.objects.filter(
        project=project, resolved_at__isnull=False, flagged_at__isnull=False,
        resolved_at__gte=now - timedelta(days=30),
    ).values_list("flagged_at", "resolved_at")
    durations = [(r - f).total_seconds() for f, r in resolved if r >= f]
    return {
        "by_status": by_status,
        "by_rule": by_rule,
        "top_rules": week_findings.most_common(10),
        "median_hours": statistics.median(durations) / 3600 if durations else None,
        "resolved_count": len(durations),
        "status_counts": sorted(
            Counter(
                Triage.objects.filter(project=project, flagged=True).values_list("status", flat=True)
            ).items(),
            key=lambda item: STATUS_ORDER.index(item[0]),
        ),
    }
