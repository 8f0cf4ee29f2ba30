"""File tools: read and write files in the workspace (edit and multi_edit: edit_tool.py).

The sandbox around shell commands does not cover these tools, which run inside caretz,
so every path is checked by the session's PathGuard and opened race-free
(tools/file_access.py): what was checked is what gets read or written. A refusal is a
failed result of one line. Each agent's tools share one `FileReads`
(tools/file_reads.py): an existing file is written only once it was read, and not when
it changed on disk since.
"""

from __future__ import annotations

import difflib
import os
from typing import Any

from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import ToolSpec
from caretz.tools.base import Param, ToolArgumentError, ToolContext, ToolResult, object_schema
from caretz.tools.file_access import (  # noqa: F401 (the search tools' helpers, re-exported)
    BINARY_SNIFF_BYTES,
    FileProblem,
    checked_path,
    display_path,
    encode,
    load,
    looks_binary,
    open_file,
    reports_file_problems,
    resolve_path,
    store,
)
from caretz.tools.file_reads import KEEP_TEXT_BYTES, FileReads

# OpenSSL's digests: loaded at the first file read, not at start.
hashlib = lazy_module("hashlib")
# The image readers: loaded with the first file read.
image_reading = lazy_module("caretz.tools.images")

READ_DEFAULT_LIMIT = 2000
READ_MAX_LINE_CHARS = 2000
# A read's output stops here even within its line limit (about 32k tokens).
READ_CHAR_BUDGET = 128_000
# Past the lines shown, a read counts the file's lines for this many more bytes.
READ_COUNT_BYTES = 256 << 20
WRITE_MAX_BYTES = 64 << 20
_CHUNK = 1 << 20


