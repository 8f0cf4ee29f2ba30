"""A streamed answer repeating itself: the check, plain (no pydantic), cheap enough for
every delta.

Two owners run it on the same deltas: the loop guard's `stream-text` detector
(guard/streams.py: its strikes, its redirect-then-stop), and the turn's own cut
(agent/text_loop_cut.py), which ends a looping reply in every mode, the guard off
included. Both read `loopGuard.detectors.streamText`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from caretz.text import one_line

_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_WORDLIKE = re.compile(r"\w")
WINDOW = 8000  # characters of the answer kept for the check
_MAX_CANDIDATES = 64  # earlier occurrences of the tail tried as period starts


class TextLoopSettings(NamedTuple):
    """`loopGuard.detectors.streamText`'s thresholds, plain (the schema's defaults)."""

    enabled: bool = True
    min_period: int = 50
    max_repeats: int = 5
    max_repeats_in_code: int = 20


class TextLoop(NamedTuple):
    unit: str  # the text that repeats, at least `min_period` characters
    repeats: int


def repeated_tail(text: str, min_period: int, repeats: int) -> str | None:
    """The text of at least `min_period` characters that the end of `text` repeats
    `repeats` times in a row, if any.

    A sentence shorter than `min_period` repeats as a block of whole sentences
    (an 18-character sentence as a 54-character block), so a short loop needs the
    same length of repeated text as a long one. Text without a letter or digit
    (a rule of `=====`, a table's `|---|`, blank lines) never loops. Only exact
    repetition counts: list items or table rows that share a long prefix but
    differ at the end are not periodic.
    """
    size = len(text)
    if size < min_period * repeats or not _WORDLIKE.search(text[-min_period * repeats :]):
        return None
    probe = text[size - min_period :]
    start = text.rfind(probe, 0, size - 1)
    for _ in range(_MAX_CANDIDATES):
        if start < 0:
            return None
        period = size - min_period - start
        block = period * -(-min_period // period)  # whole periods, at least min_period
        if block * repeats > size:
            return None
        unit = text[size - block :]
        if text.endswith(unit * repeats):
            return unit
        start = text.rfind(probe, 0, start + min_period - 1)
    return None


def is_table(unit: str) -> bool:
    """Whether `unit` is whole table rows (read from a line start, wherever it was cut)."""
    cut = unit.find("\n") + 1
    rows = unit[cut:] + unit[:cut]
    lines = [line.strip() for line in rows.splitlines() if line.strip()]
    return bool(lines) and all(line.startswith("|") for line in lines)


class TextLoopWatch:
    """One streamed answer, fed delta by delta: the loop it ends in, if any.

    Text inside a ``` block, and identical table rows, need `max_repeats_in_code`
    repeats (identical lines are sometimes wanted there: fixtures, a blank form). The
    check starts again at each fence; a loop that writes the same fenced block again
    and again is read across the fences, and needs `max_repeats_in_code` repeats too.
    """

    def __init__(self, settings: TextLoopSettings):
        self.settings = settings
        self.reset()

    def reset(self) -> None:
        self._segment = ""  # text since the last code fence
        self._line = ""  # the unfinished last line
        self._whole = ""  # the answer's tail, fences and all
        self._in_code = False
        self._fenced = False  # a fence came in this answer

    def feed(self, text: str) -> TextLoop | None:
        self._feed(text)
        s = self.settings
        repeats = s.max_repeats_in_code if self._in_code else s.max_repeats
        if not s.enabled or not repeats:
            return None
        tail = (self._segment + self._line)[-WINDOW:]
        unit = repeated_tail(tail, s.min_period, repeats)
        if unit and not self._in_code and is_table(unit):
            repeats = s.max_repeats_in_code
            unit = repeated_tail(tail, s.min_period, repeats) if repeats else None
        if unit is None and s.max_repeats_in_code and self._fenced:
            repeats = s.max_repeats_in_code
            unit = repeated_tail(self._whole, s.min_period, repeats)
        return TextLoop(unit, repeats) if unit else None

    def _feed(self, text: str) -> None:
        """Keep the text since the last code fence; a fence line flips in/out of code."""
        self._line += text
        self._whole = (self._whole + text)[-WINDOW:]
        *complete, self._line = self._line.split("\n")
        for line in complete:
            if _FENCE.match(line):
                self._in_code = not self._in_code
                self._fenced = True
                self._segment = ""
            else:
                self._segment += line + "\n"
        self._segment = self._segment[-WINDOW:]
        self._line = self._line[-WINDOW:]


def loop_headline(loop: TextLoop) -> str:
    return f"stream-text: text repeated {loop.repeats}×: {one_line(loop.unit, 60)}"


def loop_reason(loop: TextLoop) -> str:
    """Why the reply was cut, kept after it in the conversation."""
    return f"the answer repeated the same text {loop.repeats} times: {one_line(loop.unit, 120)!r}"


# The turn's end when its own cut acted; "Reply to carry on from there." is the words a
# headless run replaces with how to continue (ui/guard_lines.py).
CUT_NOTICE = (
    "[loop-guard] The answer kept repeating the same text, so caretz cut it off and ended "
    "the turn; the text before the cut is kept (loopGuard.detectors.streamText tunes this "
    "check or turns it off). Reply to carry on from there."
)
