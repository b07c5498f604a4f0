"""What changed between two requests' message lists, in kinds a person can act on.

Appended at the end, inserted in the middle, removed, edited in place, moved
(the same message elsewhere), and settled (a tool slot whose placeholder was
overwritten by its result, which is how Pipecat is meant to work and must not
look like a rewrite). Pure functions over plain data: digests say whether two
messages are the same; the caller says which results are placeholders.
"""

import difflib
from dataclasses import dataclass, field

from .jsontext import readable_dumps

SAME = "same"
APPENDED = "appended"
INSERTED = "inserted"
REMOVED = "removed"
EDITED = "edited"
MOVED = "moved"
SETTLED = "settled"
KINDS = (APPENDED, INSERTED, REMOVED, EDITED, MOVED, SETTLED, SAME)


@dataclass(frozen=True)
class Side:
    """One message of one side."""

    index: int
    digest: str
    role: str
    item: object  # the decoded message, shown pretty
    results: tuple[str, ...] = ()  # tool-call ids it answers
    placeholder: bool = False  # its result is a placeholder (still running or terminal)


@dataclass
class Row:
    kind: str
    before: Side | None
    after: Side | None
    lines: list[tuple[str, str]] = field(default_factory=list)  # edited: (" "|"-"|"+", line)

    @property
    def changed(self) -> bool:
        return self.kind != SAME

    @property
    def role(self) -> str:
        return (self.after or self.before).role


def diff(before: list[Side], after: list[Side]) -> list[Row]:
    """Rows in the order of `after`, with removed messages where they used to be."""
    matcher = difflib.SequenceMatcher(
        a=[s.digest for s in before], b=[s.digest for s in after], autojunk=False
    )
    opcodes = matcher.get_opcodes()
    # Messages on both sides outside the matched runs were moved: never pair them as edits.
    gone = {s.digest for tag, a1, a2, _b1, _b2 in opcodes if tag != "equal" for s in before[a1:a2]}
    new = {s.digest for tag, _a1, _a2, b1, b2 in opcodes if tag != "equal" for s in after[b1:b2]}
    moved = gone & new
    rows: list[Row] = []
    for tag, a1, a2, b1, b2 in opcodes:
        if tag == "equal":
            rows += [Row(SAME, before[a1 + k], after[b1 + k]) for k in range(a2 - a1)]
            continue
        olds = [s for s in before[a1:a2] if s.digest not in moved]
        news = [s for s in after[b1:b2] if s.digest not in moved]
        pairs = _pairs(olds, news) if tag == "replace" else {}
        paired_olds = {id(old) for old in pairs.values()}
        rows += [Row(REMOVED, old, None) for old in before[a1:a2] if id(old) not in paired_olds]
        at_end = b2 == len(after) and a2 == len(before)
        for added in after[b1:b2]:
            if id(added) in pairs:
                rows.append(_in_place(pairs[id(added)], added))
            else:
                rows.append(Row(APPENDED if at_end else INSERTED, None, added))
    return _moves(rows)


def _pairs(olds: list[Side], news: list[Side]) -> dict[int, Side]:
    """Which old message each new one replaced: the one answering the same tool calls
    first (a slot rewritten in place), then the rest in order."""
    pairs, free = {}, list(olds)
    for new in news:
        same_slot = next((o for o in free if o.results and o.results == new.results), None)
        if same_slot is not None:
            pairs[id(new)] = same_slot
            free.remove(same_slot)
    for new in news:
        if id(new) not in pairs and free:
            pairs[id(new)] = free.pop(0)
    return pairs


def _in_place(old: Side, new: Side) -> Row:
    if old.placeholder and old.results and old.results == new.results and not new.placeholder:
        return Row(SETTLED, old, new)
    return Row(EDITED, old, new, lines=line_diff(old.item, new.item))


def _moves(rows: list[Row]) -> list[Row]:
    """A message removed in one place and added in another was moved, not lost."""
    removed = {r.before.digest: r for r in rows if r.kind == REMOVED}
    added = {r.after.digest: r for r in rows if r.kind in (APPENDED, INSERTED)}
    moved = removed.keys() & added.keys()
    if not moved:
        return rows
    result = []
    for row in rows:
        if row.kind == REMOVED and row.before.digest in moved:
            continue  # shown once, where it is now
        if row.kind in (APPENDED, INSERTED) and row.after.digest in moved:
            row = Row(MOVED, removed[row.after.digest].before, row.after)
        result.append(row)
    return result


def pretty(item) -> list[str]:
    return readable_dumps(item, indent=2).splitlines()


MAX_DIFF_LINES = 2000  # per side; beyond this an edit shows both sides whole, unaligned


def line_diff(old, new) -> list[tuple[str, str]]:
    """The edit line by line (" ", "-", "+"). Lines are aligned by SequenceMatcher, not
    ndiff, whose character-level pass takes minutes on a message of a few hundred lines."""
    before, after = pretty(old), pretty(new)
    if len(before) > MAX_DIFF_LINES or len(after) > MAX_DIFF_LINES:
        return [("-", line) for line in before] + [("+", line) for line in after]
    lines = []
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if tag == "equal":
            lines += [(" ", line) for line in before[a1:a2]]
        else:
            lines += [("-", line) for line in before[a1:a2]] + [("+", line) for line in after[b1:b2]]
    return lines


def counts(rows: list[Row]) -> dict[str, int]:
    found = {kind: 0 for kind in KINDS}
    for row in rows:
        found[row.kind] += 1
    return found
