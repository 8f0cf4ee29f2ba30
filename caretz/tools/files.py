"""File tools: read, write and edit files in the workspace.

Also home to the path helpers the search tools share: how a path argument is
resolved against the workspace and checked against the sandbox's roots, how it is
shown back to the model, and what counts as a binary file.

The sandbox around shell commands does not cover these tools, which run inside
caretz, so every path goes through the session's PathGuard first (caretz.sandbox.paths):
a refusal is a failed result of one line, and the tools then open the path the guard
resolved, so what was checked is what gets read or written.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import Any

from caretz.messages import ToolSpec
from caretz.sandbox.paths import CheckedPath
from caretz.tools.base import Param, ToolArgumentError, ToolContext, ToolResult, object_schema

READ_DEFAULT_LIMIT = 2000
READ_MAX_LINE_CHARS = 2000
# Git's rule: a NUL byte in the first 8 KB means binary.
BINARY_SNIFF_BYTES = 8192


def resolve_path(ctx: ToolContext, raw: str) -> Path:
    """A path argument made absolute: relative paths start at the workspace."""
    if not raw.strip():
        raise ToolArgumentError("path is empty; give a file path relative to the workspace")
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = Path(ctx.workspace) / path
    # normpath folds "a/../b" without resolving symlinks, so shown paths stay the ones asked for.
    return Path(os.path.normpath(path))


def checked_path(ctx: ToolContext, raw: str, *, write: bool = False) -> CheckedPath:
    """A path argument, checked for reading (or writing) against the sandbox's roots.

    Raises PathRefused (a failed result for the model) when the sandbox does not allow
    it. Open `.real`, the path with every symlink resolved; show `.path`, as asked.
    Without a sandbox in the context, the path is only made absolute.
    """
    if not raw.strip():
        raise ToolArgumentError("path is empty; give a file path relative to the workspace")
    if ctx.sandbox is None:
        path = resolve_path(ctx, raw)
        return CheckedPath(raw, path, path)
    guard = ctx.sandbox.paths
    return guard.for_write(raw) if write else guard.for_read(raw)


def display_path(ctx: ToolContext, path: Path) -> str:
    """Workspace-relative (POSIX) when inside the workspace, else absolute."""
    workspace = Path(os.path.normpath(os.path.abspath(ctx.workspace)))
    for base in dict.fromkeys([workspace, Path(os.path.realpath(workspace))]):
        try:
            relative = path.relative_to(base)
        except ValueError:
            continue
        return relative.as_posix() or "."
    return str(path)


def looks_binary(head: bytes) -> bool:
    return b"\0" in head[:BINARY_SNIFF_BYTES]


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


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _failed(output: str) -> ToolResult:
    return ToolResult(ok=False, output=output)


def _os_failure(verb: str, shown: str, error: OSError) -> ToolResult:
    return _failed(f"Cannot {verb} {shown}: {error.strerror or error}")


def _load_text(path: Path, shown: str) -> str | ToolResult:
    """The file's text (undecodable bytes kept via surrogateescape), or a failed result."""
    if not path.exists():
        return _failed(f"File not found: {shown}")
    if path.is_dir():
        return _failed(f"{shown} is a directory, not a file; use glob to list its files")
    try:
        data = path.read_bytes()
    except OSError as error:
        return _os_failure("read", shown, error)
    if looks_binary(data):
        return _failed(f"{shown} looks like a binary file (it contains NUL bytes); not shown")
    return data.decode("utf-8", errors="surrogateescape")


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
            "(1-based), fewer when the output grows too long; a last line then says "
            "which offset to read on from. Lines over 2000 "
            "characters are cut. Paths are relative to the workspace or absolute. "
            "Read a file before editing it."
        ),
        parameters=object_schema(
            path=Param("string", "File to read.", required=True),
            offset=Param("integer", "First line to show, 1-based (default 1)."),
            limit=Param("integer", "How many lines to show (default 2000)."),
        ),
    )

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        checked = checked_path(ctx, args["path"])
        offset = _positive_int(args, "offset", 1)
        limit = _positive_int(args, "limit", READ_DEFAULT_LIMIT)
        shown = display_path(ctx, checked.path)
        loaded = _load_text(checked.real, shown)
        if isinstance(loaded, ToolResult):
            return loaded
        # Shown text marks undecodable bytes with U+FFFD instead of lone surrogates.
        shown_text = loaded.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        lines = _split_lines(shown_text)
        if not lines:
            return ToolResult(ok=True, output=f"({shown} is empty)")
        if offset > len(lines):
            return _failed(f"offset {offset} is past the end of {shown} ({len(lines)} lines)")
        return ToolResult(ok=True, output=_numbered(lines, offset, limit, ctx.output_limit_chars))


