"""The lines a read shows: a window of numbered lines within a character budget, from text
that arrives a piece at a time (a file decoded as it is read, a PDF's pages, a notebook's
cells), with the count of the lines after it and the line that says where to go on.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from caretz.lazy import lazy_module
from caretz.tools import file_text
from caretz.tools.file_reads import KEEP_TEXT_BYTES

if TYPE_CHECKING:
    import hashlib
else:
    # OpenSSL's digests: loaded at the first file read, not at start.
    hashlib = lazy_module("hashlib")

READ_MAX_LINE_CHARS = 2000
# Past the lines shown, a read counts the file's lines for this many more characters.
READ_COUNT_CHARS = 256 << 20
CHUNK_BYTES = 1 << 20


@dataclass(kw_only=True)
class Window:
    rows: list[str]
    total: int  # lines counted (all of them when counted_all)
    counted_all: bool
    cut_by_budget: bool
    budget: int

    def tail(self, offset: int) -> list[str]:
        last = offset + len(self.rows) - 1
        if last >= self.total and self.counted_all:
            return [] if offset == 1 else [f"[lines {offset}–{last} of {self.total}; the end]"]
        of = f"{self.total}" if self.counted_all else f"at least {self.total}"
        why = f" (the output limit of {self.budget:,} characters)" if self.cut_by_budget else ""
        return [f"[lines {offset}–{last} of {of}{why}; offset={last + 1} for more]"]


def window(
    pieces: Iterable[str],
    offset: int,
    limit: int,
    budget: int,
    count_chars: int = READ_COUNT_CHARS,
) -> Window:
    """Lines offset..offset+limit-1 of the text `pieces` make, numbered, within `budget`
    characters, and how many lines there are (counted for `count_chars` past the window)."""
    rows: list[str] = []
    used, number, counted = 0, 0, 0
    cut = False
    kept: list[str] = []  # the current line's first characters, for a line in the window
    kept_chars, line_chars = 0, 0
    for text in pieces:
        parts = text.split("\n")
        for index, part in enumerate(parts):
            in_window = not cut and offset <= number + 1 < offset + limit
            if in_window and kept_chars <= READ_MAX_LINE_CHARS:
                piece = part[: READ_MAX_LINE_CHARS + 1 - kept_chars]
                kept.append(piece)
                kept_chars += len(piece)
            line_chars += len(part)
            if index == len(parts) - 1:
                break  # the line goes on in the next piece
            number += 1
            if in_window:
                row = _row(number, "".join(kept), line_chars)
                if rows and used + len(row) + 1 > budget:
                    cut = True
                else:
                    rows.append(row)
                    used += len(row) + 1
            kept.clear()
            kept_chars, line_chars = 0, 0
        if number >= offset + limit or cut:
            counted += len(text)
            if counted > count_chars:
                return Window(
                    rows=rows, total=number, counted_all=False, cut_by_budget=cut, budget=budget
                )
    if line_chars:  # a last line without a newline
        number += 1
        if not cut and offset <= number < offset + limit:
            row = _row(number, "".join(kept), line_chars)
            if rows and used + len(row) + 1 > budget:
                cut = True
            else:
                rows.append(row)
    return Window(rows=rows, total=number, counted_all=True, cut_by_budget=cut, budget=budget)


def _row(number: int, kept: str, chars: int) -> str:
    text = kept
    if chars == len(kept) and text.endswith("\r"):
        text, chars = text[:-1], chars - 1
    more = chars - READ_MAX_LINE_CHARS
    if more > 0:
        text = f"{text[:READ_MAX_LINE_CHARS]} [... {more} more characters on this line]"
    return f"{number:>6}\t{file_text.shown(text)}"


class FilePieces:
    """A file's text, decoded a piece at a time in the encoding its first bytes show, and
    what a read remembers of it: the digest of its bytes and, when small, the bytes."""

    def __init__(self, fd: int):
        self.fd = fd
        self.first = os.read(fd, CHUNK_BYTES)
        # Raises file_text.NotText for a binary file.
        self.encoding = file_text.sniff(self.first, complete=len(self.first) < CHUNK_BYTES)
        self._digest = hashlib.sha256()
        self._kept: list[bytes] | None = []
        self.done = False

    def __iter__(self) -> Iterator[str]:
        decoder = file_text.decoder(self.encoding)
        chunk, skip = self.first, len(self.encoding.bom)
        while chunk:
            self._digest.update(chunk)
            if self._kept is not None:
                self._kept.append(chunk)
                if sum(map(len, self._kept)) > KEEP_TEXT_BYTES:
                    self._kept = None
            yield decoder.decode(chunk[skip:])
            skip = 0
            chunk = os.read(self.fd, CHUNK_BYTES)
        yield decoder.decode(b"", final=True)
        self.done = True

    @property
    def digest(self) -> str:
        return self._digest.hexdigest()

    @property
    def data(self) -> bytes | None:
        """The whole file, when it was read to its end and is small enough to keep."""
        return b"".join(self._kept) if self.done and self._kept is not None else None
