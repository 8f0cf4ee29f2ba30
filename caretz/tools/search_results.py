"""rg's output made into the rows a search shows, in a stable order, one page at a time.

Every row rg returns is kept (so the total is exact) but only the page is decoded and
formatted. The order never depends on rg's threads, so `offset` pages through the same
list call after call: content and counts by path, file lists (and glob) newest first.
"""

from __future__ import annotations

import heapq
import os
import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from caretz.lazy_dataclass import lazy_dataclass
from caretz.tools import file_text
from caretz.tools.search_scope import SearchScope

_MATCH_LINE = re.compile(rb"\x00(?:\d+:|\x01)")
# rg's line for a binary file it was given by name: no NUL after the path.
_BINARY = re.compile(rb"(.*): binary file matches \((.*)\)")
Row = TypeVar("Row")


@lazy_dataclass(frozen=True)
class ResultPage:
    lines: list[str]
    footer: str  # "" when everything was shown


def content_rows(stdout: bytes, scope: SearchScope) -> tuple[list[bytes], int]:
    """`path\\0N:text` / `path\\0N-text` rows sorted by path, and how many are matches
    (a binary file that matches is one row, `path\\0\\x01why`)."""
    rows = [_binary_row(row) for row in stdout.split(b"\n") if row and row != b"--"]
    if scope.checks_paths:
        rows = [row for row in rows if scope.allows(row[: row.find(b"\0")])]
    rows.sort(key=lambda row: row[: row.find(b"\0")])
    matches = sum(1 for row in rows if _MATCH_LINE.search(row))
    return rows, matches


def content_line(row: bytes, scope: SearchScope, numbers: bool) -> str:
    """`path:N:text` for a match, `path-N-text` for context, as rg shows them."""
    split = row.find(b"\0")
    path, rest = scope.shown(row[:split]), row[split + 1 :]
    if rest.startswith(b"\x01"):
        why = file_text.row_text(rest[1:])
        return f"{path}: binary file matches ({why}); its lines are not shown"
    digits = len(rest) - len(rest.lstrip(b"0123456789"))
    separator = chr(rest[digits]) if digits < len(rest) else ":"
    text = file_text.row_text(rest[digits + 1 :])
    if not numbers:
        return f"{path}{separator}{text}"
    return f"{path}{separator}{int(rest[:digits] or 0)}{separator}{text}"


def _binary_row(row: bytes) -> bytes:
    if b"\0" in row:
        return row
    found = _BINARY.fullmatch(row)
    return found.group(1) + b"\0\x01" + found.group(2) if found else row + b"\0\x01"


def file_rows(stdout: bytes, scope: SearchScope) -> list[bytes]:
    paths = [path for path in stdout.split(b"\0") if path]
    if scope.checks_paths:
        paths = [path for path in paths if scope.allows(path)]
    return paths


def newest_first(paths: Sequence[bytes], scope: SearchScope, wanted: int) -> list[bytes]:
    """The first `wanted` of `paths` by modification time, newest first (then by path)."""
    directory = os.open(scope.rg_cwd, os.O_RDONLY | os.O_DIRECTORY)
    try:
        keyed = [(_mtime(path, directory), path) for path in paths]
    finally:
        os.close(directory)
    best = heapq.nsmallest(wanted, keyed, key=lambda pair: (-pair[0], pair[1]))
    return [path for _, path in best]


def _mtime(path: bytes, directory: int) -> float:
    try:
        return os.stat(path, dir_fd=directory, follow_symlinks=False).st_mtime
    except OSError:  # removed since rg listed it
        return 0.0


def count_rows(stdout: bytes, scope: SearchScope) -> tuple[list[tuple[bytes, int]], int]:
    """(path, matching lines) sorted by path, and the sum of the counts."""
    counted: list[tuple[bytes, int]] = []
    for row in stdout.split(b"\n"):
        path, _, number = row.rpartition(b"\0")
        if path and (not scope.checks_paths or scope.allows(path)):
            counted.append((path, int(number)))
    counted.sort()
    return counted, sum(number for _, number in counted)


def paged(
    rows: Sequence[Row],
    render: Callable[[Row], str],
    *,
    offset: int,
    limit: int,
    budget: int,
    unit: str,
    total_note: str = "",
    total: int | None = None,
    first: int | None = None,
) -> ResultPage:
    """Rows offset..offset+limit rendered within `budget` characters, and a footer saying
    what was shown of how many and the offset for the rest. `first` is where the page
    starts in `rows` when they hold only the leading rows of `total` (default: `offset`)."""
    total = len(rows) if total is None else total
    start = offset if first is None else first
    if offset >= total and total:
        return ResultPage([], f"[offset {offset} is past the end: {total:,} {unit}{total_note}]")
    lines: list[str] = []
    used = 0
    for row in rows[start : start + limit]:
        line = render(row)
        if lines and used + len(line) + 1 > budget:
            break
        lines.append(line)
        used += len(line) + 1
    end = offset + len(lines)
    if offset == 0 and end == total:
        return ResultPage(lines, f"[{total:,} {unit}{total_note}]" if total_note else "")
    more = f"; offset={end} for more" if end < total else ""
    shown = f"{offset + 1:,}-{end:,}" if offset else f"{end:,}"
    return ResultPage(lines, f"[{shown} of {total:,} {unit}{total_note}{more}]")


def display(page: ResultPage) -> str:
    return "\n".join([*page.lines, page.footer] if page.footer else page.lines)
