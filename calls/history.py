"""Reading a turn back: its exact raw body and its whole message list.

Both are stored as changes against the previous turn with a whole copy on
checkpoint turns (every CALLSCOPE_RAW_CHECKPOINT_EVERY turns when stored),
so reading one turn touches the rows since the last checkpoint only.
"""

from . import rawstore
from .models import Message, Turn


def _since_checkpoint(turn: Turn, *fields: str):
    # Found in the data, not computed from the setting, which may have
    # changed since the call was stored.
    first = (
        Turn.objects.filter(call_id=turn.call_id, number__lte=turn.number, raw_codec=rawstore.WHOLE)
        .order_by("-number")
        .values_list("number", flat=True)
        .first()
    )
    return (
        Turn.objects.filter(call_id=turn.call_id, number__gte=first, number__lte=turn.number)
        .order_by("number")
        .values_list(*fields)
    )


def raw_body(turn: Turn) -> bytes:
    """The body exactly as the agent sent it."""
    if turn.raw_codec == rawstore.WHOLE:
        chain = [(turn.raw_codec, turn.raw_blob)]
    else:
        chain = list(_since_checkpoint(turn, "raw_codec", "raw_blob"))
    return rawstore.restore(chain, turn.body_sha256)


def message_ids(turn: Turn) -> list[int]:
    """The ids of the turn's messages, in request order."""
    ids: list[int] = []
    for snapshot, changes, count in _since_checkpoint(
        turn, "snapshot", "changes", "message_count"
    ):
        if snapshot is not None:
            ids = list(snapshot)
        else:
            for position, message_id, _before in changes:
                if position < len(ids):
                    ids[position] = message_id
                else:
                    ids.append(message_id)
        del ids[count:]
    return ids


def messages(turn: Turn) -> list[Message]:
    """The turn's messages in request order (a message re-sent twice appears twice)."""
    ids = message_ids(turn)
    rows = Message.objects.in_bulk(set(ids))
    return [rows[i] for i in ids]
