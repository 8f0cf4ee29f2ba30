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

import difflib
import re

from caretz.lazy_dataclass import lazy_dataclass

_QUOTES = str.maketrans(
    {"‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"', "‟": '"'}
)
_TRAILING = re.compile(r"[ \t]+(?=\n|$)")
CLOSEST_MAX_LINES = 12
LINE_NUMBERS_SHOWN = 10


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


def _normalise(text: str) -> tuple[str, list[int]]:
    """`text` with straight quotes and no trailing whitespace, and where each of its
    characters (and its end) was in `text`."""
    kept: list[str] = []
    where: list[int] = []
    spans = [(m.start(), m.end()) for m in _TRAILING.finditer(text)]
    cut = iter(spans)
    skip = next(cut, None)
    index = 0
    while index < len(text):
        if skip is not None and index == skip[0]:
            index = skip[1]
            skip = next(cut, None)
            continue
        kept.append(text[index].translate(_QUOTES))
        where.append(index)
        index += 1
    where.append(len(text))
    return "".join(kept), where


def _normalised(text: str, old: str, new: str, replace_all: bool, shown: str) -> Applied:
    flat_text, where = _normalise(text)
    flat_old, _ = _normalise(old)
    starts = _occurrences(flat_text, flat_old) if flat_old.strip() else []
    if len(starts) > 1 and not replace_all:
        raise EditMiss(
            "old_string is not in the file exactly; with curly quotes read as straight and "
            f"trailing whitespace ignored it matches {len(starts)} places: "
            + _several(text, [where[s] for s in starts], shown)
        )
    if not starts:
        raise EditMiss(_closest(text, old, shown))
    what = _what_was_normalised(text, old, flat_old, starts, where)
    pieces: list[str] = []
    last = 0
    for start in starts:
        begin, end = where[start], where[start + len(flat_old)]
        region = text[begin:end]
        pieces += [text[last:begin], _quote_like(region, old, new)]
        last = end
    pieces.append(text[last:])
    lines = ", ".join(str(_line_of(text, where[s])) for s in starts[:LINE_NUMBERS_SHOWN])
    note = f"old_string matched only with {what} (on line {lines}); check the result"
    return Applied("".join(pieces), len(starts), note)


def _what_was_normalised(
    text: str, old: str, flat_old: str, starts: list[int], where: list[int]
) -> str:
    region = text[where[starts[0]] : where[starts[0] + len(flat_old)]]
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
    # One matcher, old_string indexed once; every window ranked by the cheap bound,
    # the best few scored in full.
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2("\n".join(wanted))
    ranked = []
    for start in range(0, max(1, len(lines) - size + 1)):
        matcher.set_seq1("\n".join(lines[start : start + size]))
        ranked.append((matcher.quick_ratio(), start))
    ranked.sort(key=lambda item: -item[0])
    for _, start in ranked[:20]:
        matcher.set_seq1("\n".join(lines[start : start + size]))
        score = matcher.ratio()
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
