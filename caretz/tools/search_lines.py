"""A content row rg printed, made readable: a match inside a very long line (minified code,
a data file) shown around the match, and a line of a file that is not UTF-8 shown in the
file's own encoding (rg prints the file's bytes as they are).

rg shows the first MAX_LINE_CHARS of a line that is longer (`--max-columns-preview`),
which may not hold the match at all. For such a row of the page, rg is asked once more,
for that file only, where each match starts (`--only-matching --byte-offset`), and the
row shows the bytes around the line's first match, read from the file itself (opened
beneath the sandbox's roots, as the search was). Nothing else about the search changes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from caretz.sandbox import safe_open
from caretz.tools import file_text
from caretz.tools.ripgrep import RgRun
from caretz.tools.search_results import content_line
from caretz.tools.search_scope import SearchScope

LONG_LINE_MARK = b" [... omitted end of long line]"
BEFORE_BYTES = 200
WINDOW_BYTES = 500
HEAD_BYTES = 1 << 16  # what a row's file is sniffed for its encoding from

# Runs rg with these arguments, these fds passed; the search tool's own run.
RunRg = Callable[[list[str], tuple[int, ...]], RgRun]


def render_row(row: bytes, scope: SearchScope, numbers: bool, long: LongLines) -> str:
    """A content row as `content_line` shows it; a long matching line around its match;
    a line that is not UTF-8 in its file's own encoding (rg prints a file's bytes)."""
    line = content_line(row, scope, numbers)
    split = row.find(b"\0")
    rest = row[split + 1 :]
    digits = len(rest) - len(rest.lstrip(b"0123456789"))
    raw = rest[digits + 1 :]
    prefix = line[: len(line) - len(file_text.row_text(raw))]
    if not row.endswith(LONG_LINE_MARK):
        if not digits or file_text.is_utf8(raw):
            return line
        return prefix + long.in_its_encoding(scope.file_path(row[:split]), raw)
    if rest[digits : digits + 1] != b":":
        return line  # a context line: no match to show
    around = long.around_match(scope.file_path(row[:split]), int(rest[:digits]))
    return line if around is None else prefix + around


class LongLines:
    """The windows around the first match of the long lines of one search's page."""

    def __init__(self, pattern_args: list[str], anchors: tuple[Path, ...], run: RunRg):
        self.pattern_args = pattern_args  # the pattern and the flags that change what matches
        self.anchors = anchors
        self.run = run
        self._starts: dict[Path, dict[int, int]] = {}  # file → line → first match's offset
        self._encodings: dict[Path, file_text.Encoding] = {}

    def in_its_encoding(self, path: Path, raw: bytes) -> str:
        """A line of `path` as text in the encoding the file's first bytes show."""
        encoding = self._encodings.get(path)
        if encoding is None:
            try:
                fd, _ = safe_open.open_regular(path, self.anchors)
                try:
                    head = os.pread(fd, HEAD_BYTES, 0)
                finally:
                    os.close(fd)
                encoding = file_text.sniff(head, complete=len(head) < HEAD_BYTES)
            except (OSError, file_text.NotText):
                encoding = file_text.UTF8
            self._encodings[path] = encoding
        return file_text.line_text(raw, encoding)

    def around_match(self, path: Path, line: int) -> str | None:
        """The text around the first match on `line` of `path`; None: not found again."""
        try:
            fd, _ = safe_open.open_regular(path, self.anchors)
        except OSError:
            return None
        try:
            starts = self._starts.get(path)
            if starts is None:
                starts = self._starts[path] = self._match_starts(fd)
            offset = starts.get(line)
            if offset is None:
                return None
            begin = max(offset - BEFORE_BYTES, 0)
            raw = os.pread(fd, WINDOW_BYTES, begin)
        finally:
            os.close(fd)
        text = file_text.fragment_text(raw, whole_start=begin == 0)
        return f"{'' if begin == 0 else '[…] '}{text} […]"

    def _match_starts(self, fd: int) -> dict[int, int]:
        ran = self.run(
            [
                "--only-matching",
                "--byte-offset",
                "--line-number",
                "--no-filename",
                "--max-columns",
                "1",
                *self.pattern_args,
                "--",
                f"/proc/self/fd/{fd}",
            ],
            (fd,),
        )
        starts: dict[int, int] = {}
        for row in ran.stdout.split(b"\n"):
            line, _, rest = row.partition(b":")
            offset = rest.partition(b":")[0]
            if line.isascii() and line.isdigit() and offset.isascii() and offset.isdigit():
                starts.setdefault(int(line), int(offset))
        return starts
