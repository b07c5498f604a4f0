from django import template

from triage import comments as comment_text
from triage import queries

register = template.Library()


@register.simple_tag(takes_context=True)
def comment_html(context, comment):
    """A comment's body as safe HTML (triage.comments.render escapes every piece)."""
    names = context.get("member_names")
    if names is None:
        names = {u.get_username() for u in queries.members(comment.call.project)}
    return comment_text.render(comment.body, names)


@register.inclusion_tag("triage/partials/comments_at.html", takes_context=True)
def comments_at(context, call, turn=None, message=None, tool_call=""):
    """The comments anchored to this spot of a call page or turn page. The call's
    comments are read once per page (kept on the call object the page renders), not
    once per spot: included templates each get their own render context."""
    found = getattr(call, "_triage_comments", None)
    if found is None:
        found = call._triage_comments = queries.comments_of(call.pk)
    if tool_call:
        items = [c for (t, m, tc), cs in found.items() if tc == tool_call for c in cs]
    else:
        items = found.get((turn, message, ""), [])
    return {"comments": items, "request": context.get("request")}


@register.inclusion_tag("triage/partials/team_panel.html", takes_context=True)
def team_panel(context, call):
    """A call's triage panel, for the call page (calls knows nothing of triage)."""
    return {**queries.team_context(call), "request": context.get("request"), "oob": False}