def _split_lines(text: str) -> list[str]:
    # Split on "\n" only (not str.splitlines) so numbers agree with editors and grep.
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _numbered(lines: list[str], offset: int, limit: int, char_budget: int) -> str:
    out: list[str] = []
    used = 0
    end = min(len(lines), offset - 1 + limit)
    number = offset
    while number <= end:
        line = lines[number - 1]
        if len(line) > READ_MAX_LINE_CHARS:
            cut = len(line) - READ_MAX_LINE_CHARS
            line = f"{line[:READ_MAX_LINE_CHARS]} [... {cut} more characters on this line]"
        row = f"{number:>6}\t{line}"
        if out and used + len(row) + 1 > char_budget:
            break
        out.append(row)
        used += len(row) + 1
        number += 1
    remaining = len(lines) - (number - 1)
    if remaining > 0:
        out.append(f"[{remaining} more lines; use offset={number} to read on]")
    return "\n".join(out)


class WriteTool:
    effect = "edit"  # for the permission check (tools/base.py)
    spec = ToolSpec(
        name="write",
        description=(
            "Write a whole file: creates it (and missing parent directories) or replaces "
            "its entire content. To change part of an existing file, use edit instead. "
            "Paths are relative to the workspace or absolute."
        ),
        parameters=object_schema(
            path=Param("string", "File to write.", required=True),
            content=Param("string", "The complete new content.", required=True),
        ),
    )

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        checked = checked_path(ctx, args["path"], write=True)
        path = checked.real
        content: str = args["content"]
        shown = display_path(ctx, checked.path)
        if path.is_dir():
            return _failed(f"{shown} is a directory; give a file path")
        try:
            before = _previous_text(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_bytes(ctx, path, content.encode("utf-8", errors="surrogateescape"))
        except OSError as error:
            return _os_failure("write", shown, error)
        diff = unified_diff(before, content, shown) if before is not None else None
        return ToolResult(
            ok=True,
            output=f"Wrote {_plural(count_lines(content), 'line')} to {shown}",
            files_changed=[shown],
            diff=diff or None,
        )


def _write_bytes(ctx: ToolContext, path: Path, data: bytes) -> None:
    """Write `data` to `path`. A checked path is already resolved, so a symlink found in
    its place now was put there since the check: refuse to follow it (ELOOP)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
    if ctx.sandbox is not None:
        flags |= os.O_NOFOLLOW
    with os.fdopen(os.open(path, flags, 0o666), "wb") as handle:
        handle.write(data)


def _previous_text(path: Path) -> str | None:
    if not path.is_file():
        return None
    data = path.read_bytes()
    return None if looks_binary(data) else data.decode("utf-8", errors="surrogateescape")


class EditTool:
    effect = "edit"  # for the permission check (tools/base.py)
    spec = ToolSpec(
        name="edit",
        description=(
            "Replace exact text in a file. old_string must match the file exactly, "
            "including indentation and line breaks, and must match exactly once unless "
            "replace_all is true; if it matches several places, include more surrounding "
            "lines to make it unique. new_string replaces it (may be empty to delete). "
            "Read the file first and copy the text without the line-number prefix."
        ),
        parameters=object_schema(
            path=Param("string", "File to edit.", required=True),
            old_string=Param("string", "Exact text to replace.", required=True),
            new_string=Param("string", "Replacement text.", required=True),
            replace_all=Param(
                "boolean", "Replace every match instead of exactly one (default false)."
            ),
        ),
    )

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        checked = checked_path(ctx, args["path"], write=True)
        path = checked.real
        old: str = args["old_string"]
        new: str = args["new_string"]
        replace_all: bool = args.get("replace_all", False)
        if old == new:
            return _failed("old_string and new_string are the same; nothing to change")
        if not old:
            return _failed("old_string is empty; give the exact text to replace")
        shown = display_path(ctx, checked.path)
        loaded = _load_text(path, shown)
        if isinstance(loaded, ToolResult):
            return loaded
        text = loaded
        old, new = _match_line_endings(text, old, new)
        count = text.count(old)
        if count == 0:
            return _failed(f"old_string not found in {shown}{_whitespace_hint(text, old)}")
        if count > 1 and not replace_all:
            return _failed(
                f"old_string matches {count} places in {shown}; "
                "include more surrounding context or set replace_all"
            )
        updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        try:
            _write_bytes(ctx, path, updated.encode("utf-8", errors="surrogateescape"))
        except OSError as error:
            return _os_failure("write", shown, error)
        return ToolResult(
            ok=True,
            output=f"Edited {shown}: {_plural(count, 'replacement')}",
            files_changed=[shown],
            diff=unified_diff(text, updated, shown),
        )


def _match_line_endings(text: str, old: str, new: str) -> tuple[str, str]:
    """In a CRLF file, let "\\n" in the strings stand for the file's "\\r\\n"."""
    if "\r\n" in text and "\r" not in old and "\n" in old and old not in text:
        return old.replace("\n", "\r\n"), new.replace("\r\n", "\n").replace("\n", "\r\n")
    return old, new


def _squash_whitespace(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _whitespace_hint(text: str, old: str) -> str:
    squashed = _squash_whitespace(old)
    if squashed and squashed in _squash_whitespace(text):
        return (
            " (it does match if whitespace is ignored: check indentation, tabs versus "
            "spaces and line breaks; read the file again and copy the text exactly)"
        )
    return ""