def count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def unified_diff(before: str, after: str, shown: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{shown}",
        tofile=f"b/{shown}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _failed(output: str) -> ToolResult:
    return ToolResult(ok=False, output=output)


def _positive_int(args: dict[str, Any], name: str, default: int) -> int:
    value = args.get(name, default)
    if value < 1:
        raise ToolArgumentError(f"{name} must be 1 or more, got {value}")
    return value


class ReadTool:
    effect = "read"  # for the permission check (tools/base.py)
    spec = ToolSpec(
        name="read",
        description=(
            "Read a text file. Lines come numbered like `cat -n` (number, tab, text); "
            "the numbers are not part of the file. Reads up to 2000 lines from `offset` "
            "(1-based); a last line says which lines of how many were shown and the "
            "offset to read on from. Lines over 2000 characters are cut. Paths are "
            "relative to the workspace or absolute. Read a file before editing it. "
            "An image file (PNG, JPEG, GIF, WebP) comes back as the image itself, "
            "scaled down to at most 1568 pixels a side."
        ),
        parameters=object_schema(
            path=Param("string", "File to read.", required=True),
            offset=Param("integer", "First line to show, 1-based (default 1)."),
            limit=Param("integer", "How many lines to show (default 2000)."),
        ),
    )

    def __init__(self, reads: FileReads | None = None):
        self.reads = reads

    @reports_file_problems
    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        offset = _positive_int(args, "offset", 1)
        limit = min(_positive_int(args, "limit", READ_DEFAULT_LIMIT), READ_DEFAULT_LIMIT)
        checked, fd, stat = open_file(ctx, args["path"])
        shown = display_path(ctx, checked.path)
        if fd is None or stat is None:
            return _failed(f"File not found: {shown}")
        try:
            if image_reading.starts_like_image(fd):
                fitted = image_reading.fitted_from_fd(fd, stat.st_size, shown)
                return image_reading.image_result(ctx, fitted)
            window = _read_window(fd, offset, limit, max(READ_CHAR_BUDGET, ctx.output_limit_chars))
        except OSError as error:
            return _failed(f"Cannot read {shown}: {error.strerror or error}")
        finally:
            os.close(fd)
        if window.binary:
            return _failed(f"{shown} looks like a binary file (it contains NUL bytes); not shown")
        if self.reads is not None and window.counted_all:
            if window.data is not None:
                self.reads.remember(checked.real, window.data)
            else:
                self.reads.remember_digest(checked.real, window.digest)
        if window.total == 0:
            return ToolResult(ok=True, output=f"({shown} is empty)")
        if not window.rows:
            return _failed(f"offset {offset} is past the end of {shown} ({window.total} lines)")
        return ToolResult(ok=True, output="\n".join([*window.rows, *window.tail(offset)]))


@lazy_dataclass
class _Window:
    rows: list[str]
    total: int  # lines counted (all of them when counted_all)
    counted_all: bool
    cut_by_budget: bool
    budget: int
    digest: str
    data: bytes | None  # the whole file, when small enough to remember its text
    binary: bool = False

    def tail(self, offset: int) -> list[str]:
        last = offset + len(self.rows) - 1
        if last >= self.total and self.counted_all:
            return [] if offset == 1 else [f"[lines {offset}–{last} of {self.total}; the end]"]
        of = f"{self.total}" if self.counted_all else f"at least {self.total}"
        why = f" (the output limit of {self.budget:,} characters)" if self.cut_by_budget else ""
        return [f"[lines {offset}–{last} of {of}{why}; offset={last + 1} for more]"]


def _read_window(fd: int, offset: int, limit: int, budget: int) -> _Window:
    """Lines offset..offset+limit-1 of the file, numbered, within `budget` characters;
    the file's line count and digest, from one pass over it in bounded memory."""
    digest = hashlib.sha256()
    kept: list[bytes] | None = []
    rows: list[str] = []
    used, number, counted_bytes = 0, 0, 0
    cut_by_budget, head_checked = False, False
    line = bytearray()  # the current line (its first bytes, for a line in the window)
    line_bytes = 0
    while True:
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            break
        if not head_checked:
            head_checked = True
            if b"\0" in chunk[:BINARY_SNIFF_BYTES]:
                return _Window([], 0, False, False, budget, "", None, binary=True)
        digest.update(chunk)
        if kept is not None:
            kept.append(chunk)
            if sum(map(len, kept)) > KEEP_TEXT_BYTES:
                kept = None
        pieces = chunk.split(b"\n")
        for index, piece in enumerate(pieces):
            in_window = not cut_by_budget and offset <= number + 1 < offset + limit
            if in_window and len(line) < READ_MAX_LINE_CHARS * 4:
                line += piece[: READ_MAX_LINE_CHARS * 4 - len(line)]
            line_bytes += len(piece)
            if index == len(pieces) - 1:
                break  # the line goes on in the next chunk
            number += 1
            if in_window:
                row = _row(number, bytes(line), line_bytes)
                if rows and used + len(row) + 1 > budget:
                    cut_by_budget = True
                else:
                    rows.append(row)
                    used += len(row) + 1
            line.clear()
            line_bytes = 0
        if number >= offset + limit or cut_by_budget:
            counted_bytes += len(chunk)
            if counted_bytes > READ_COUNT_BYTES:
                return _Window(rows, number, False, cut_by_budget, budget, "", None)
    if line_bytes:  # a last line without a newline
        number += 1
        if not cut_by_budget and offset <= number < offset + limit:
            row = _row(number, bytes(line), line_bytes)
            if rows and used + len(row) + 1 > budget:
                cut_by_budget = True
            else:
                rows.append(row)
    data = b"".join(kept) if kept is not None else None
    return _Window(rows, number, True, cut_by_budget, budget, digest.hexdigest(), data)


def _row(number: int, raw: bytes, size: int) -> str:
    text = raw.decode("utf-8", "replace").removesuffix("\r")
    more = len(text) - READ_MAX_LINE_CHARS
    if size > len(raw):
        more += size - len(raw)  # bytes never decoded: about as many characters
    if more > 0:
        text = f"{text[:READ_MAX_LINE_CHARS]} [... {more} more characters on this line]"
    return f"{number:>6}\t{text}"


class WriteTool:
    effect = "edit"  # for the permission check (tools/base.py)
    spec = ToolSpec(
        name="write",
        description=(
            "Write a whole file: creates it (and missing parent directories) or replaces "
            "its entire content. To change part of an existing file, use edit instead; "
            "an existing file must be read first. "
            "Paths are relative to the workspace or absolute."
        ),
        parameters=object_schema(
            path=Param("string", "File to write.", required=True),
            content=Param("string", "The complete new content.", required=True),
        ),
    )

    def __init__(self, reads: FileReads | None = None):
        self.reads = reads

    @reports_file_problems
    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        content: str = args["content"]
        data = encode(content)
        current = load(ctx, args["path"], write=True, max_bytes=WRITE_MAX_BYTES)
        shown = current.shown
        if current.data is not None and self.reads is not None:
            refusal = self.reads.refusal(current.checked.real, shown, current.data, "write")
            if refusal:
                return _failed(refusal)
        store(ctx, current, data)
        if self.reads is not None:
            self.reads.remember(current.checked.real, data)
        before = current.data
        diff = None
        if before is not None and not looks_binary(before):
            diff = unified_diff(before.decode("utf-8", "surrogateescape"), content, shown) or None
        return ToolResult(
            ok=True,
            output=f"Wrote {plural(count_lines(content), 'line')} to {shown}",
            files_changed=[shown],
            diff=diff,
        )
