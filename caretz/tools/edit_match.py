"""Finding an edit's old_string in a file, and telling the model what to fix when it is not
there once.

- Exactly once (or anywhere, with replace_all): replaced.
- Several places: their line numbers, and "add context or set replace_all".
- Nowhere: the same search with curly quotes read as straight ones and trailing
  whitespace ignored; if that finds it once (or anywhere, with replace_all) it is used,
  and the result says so. Otherwise the closest region of the file, with line numbers,
  and what differs (indentation, quotes, other text).
"""

from __future__ import annotations

import bisect
import difflib
import heapq
import itertools
import re
from collections.abc import Callable

from caretz.lazy_dataclass import lazy_dataclass

_CURLY = {"‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"', "‟": '"'}
_QUOTES = str.maketrans(_CURLY)
# A run's start only (not after a blank): each run is tried once, not once per blank.
_TRAILING = re.compile(r"(?<![ \t])[ \t]+(?=\n|$)")
CLOSEST_MAX_LINES = 12
LINE_NUMBERS_SHOWN = 10
# The closest text: how many windows are scored in full, and how a line that is one of
# old_string's (whitespace and quotes aside) weighs against one shared word.
CANDIDATES = 20
COMPARED_IN_FULL = 3
WHOLE_LINE_WEIGHT = 10
MAX_CHARS_COMPARED = 1_200


class EditMiss(Exception):
    """old_string is not where an edit needs it; str() is the message for the model."""


@lazy_dataclass(frozen=True)
class Applied:
    text: str  # the file's text after the edit
    count: int  # replacements made
    note: str  # how it matched, when not exactly ("" when exactly)


def apply_edit(text: str, old: str, new: str, replace_all: bool, shown: str) -> Applied:
    """`text` with `old` replaced by `new`; raises EditMiss with what to fix."""
    if old == new:
        raise EditMiss("old_string and new_string are the same; nothing to change")
    if not old:
        raise EditMiss("old_string is empty; give the exact text to replace")
    old, new = _match_line_endings(text, old, new)
    starts = _occurrences(text, old)
    if len(starts) == 1 or (starts and replace_all):
        updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        return Applied(updated, len(starts), "")
    if starts:
        raise EditMiss(_several(text, starts, shown))
    return _normalised(text, old, new, replace_all, shown)


def _occurrences(text: str, old: str) -> list[int]:
    starts, at = [], text.find(old)
    while at >= 0:
        starts.append(at)
        at = text.find(old, at + len(old))
    return starts


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _several(text: str, starts: list[int], shown: str) -> str:
    lines = [str(_line_of(text, at)) for at in starts[:LINE_NUMBERS_SHOWN]]
    more = (
        f" and {len(starts) - LINE_NUMBERS_SHOWN} more" if len(starts) > LINE_NUMBERS_SHOWN else ""
    )
    return (
        f"old_string matches {len(starts)} places in {shown} (starting on lines "
        f"{', '.join(lines)}{more}); add more surrounding context to make it unique, "
        "or set replace_all to change every one"
    )


def _normalise(text: str) -> tuple[str, Callable[[int], int]]:
    """`text` with straight quotes and no trailing whitespace, and where each of its
    characters (and its end) was in `text` (a quote stays one character)."""
    pieces: list[str] = []
    flat_at: list[int] = []  # where each removed run would have been in the result
    removed: list[int] = []  # how much was removed up to and including each run
    last, total, at = 0, 0, 0
    for line in text.split("\n"):  # a run of blanks before each line break, and at the end
        kept = len(line.rstrip(" \t"))
        if kept != len(line):
            pieces.append(text[last : at + kept])
            flat_at.append(at + kept - total)
            total += len(line) - kept
            removed.append(total)
            last = at + len(line)
        at += len(line) + 1
    pieces.append(text[last:])

    def where(index: int) -> int:
        before = bisect.bisect_right(flat_at, index)
        return index + (removed[before - 1] if before else 0)

    return _straight("".join(pieces)), where


def _straight(text: str) -> str:
    """`text` with straight quotes (replace per quote: translate looks up every character)."""
    for curly, plain in _CURLY.items():
        if curly in text:
            text = text.replace(curly, plain)
    return text


def _normalised(text: str, old: str, new: str, replace_all: bool, shown: str) -> Applied:
    flat_text, where = _normalise(text)
    flat_old, _ = _normalise(old)
    starts = _occurrences(flat_text, flat_old) if flat_old.strip() else []
    if len(starts) > 1 and not replace_all:
        raise EditMiss(
            "old_string is not in the file exactly; with curly quotes read as straight and "
            f"trailing whitespace ignored it matches {len(starts)} places: "
            + _several(text, [where(s) for s in starts], shown)
        )
    if not starts:
        raise EditMiss(_closest(text, old, shown))
    what = _what_was_normalised(text, old, flat_old, starts, where)
    pieces: list[str] = []
    last = 0
    for start in starts:
        begin, end = where(start), where(start + len(flat_old))
        region = text[begin:end]
        pieces += [text[last:begin], _quote_like(region, old, new)]
        last = end
    pieces.append(text[last:])
    lines = ", ".join(str(_line_of(text, where(s))) for s in starts[:LINE_NUMBERS_SHOWN])
    note = f"old_string matched only with {what} (on line {lines}); check the result"
    return Applied("".join(pieces), len(starts), note)


def _what_was_normalised(
    text: str, old: str, flat_old: str, starts: list[int], where: Callable[[int], int]
) -> str:
    region = text[where(starts[0]) : where(starts[0] + len(flat_old))]
    quotes = region.translate(_QUOTES) != region or old.translate(_QUOTES) != old
    spaces = _TRAILING.sub("", region) != region or _TRAILING.sub("", old) != old
    if quotes and spaces:
        return "curly quotes read as straight ones and trailing whitespace ignored"
    if quotes:
        return "curly quotes read as straight ones"
    return "trailing whitespace ignored"


def _quote_like(region: str, old: str, new: str) -> str:
    """new_string, its curly quotes made straight where the file's text had straight ones
    and old_string curly ones (a model's typographic quotes for the file's plain ones)."""
    if region.translate(_QUOTES) == region and old.translate(_QUOTES) != old:
        return new.translate(_QUOTES)
    return new


def _closest(text: str, old: str, shown: str) -> str:
    """Where the file comes closest to old_string, with line numbers, and what differs."""
    lines = text.split("\n")
    wanted = old.strip("\n").split("\n")
    size = max(1, min(len(wanted), len(lines)))
    best, best_score = 0, 0.0
    for start in _candidates(lines, wanted, size):
        score = _alike(lines[start : start + size], wanted)
        if score > best_score:
            best, best_score = start, score
    message = f"old_string not found in {shown}"
    if best_score < 0.5:
        return (
            message + "; nothing in it comes close. Read the file again and copy the text exactly"
        )
    region = lines[best : best + size]
    shown_lines = region[:CLOSEST_MAX_LINES]
    listing = "\n".join(f"{best + 1 + i:>6}\t{line}" for i, line in enumerate(shown_lines))
    if len(region) > CLOSEST_MAX_LINES:
        listing += f"\n[… {len(region) - CLOSEST_MAX_LINES} more lines]"
    return (
        f"{message}. The closest text is lines {best + 1}–{best + size} "
        f"({best_score:.0%} alike):\n{listing}\nWhat differs: {_differences(region, wanted)}. "
        "Copy the text from the file exactly (without the line-number prefix)"
    )


def _candidates(lines: list[str], wanted: list[str], size: int) -> list[int]:
    """The window starts most worth scoring in full, found in time linear in the file: a
    line scores by being one of old_string's (indentation and quotes aside), or, when no
    line is, by the words it shares with it; a window scores the sum of its lines."""
    wanted_lines = {line.strip() for line in wanted} - {""}
    wanted_lines |= {line.translate(_QUOTES) for line in wanted_lines}
    wanted_words = set("\n".join(wanted).split())
    scores = [WHOLE_LINE_WEIGHT if line.strip() in wanted_lines else 0 for line in lines]
    if not any(scores):  # no line of old_string is in the file: the words it shares
        scores = [len(wanted_words.intersection(line.split())) for line in lines]
    sums = [0, *itertools.accumulate(scores)]
    starts = range(max(1, len(lines) - size + 1))
    ranked = heapq.nlargest(CANDIDATES, starts, key=lambda at: (sums[at + size] - sums[at], -at))
    # The cheap bound of difflib's ratio picks the few compared in full.
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2("\n".join(wanted))

    def bound(at: int) -> float:
        matcher.set_seq1("\n".join(lines[at : at + size]))
        return matcher.quick_ratio()

    return heapq.nlargest(COMPARED_IN_FULL, ranked, key=lambda at: (bound(at), -at))


def _alike(region: list[str], wanted: list[str]) -> float:
    """How alike a region and old_string are: by characters, or, when they are long enough
    that comparing characters would cost too much, by their lines (indentation aside)."""
    a, b = "\n".join(region), "\n".join(wanted)
    if len(a) + len(b) <= MAX_CHARS_COMPARED:
        return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
    stripped = [line.strip() for line in region], [line.strip() for line in wanted]
    return difflib.SequenceMatcher(None, *stripped, autojunk=False).ratio()


def _differences(region: list[str], wanted: list[str]) -> str:
    found = []
    squash = [re.sub(r"\s+", " ", line).strip() for line in region]
    if squash == [re.sub(r"\s+", " ", line).strip() for line in wanted]:
        found.append("whitespace only (indentation, tabs versus spaces, or spaces inside lines)")
    elif [line.translate(_QUOTES) for line in region] == [
        line.translate(_QUOTES) for line in wanted
    ]:
        found.append("quotes only (curly versus straight)")
    elif [line.translate(_QUOTES) for line in squash] == [
        re.sub(r"\s+", " ", line).strip().translate(_QUOTES) for line in wanted
    ]:
        found.append("whitespace and quotes (spacing or indentation, and curly versus straight)")
    else:
        for number, (have, want) in enumerate(zip(region, wanted, strict=False)):
            if have != want:
                found.append(f"line {number + 1} of old_string reads {want.strip()[:80]!r}")
                break
        if len(region) != len(wanted):
            found.append(f"old_string has {len(wanted)} lines")
    if not found:
        found.append("line breaks")
    return "; ".join(found)


def _match_line_endings(text: str, old: str, new: str) -> tuple[str, str]:
    """In a CRLF file, let "\\n" in the strings stand for the file's "\\r\\n"."""
    if "\r\n" in text and "\r" not in old and "\n" in old and old not in text:
        return old.replace("\n", "\r\n"), new.replace("\r\n", "\n").replace("\n", "\r\n")
    return old, new
