"""A content or arguments string made visible, exactly: what a person should notice in it.

A string the model reads can look right and be wrong: `\\u0c36` spelt out as six
characters is not the Telugu letter it names, a zero-width space splits a word,
a trailing space or a CR changes what the model sees. `inspect` cuts a string
into segments (plain text, literal escapes, invisible characters, controls,
trailing spaces) that together are the string, character for character, and
counts what it costs: characters, UTF-8 bytes, an estimate of tokens, scripts.
Pure functions over str; the templates render segments autoescaped.
"""

import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from .jsontext import MAX_LAYERS, NOT_JSON, decode_inner, json_value, readable_dumps

TEXT = "text"
ESCAPE = "escape"  # \uXXXX spelling a non-ASCII character: the model reads six characters
SEQUENCE = "sequence"  # another backslash sequence (\n, \", \u0041): read literally too
INVISIBLE = "invisible"  # zero-width, BOM, non-breaking and other format characters
CONTROL = "control"  # CR, tab and other control characters
TRAILING = "trailing"  # spaces or tabs before a line end or at the end
JOINER = "joiner"  # ZWJ / ZWNJ between letters of a script that spells with them (Indic, Arabic, emoji)

# What to call each invisible or control character on its marker.
_NAMES = {
    "\u200b": "ZWSP", "\u200c": "ZWNJ", "\u200d": "ZWJ", "\u2060": "WJ", "\ufeff": "BOM",
    "\u00a0": "NBSP", "\u202f": "NNBSP", "\u2007": "FIGSP", "\u00ad": "SHY",
    "\u200e": "LRM", "\u200f": "RLM", "\u202a": "LRE", "\u202b": "RLE", "\u202c": "PDF",
    "\u202d": "LRO", "\u202e": "RLO", "\u2066": "LRI", "\u2067": "RLI", "\u2068": "FSI",
    "\u2069": "PDI", "\u3000": "IDSP",
    "\r": "CR", "\t": "TAB", "\x00": "NUL", "\x1b": "ESC", "\x7f": "DEL",
}
_ESCAPES = re.compile(r'\\(?:u[0-9a-fA-F]{4}|[nrtbf"\\/])')
_LINE_END = re.compile(r"\r?\n")
INSPECT_LIMIT = 200_000  # longer strings are shown plain, with counts only


@dataclass(frozen=True, slots=True)
class Segment:
    kind: str
    text: str  # the exact characters of the string this segment covers
    label: str = ""  # marker text (CR, ZWSP, ...) and tooltip, for the marked kinds


@dataclass
class StringView:
    segments: list[Segment]
    characters: int
    utf8_bytes: int
    tokens: int  # an estimate, see estimate_tokens
    scripts: list[tuple[str, int]]  # (script, letters), most first
    escapes: int = 0  # non-ASCII \uXXXX escapes (TR104's count)
    sequences: int = 0
    invisibles: int = 0
    controls: int = 0
    trailing: int = 0
    layers: list[str] = field(default_factory=list)  # JSON decoded, layer by layer
    inspected: bool = True  # False: too long to mark, shown plain

    @property
    def marks(self) -> int:
        return self.escapes + self.invisibles + self.controls + self.trailing


def inspect(text: str, decode_json: bool = True) -> StringView:
    if len(text) > INSPECT_LIMIT:
        return StringView(
            [Segment(TEXT, text)], len(text), _utf8_length(text), estimate_tokens(text), [],
            inspected=False,
        )
    segments = _segments(text)
    counts = Counter(s.kind for s in segments)
    # Runs of escapes are one segment each; count the escapes themselves.
    counts[ESCAPE] = sum(len(_ESCAPES.findall(s.text)) for s in segments if s.kind == ESCAPE)
    counts[SEQUENCE] = sum(len(_ESCAPES.findall(s.text)) for s in segments if s.kind == SEQUENCE)
    return StringView(
        segments,
        len(text),
        _utf8_length(text),
        estimate_tokens(text),
        scripts(text),
        escapes=counts[ESCAPE],
        sequences=counts[SEQUENCE],
        invisibles=counts[INVISIBLE],
        controls=counts[CONTROL],
        trailing=counts[TRAILING],
        layers=json_layers(text) if decode_json else [],
    )


def _utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _segments(text: str) -> list[Segment]:
    marks = []  # (start, end, kind, label)
    for match in _ESCAPES.finditer(text):
        sequence = match.group()
        kind = ESCAPE if sequence[1] == "u" and int(sequence[2:], 16) >= 0x80 else SEQUENCE
        marks.append((match.start(), match.end(), kind, _escape_label(sequence)))
    for start, end in _trailing_runs(text):
        marks.append((start, end, TRAILING, f"{end - start} trailing"))
    for match in _special().finditer(text):
        index, char = match.start(), match.group()
        kind = CONTROL if unicodedata.category(char) == "Cc" else INVISIBLE
        if kind == INVISIBLE and char in "\u200c\u200d" and _between_letters(text, index):
            kind = JOINER
        marks.append((index, index + 1, kind, _NAMES.get(char) or f"U+{ord(char):04X}"))
    # At one position, the longest mark wins (a tab that starts a run of trailing spaces).
    marks.sort(key=lambda m: (m[0], -m[1]))
    segments, at = [], 0
    for start, end, kind, label in marks:
        if start < at:
            continue  # inside a mark already made (a tab in a run of trailing spaces)
        if start > at:
            segments.append(Segment(TEXT, text[at:start]))
        previous = segments[-1] if segments else None
        if start == at and previous and previous.kind == kind and kind in (ESCAPE, SEQUENCE):
            # A run of escapes is one mark: Telugu spelt out is dozens of them in a row.
            segments[-1] = Segment(kind, previous.text + text[start:end], "run")
        else:
            segments.append(Segment(kind, text[start:end], label))
        at = end
    if at < len(text):
        segments.append(Segment(TEXT, text[at:]))
    return [Segment(s.kind, s.text, _run_label(s.text)) if s.label == "run" else s for s in segments]


