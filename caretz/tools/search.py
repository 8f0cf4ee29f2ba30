"""Search tools: glob (find files by name) and grep (find lines by regex).

With a sandbox, the search root is checked like any read, and the walk skips what the
sandbox hides (credential stores, caretz's own dirs, /proc) without saying it exists.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.messages import ToolSpec
from caretz.permissions.paths import glob_to_regex
from caretz.tools.base import Param, ToolArgumentError, ToolContext, ToolResult, object_schema
from caretz.tools.files import BINARY_SNIFF_BYTES, checked_path, display_path, looks_binary

if TYPE_CHECKING:
    from caretz.sandbox.paths import PathGuard

SKIPPED_DIRS = frozenset({".git", ".venv", "node_modules", "__pycache__"})
GLOB_MAX_FILES = 200
GREP_DEFAULT_MAX_RESULTS = 200
GREP_MAX_LINE_CHARS = 500


def walk_files(root: Path, guard: PathGuard | None = None) -> Iterator[Path]:
    """Files under root in sorted order, never descending into SKIPPED_DIRS nor, with a
    guard, into what it does not let the file tools read. Symlinked dirs are not followed."""
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(
            name for name in dirnames if name not in SKIPPED_DIRS and _readable(guard, here / name)
        )
        for name in sorted(filenames):
            if _readable(guard, here / name):
                yield here / name


def _readable(guard: PathGuard | None, path: Path) -> bool:
    # The walk starts at a resolved root and follows no link, so only a link needs resolving.
    return guard is None or guard.readable(path, resolved=not path.is_symlink())


def _search_root(ctx: ToolContext, args: dict[str, Any]) -> Path:
    """The directory or file to search, checked like a read; raises PathRefused."""
    raw = args.get("path") or os.path.normpath(ctx.workspace)
    return checked_path(ctx, raw).real


def _guard(ctx: ToolContext) -> PathGuard | None:
    return ctx.sandbox.paths if ctx.sandbox is not None else None


class GlobTool:
    effect = "read"  # for the permission check (tools/base.py)
    spec = ToolSpec(
        name="glob",
        description=(
            "Find files by name pattern, e.g. `**/*.py` or `src/**/test_*.{py,txt}`. "
            "`**` matches any number of directories, `*` matches within one directory "
            "name. Returns workspace-relative paths, most recently modified first, at most "
            f"{GLOB_MAX_FILES}. Skips {', '.join(sorted(SKIPPED_DIRS))}."
        ),
        parameters=object_schema(
            pattern=Param("string", "Glob pattern, e.g. **/*.py", required=True),
            path=Param("string", "Directory to search in (default: the workspace)."),
        ),
    )

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern: str = args["pattern"]
        if not pattern.strip():
            raise ToolArgumentError("pattern is empty; give a glob such as **/*.py")
        if pattern.startswith("/"):
            raise ToolArgumentError(
                "pattern must be relative; put the directory in path and the glob in pattern"
            )
        root = _search_root(ctx, args)
        if not root.is_dir():
            return ToolResult(ok=False, output=f"Not a directory: {display_path(ctx, root)}")
        matcher = glob_to_regex(pattern.removeprefix("./"))
        rules = RuleFilter(ctx, "glob")
        found = [
            path
            for path in walk_files(root, _guard(ctx))
            if matcher.match(path.relative_to(root).as_posix()) and rules.allows(path)
        ]
        if not found:
            where = display_path(ctx, root)
            return rules.noted(ToolResult(ok=True, output=f"No files match {pattern} in {where}"))
        found.sort(key=lambda path: (-_mtime(path), str(path)))
        lines = [display_path(ctx, path) for path in found[:GLOB_MAX_FILES]]
        if len(found) > GLOB_MAX_FILES:
            lines.append(
                f"[{len(found) - GLOB_MAX_FILES} more files not shown; narrow the pattern or path]"
            )
        return rules.noted(ToolResult(ok=True, output="\n".join(lines)))


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # a dangling symlink or a file removed mid-walk
        return 0.0


class GrepTool:
    effect = "read"  # for the permission check (tools/base.py)
    spec = ToolSpec(
        name="grep",
        description=(
            "Search file contents with a Python regular expression. Returns matching lines "
            "as `path:line: text`. path may be a file or a directory (default: the "
            "workspace); glob filters file names (e.g. `*.py`, or `src/**/*.ts` to match "
            "paths). Binary files and "
            f"{', '.join(sorted(SKIPPED_DIRS))} are skipped. At most max_results lines "
            f"(default {GREP_DEFAULT_MAX_RESULTS})."
        ),
        parameters=object_schema(
            pattern=Param("string", "Python regular expression.", required=True),
            path=Param("string", "File or directory to search."),
            glob=Param("string", "Only search files matching this."),
            case_insensitive=Param("boolean", "Ignore case (default false)."),
            max_results=Param("integer", "Most lines to return (default 200)."),
        ),
    )

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        flags = re.IGNORECASE if args.get("case_insensitive") else 0
        try:
            regex = re.compile(args["pattern"], flags)
        except re.error as error:
            return ToolResult(ok=False, output=f"Invalid regex {args['pattern']!r}: {error}")
        max_results: int = args.get("max_results", GREP_DEFAULT_MAX_RESULTS)
        if max_results < 1:
            raise ToolArgumentError(f"max_results must be 1 or more, got {max_results}")
        root = _search_root(ctx, args)
        if not root.exists():
            return ToolResult(ok=False, output=f"Path not found: {display_path(ctx, root)}")
        rules = RuleFilter(ctx, "grep")
        candidates = _grep_candidates(root, args.get("glob"), _guard(ctx))
        files = (path for path in candidates if rules.allows(path))
        return rules.noted(_collect_matches(ctx, regex, files, max_results))


class RuleFilter:
    """The files a search skips because a Read deny or ask rule covers them (counted)."""

    def __init__(self, ctx: ToolContext, tool: str):
        self.ctx = ctx
        self.tool = tool
        rules = ctx.rules
        self.active = rules is not None and any(
            rule.behavior != "allow" and rule.covers(tool) for rule in rules.rules
        )
        self.skipped = 0

    def allows(self, path: Path) -> bool:
        if not self.active or self.ctx.rules is None:
            return True
        decision = self.ctx.rules.check_path(self.tool, os.fspath(path), self.ctx.workspace)
        if decision.outcome in ("deny", "ask"):
            self.skipped += 1
            return False
        return True

    def noted(self, result: ToolResult) -> ToolResult:
        if self.skipped:
            files = "file" if self.skipped == 1 else "files"
            result.output += f"\n[{self.skipped} {files} skipped: the user's Read rules cover them]"
        return result


def _grep_candidates(root: Path, glob: str | None, guard: PathGuard | None) -> Iterator[Path]:
    if root.is_file():
        yield root
        return
    matcher = glob_to_regex(glob) if glob else None
    # A glob with a slash matches the path below root; a bare one the file name.
    whole_path = glob is not None and "/" in glob
    for path in walk_files(root, guard):
        subject = path.relative_to(root).as_posix() if whole_path else path.name
        if matcher is None or matcher.match(subject):
            yield path


def _collect_matches(
    ctx: ToolContext, regex: re.Pattern[str], files: Iterator[Path], max_results: int
) -> ToolResult:
    lines: list[str] = []
    used = 0
    for path in files:
        shown = display_path(ctx, path)
        for number, text in _matching_lines(path, regex):
            if len(text) > GREP_MAX_LINE_CHARS:
                text = text[:GREP_MAX_LINE_CHARS] + " [...]"
            row = f"{shown}:{number}: {text}"
            if len(lines) >= max_results or used + len(row) > ctx.output_limit_chars:
                lines.append(f"[stopped after {len(lines)} matches; narrow the pattern or path]")
                return ToolResult(ok=True, output="\n".join(lines))
            lines.append(row)
            used += len(row) + 1
    if not lines:
        return ToolResult(ok=True, output=f"No matches for {regex.pattern!r}")
    return ToolResult(ok=True, output="\n".join(lines))


def _matching_lines(path: Path, regex: re.Pattern[str]) -> Iterator[tuple[int, str]]:
    try:
        with path.open("rb") as handle:
            if looks_binary(handle.read(BINARY_SNIFF_BYTES)):
                return
            handle.seek(0)
            for number, raw in enumerate(handle, start=1):
                text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                if regex.search(text):
                    yield number, text
    except OSError:  # unreadable (permissions, a special file): skip like grep -s
        return
