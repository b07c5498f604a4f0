"""Live fragments: the page's own partials, wrapped for htmx's ws extension.

Each root element has a stable id and a `data-rev`; wrappers with
`hx-swap-oob="afterbegin:#…"` / `"beforeend:#…"` ask the browser to insert
their children, or replace them where already shown (static/callscope/live.js).
Table rows travel in a <template> wrapper: anywhere else in a message the
HTML parser would drop <tr> outside a table.
Fragments are rendered once per change for every viewer, so nothing in them
may depend on who is looking.
"""

from django.template.loader import render_to_string

from .callpicture import picture
from .models import Call, Event, Turn
from .turnview import tool_call_rows, turn_views


def call_rows(calls: list[Call], matched: bool = False) -> str:
    """Rows for the calls list; `matched`: filtered for the page that asked, so a
    filtered list may insert them (it cannot judge a pushed row by itself)."""
    rows = "".join(render_to_string("calls/partials/call_row.html", {"call": c}) for c in calls)
    flag = ' data-matched="1"' if matched else ""
    return f'<template hx-swap-oob="afterbegin:#call-rows"{flag}>{rows}</template>'


def call_row(call: Call) -> str:
    return call_rows([call])


def call_header(call: Call) -> str:
    return render_to_string("calls/partials/call_header.html", {"call": call, "oob": True})


def tool_rows(call: Call, tool_call_ids: set[str] | None = None) -> str:
    """Rows of the tool-call panel: those of `tool_call_ids`, or all."""
    rows = "".join(
        render_to_string("calls/partials/tool_row.html", {"row": row})
        for row in tool_call_rows(call, tool_call_ids)
    )
    return f'<template hx-swap-oob="beforeend:#tool-rows">{rows}</template>' if rows else ""


def turns(call: Call, turns: list[Turn]) -> str:
    if not turns:
        return ""
    sections = "".join(
        # A turn pushed live is new: nobody has commented on it yet.
        render_to_string("calls/partials/turn.html", {"call": call, "view": view, "live": True})
        for view in turn_views(call, turns)
    )
    return f'<div hx-swap-oob="beforeend:#turns">{sections}</div>'


def events(call: Call, events: list[Event]) -> str:
    by_turn: dict[int, list[Event]] = {}
    for event in events:
        by_turn.setdefault(event.turn, []).append(event)
    return "".join(
        f'<ol hx-swap-oob="beforeend:#turn-{number}-events">'
        + "".join(
            render_to_string("calls/partials/event.html", {"call": call, "event": e})
            for e in items
        )
        + "</ol>"
        for number, items in by_turn.items()
    )


def timeline(call: Call) -> str:
    """The call's picture; its cost grows with the call, so live pushes send it sparingly."""
    return render_to_string(
        "calls/partials/timeline.html", {"call": call, "picture": picture(call), "oob": True}
    )