def _trailing_runs(text: str):
    """(start, end) of spaces and tabs before each line end and at the end. A scan per
    line: a regex with lookahead backtracks quadratically on a long run of spaces."""
    start = 0
    for end in [m.start() for m in _LINE_END.finditer(text)] + [len(text)]:
        line = text[start:end]
        kept = len(line.rstrip(" \t"))
        if kept < len(line):
            yield start + kept, end
        start = end + (2 if text.startswith("\r\n", end) else 1)


def _run_label(run: str) -> str:
    sequences = _ESCAPES.findall(run)
    if len(sequences) == 1:
        return _escape_label(sequences[0])
    try:
        meant = json.loads(f'"{run}"')
    except ValueError:
        meant = ""
    return f"{len(sequences)} literal escapes, {len(run)} characters, spelling {meant[:40]!r}"


@lru_cache(maxsize=1)
def _special() -> re.Pattern:
    """The characters worth a marker: controls (newline aside), format characters,
    spaces other than the plain one, private use and surrogates, tag characters."""
    ranges = []
    for plane_end in (0x10000, 0x20000):
        for code in range(plane_end - 0x10000, plane_end):
            char = chr(code)
            category = unicodedata.category(char)
            if (category == "Cc" and char != "\n") or category in ("Cf", "Co", "Cs") or (
                category == "Zs" and char != " "
            ):
                ranges.append(code)
    ranges += range(0xE0000, 0xE0080)  # tags: invisible ASCII look-alikes
    pieces, start = [], None
    for position, code in enumerate(ranges):
        if start is None:
            start = code
        if position + 1 == len(ranges) or ranges[position + 1] != code + 1:
            pieces.append(_class_range(start, code))
            start = None
    return re.compile("[" + "".join(pieces) + "\U000F0000-\U0010FFFD]")


def _class_range(first: int, last: int) -> str:
    def escaped(code: int) -> str:
        return f"\\U{code:08X}"

    return escaped(first) if first == last else f"{escaped(first)}-{escaped(last)}"


def _between_letters(text: str, index: int) -> bool:
    """A joiner inside a non-Latin word (Telugu అపాయింట్‌మెంట్, Persian, emoji
    sequences) is spelling, not a stray character."""
    before = text[index - 1] if index > 0 else ""
    after = text[index + 1] if index + 1 < len(text) else ""
    return bool(before) and bool(after) and not before.isascii() and not after.isascii()


def _escape_label(sequence: str) -> str:
    if sequence[1] == "u":
        code = int(sequence[2:], 16)
        if 0xD800 <= code <= 0xDFFF:
            return f"literal {sequence}: six characters (half of a surrogate pair)"
        return f"literal {sequence}: six characters, not {chr(code)!r}"
    return f"literal {sequence}: a backslash and {sequence[1]!r}, not the character it names"


SCRIPTS_SAMPLE = 50_000  # characters looked at to name the scripts of a long string


def scripts(text: str) -> list[tuple[str, int]]:
    """Writing systems of the letters in `text` (its first SCRIPTS_SAMPLE characters),
    by count: Latin, Telugu, CJK, ..."""
    found: Counter = Counter()
    for char in text[:SCRIPTS_SAMPLE]:
        if char.isascii():
            if char.isalpha():
                found["Latin"] += 1
            continue
        if not unicodedata.category(char).startswith(("L", "M")):
            continue
        found[_script(char)] += 1
    return found.most_common()


def _script(char: str) -> str:
    name = unicodedata.name(char, "")
    if not name:
        return "Other"
    first = name.split()[0]
    if first == "CJK" or "IDEOGRAPH" in name:
        return "CJK"
    if first in ("HIRAGANA", "KATAKANA"):
        return "Japanese kana"
    if first == "COMBINING":
        return "Combining marks"
    return first.title()


def estimate_tokens(text: str) -> int:
    """About four ASCII characters per token and one token per other character: the
    shape of common BPE vocabularies, where non-Latin text costs far more per letter.
    An upload of the model's tokenizer.json gives the real count."""
    ascii_count = len(text.encode("ascii", "ignore"))
    return -(-ascii_count // 4) + (len(text) - ascii_count)


def json_layers(text: str) -> list[str]:
    """The string decoded as JSON, then again wherever a decoded value is JSON text,
    each layer pretty-printed (non-ASCII as itself): [] when it is not JSON."""
    value = json_value(text)
    if value is NOT_JSON:
        return []
    layers = [_pretty(value)]
    while len(layers) < MAX_LAYERS:
        value, changed = decode_inner(value)
        if not changed:
            break
        layers.append(_pretty(value))
    return layers


def _pretty(value) -> str:
    try:
        return readable_dumps(value, indent=2)
    except (ValueError, RecursionError):
        return "(too deeply nested to show)"
