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
from typing import TYPE_CHECKING, Any

from caretz.lazy import lazy_module
from caretz.messages import ToolSpec
from caretz.tools import documents, file_text
from caretz.tools.base import Param, ToolArgumentError, ToolContext, ToolResult, object_schema
from caretz.tools.file_access import (  # noqa: F401 (the search tools' helpers, re-exported)
    FileProblem,
    checked_path,
    display_path,
    load,
    open_file,
    reports_file_problems,
    resolve_path,
    store,
)
from caretz.tools.file_reads import FileReads
from caretz.tools.read_window import FilePieces, Window, window

if TYPE_CHECKING:
    from caretz.tools import images as image_reading
else:
    # The image readers: loaded with the first file read.
    image_reading = lazy_module("caretz.tools.images")

READ_DEFAULT_LIMIT = 2000
WRITE_MAX_BYTES = 64 << 20


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
    value: int = args.get(name, default)
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
            "scaled down to at most 1568 pixels a side; a PDF as its pages' text; a "
            "Jupyter notebook (.ipynb) as its cells with their outputs."
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
            if documents.kind_of(fd, shown) is not None:
                result, data = documents.read_document(fd, stat.st_size, shown, offset, limit, ctx)
                if self.reads is not None:
                    self.reads.remember(checked.real, data)  # a notebook's JSON may be edited
                return result
            pieces = FilePieces(fd)
            seen = window(pieces, offset, limit, ctx.output_limit_chars)
        except file_text.NotText:
            return _failed(f"{shown} looks like a binary file (it contains NUL bytes); not shown")
        except OSError as error:
            return _failed(f"Cannot read {shown}: {error.strerror or error}")
        finally:
            os.close(fd)
        if self.reads is not None and pieces.done:
            if pieces.data is not None:
                self.reads.remember(checked.real, pieces.data)
            else:
                self.reads.remember_digest(checked.real, pieces.digest)
        return _window_result(seen, offset, shown, pieces.encoding)


def _window_result(
    seen: Window, offset: int, shown: str, encoding: file_text.Encoding
) -> ToolResult:
    if seen.total == 0:
        return ToolResult(ok=True, output=f"({shown} is empty)")
    if not seen.rows:
        return _failed(f"offset {offset} is past the end of {shown} ({seen.total} lines)")
    notes = [] if encoding.is_plain_utf8 else [f"[{encoding_note(shown, encoding)}]"]
    return ToolResult(ok=True, output="\n".join([*seen.rows, *seen.tail(offset), *notes]))


def encoding_note(shown: str, encoding: file_text.Encoding) -> str:
    return f"{shown} is {encoding.label} text; edit and write keep that encoding"


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
        current = load(ctx, args["path"], write=True, max_bytes=WRITE_MAX_BYTES)
        shown = current.shown
        if current.data is not None and self.reads is not None:
            refusal = self.reads.refusal(current.checked.real, shown, current.data, "write")
            if refusal:
                return _failed(refusal)
        before, encoding = _existing_text(current.data)
        if before is not None:
            content = file_text.with_newlines_of(content, before)
        data = file_text.encode(content, encoding, shown)
        store(ctx, current, data)
        if self.reads is not None:
            self.reads.remember(current.checked.real, data)
        diff = None
        if before is not None:
            diff = unified_diff(file_text.shown(before), content, shown) or None
        kept = "" if encoding.is_plain_utf8 else f" ({encoding.label}, as it was)"
        return ToolResult(
            ok=True,
            output=f"Wrote {plural(count_lines(content), 'line')} to {shown}{kept}",
            files_changed=[shown],
            diff=diff,
        )


def _existing_text(data: bytes | None) -> tuple[str | None, file_text.Encoding]:
    """The text a write replaces and the encoding the new text is written in: the old
    file's, or UTF-8 for a new file (or one that was binary)."""
    if data is None:
        return None, file_text.UTF8
    try:
        return file_text.decode(data)
    except file_text.NotText:
        return None, file_text.UTF8
