"""What every page shows of the team: the signed-in user's unread notifications."""

from .queries import unread_count


def unread(request) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"unread": unread_count(user.pk)}
