"""Search tools on ripgrep: glob (find files by name) and grep (find lines by regex).

Both run the rg that ships with caretz (caretz.tools.ripgrep) with rg's own rules for what
a search skips: .gitignore, .ignore and hidden files, unless `include_ignored`. What the
sandbox hides is passed to rg as excludes, and only the paths rg returns are checked
(caretz.tools.search_scope). Results come in a stable order, paged with `head_limit` and
`offset`, and the last line says the total and where the next page starts.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from caretz.messages import ToolSpec
from caretz.tools.base import Param, ToolArgumentError, ToolContext, ToolResult, object_schema
from caretz.tools.file_access import anchors
from caretz.tools.ripgrep import RgRun, RipgrepMissing, run_rg
from caretz.tools.search_lines import LongLines, render_row
from caretz.tools.search_results import (
    content_rows,
    count_rows,
    display,
    file_rows,
    newest_first,
    paged,
)
from caretz.tools.search_scope import ScopeError, SearchScope, rg_place, search_scope

SEARCH_TIMEOUT_S = 30.0
GREP_DEFAULT_LIMIT = 200
GLOB_DEFAULT_LIMIT = 100
MAX_LINE_CHARS = 500
CONTEXT_MAX = 50
MODES = ("content", "files_with_matches", "count")
_TYPE = "caretzglob"  # the rg file type a name glob becomes
_IGNORED = "files .gitignore/.ignore leave out and hidden files were not searched"

_PAGING = {
    "head_limit": Param("integer", "Most results to return."),
    "offset": Param("integer", "Results to skip, to page on (default 0)."),
    "include_ignored": Param(
        "boolean", "Also search files .gitignore/.ignore leave out and hidden (dot) files."
    ),
}

_LAUNCHERS = ("bwrap: ", "nsenter: ")  # what the sandbox says when it cannot start rg


class _RgTool:
    """What grep and glob share: the rg binary, the timeout, paging arguments."""

    name = ""

    def __init__(self, timeout_s: float = SEARCH_TIMEOUT_S, rg: Path | None = None):
        self.timeout_s = timeout_s
        self.rg = rg  # None: the installed one

    def _search(
        self, rg_args: list[str], scope: SearchScope, ctx: ToolContext
    ) -> RgRun | ToolResult:
        try:
            with rg_place(scope, ctx) as (cwd, target, fds, sandbox):
                ran = run_rg(
                    [*rg_args, *scope.rg_args(), "--", target],
                    cwd,
                    timeout_s=self.timeout_s,
                    cancel=ctx.cancel,
                    rg=self.rg,
                    pass_fds=fds,
                    sandbox=sandbox,
                )
        except RipgrepMissing as missing:
            return ToolResult(ok=False, output=str(missing))
        except ScopeError as error:
            return ToolResult(ok=False, output=str(error))
        if ran.ended_by is None and ran.stderr.startswith(_LAUNCHERS) and not ran.stdout:
            # The sandbox failed to start rg: no search ran, which is not "no matches".
            why = _first_lines(ran.stderr)
            return ToolResult(ok=False, output=f"{self.name} could not run in the sandbox: {why}")
        if ran.ended_by is None and ran.returncode == 2 and not ran.stdout:
            return ToolResult(ok=False, output=f"{self.name} failed: {_first_lines(ran.stderr)}")
        return ran

    def _scope(
        self, ctx: ToolContext, args: dict[str, Any], glob: str | None
    ) -> tuple[SearchScope, str | None] | ToolResult:
        """The search's scope and the part of `glob` left to match below its root: a glob's
        leading directories (`drivers/net` of `drivers/net/**/*.c`) become the root, so rg
        walks only them and the glob's ignore-rule-keeping forms (a type, the path match)
        apply to the rest."""
        files_only = self.name == "glob"
        try:
            scope = search_scope(ctx, args.get("path"), self.name, files_only=files_only)
            directories, rest = _split_glob(glob or "")
            if directories and scope.target == ".":
                below = os.path.join(args.get("path") or ".", directories)
                return search_scope(ctx, below, self.name, files_only=files_only), rest
        except ScopeError as error:
            return ToolResult(ok=False, output=str(error))
        return scope, glob

    def _rg_once(self, ctx: ToolContext) -> Callable[[list[str], tuple[int, ...]], RgRun]:
        """One more rg run of this search (for a long line's match), on passed fds."""

        def run(args: list[str], fds: tuple[int, ...]) -> RgRun:
            return run_rg(
                args, "/", timeout_s=self.timeout_s, cancel=ctx.cancel, rg=self.rg, pass_fds=fds
            )

        return run


def _paging(args: dict[str, Any], default: int) -> tuple[int, int]:
    limit, offset = args.get("head_limit", default), args.get("offset", 0)
    if limit < 1:
        raise ToolArgumentError(f"head_limit must be 1 or more, got {limit}")
    if offset < 0:
        raise ToolArgumentError(f"offset must be 0 or more, got {offset}")
    return limit, offset


def _split_glob(glob: str) -> tuple[str, str]:
    """A glob's leading directories that hold no wildcard, and the rest of it."""
    parts = glob.removeprefix("./").split("/")
    plain = 0
    while plain < len(parts) - 1 and _is_plain_name(parts[plain]):
        plain += 1
    return "/".join(parts[:plain]), "/".join(parts[plain:])


def _is_plain_name(part: str) -> bool:
    return part not in ("", ".", "..") and not any(ch in part for ch in "\\*?[]{}!")


def _ignore_args(args: dict[str, Any]) -> list[str]:
    # .git is never worth searching, and with hidden files on rg would walk it.
    return ["--no-ignore", "--hidden", "-g", "!.git"] if args.get("include_ignored") else []


def _notes(ran: RgRun, timeout_s: float) -> list[str]:
    notes = []
    if ran.ended_by == "timeout":
        notes.append(
            f"[search timed out after {timeout_s:g} s: the results are incomplete; "
            "narrow path, glob or pattern]"
        )
    elif ran.ended_by == "cancelled":
        notes.append("[search cancelled: the results are incomplete]")
    if ran.returncode == 2 and ran.stderr.strip():
        notes.append(f"[some files could not be searched: {_first_lines(ran.stderr, 1)}]")
    return notes


def _whole(stdout: bytes, ran: RgRun, separator: bytes) -> bytes:
    """A search that was stopped may end mid-row: that row is dropped."""
    if ran.ended_by is None or stdout.endswith(separator):
        return stdout
    return stdout[: stdout.rfind(separator) + 1]


def _first_lines(text: str, most: int = 6) -> str:
    lines = [line.removeprefix("rg: ") for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[:most]) or "rg failed"


def _result(text: str, notes: list[str], scope: SearchScope) -> ToolResult:
    return ToolResult(ok=True, output="\n".join([scope.noted(text), *notes]).strip())


class GlobTool(_RgTool):
    effect = "read"  # for the permission check (tools/base.py)
    name = "glob"
    spec = ToolSpec(
        name="glob",
        description=(
            "Find files by glob, e.g. `**/*.py` or `src/**/test_*.{ts,tsx}`, matched against "
            "the path below `path` (`*` stays within one directory). Newest first. Skips what "
            ".gitignore/.ignore leave out and hidden files unless include_ignored."
        ),
        parameters=object_schema(
            pattern=Param("string", "The glob.", required=True),
            path=Param("string", "Directory to search (default: the workspace)."),
            **_PAGING,
        ),
    )

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern: str = args["pattern"].strip()
        if not pattern:
            raise ToolArgumentError("pattern is empty; give a glob such as **/*.py")
        if pattern.startswith("/"):
            raise ToolArgumentError(
                "pattern must be relative; put the directory in path and the glob in pattern"
            )
        limit, offset = _paging(args, GLOB_DEFAULT_LIMIT)
        scoped = self._scope(ctx, args, pattern)
        if isinstance(scoped, ToolResult):
            return scoped
        scope, scoped_pattern = scoped
        assert scoped_pattern is not None
        pattern = scoped_pattern
        ran = self._search(
            ["--files", "--null", *_ignore_args(args), *_glob_args(pattern, scope, args)],
            scope,
            ctx,
        )
        if isinstance(ran, ToolResult):
            return ran
        paths = file_rows(_whole(ran.stdout, ran, b"\0"), scope)
        notes = _notes(ran, self.timeout_s)
        if not paths:
            hint = "" if args.get("include_ignored") else f" ({_IGNORED})"
            where = scope.shown_prefix.rstrip("/") or "the workspace"
            return _result(f"No files match {pattern} in {where}{hint}", notes, scope)
        leading = newest_first(paths, scope, offset + limit)
        page = paged(
            leading,
            scope.shown,
            offset=offset,
            limit=limit,
            budget=ctx.output_limit_chars,
            unit="files",
            total=len(paths),
        )
        return _result(display(page), notes, scope)


class GrepTool(_RgTool):
    effect = "read"  # for the permission check (tools/base.py)
    name = "grep"
    spec = ToolSpec(
        name="grep",
        description=(
            "Search file contents with ripgrep (Rust regex; lookaround works). "
            "output_mode: content (default; `path:line:text`), files_with_matches (newest "
            "first) or count. Skips binary files, what .gitignore/.ignore leave out and hidden "
            "files unless include_ignored. Paged: the last line gives the total and next offset."
        ),
        parameters=object_schema(
            pattern=Param("string", "The regular expression.", required=True),
            path=Param("string", "File or directory to search (default: the workspace)."),
            glob=Param("string", "Only files matching this glob, e.g. *.py or src/**/*.ts."),
            type=Param("string", "Only files of this rg type, e.g. py, js, rust."),
            output_mode=Param("string", "content, files_with_matches or count."),
            **{
                "-i": Param("boolean", "Ignore case."),
                "-n": Param("boolean", "Line numbers in content (default true)."),
                "-A": Param("integer", "Lines of context after each match."),
                "-B": Param("integer", "Lines of context before each match."),
                "-C": Param("integer", "Lines of context around each match."),
            },
            multiline=Param("boolean", "Let the pattern span lines (. matches newlines)."),
            **_PAGING,
        ),
    )

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        mode = args.get("output_mode", "content")
        if mode not in MODES:
            raise ToolArgumentError(f"output_mode must be one of {', '.join(MODES)}, got {mode!r}")
        limit, offset = _paging(args, GREP_DEFAULT_LIMIT)
        scoped = self._scope(ctx, args, args.get("glob"))
        if isinstance(scoped, ToolResult):
            return scoped
        scope, glob = scoped
        rg_args = [*_filters(args, scope, glob), *_ignore_args(args), *_pattern_args(args)]
        if mode == "files_with_matches":
            rg_args = ["--files-with-matches", "--null", *rg_args]
        elif mode == "count":
            rg_args = ["--count", "--null", "--with-filename", *rg_args]
        else:
            rg_args = [*_content_args(args), *rg_args]
        ran = self._search(rg_args, scope, ctx)
        if isinstance(ran, ToolResult):
            return ran
        separator = b"\0" if mode == "files_with_matches" else b"\n"
        stdout = _whole(ran.stdout, ran, separator)
        page = self._page(mode, stdout, scope, args, ctx, limit, offset)
        if page is None:
            hint = "" if args.get("include_ignored") else f" ({_IGNORED})"
            text = f"No matches for {args['pattern']!r}{hint}"
            return _result(text, _notes(ran, self.timeout_s), scope)
        return _result(page, _notes(ran, self.timeout_s), scope)

    def _page(
        self,
        mode: str,
        stdout: bytes,
        scope: SearchScope,
        args: dict[str, Any],
        ctx: ToolContext,
        limit: int,
        offset: int,
    ) -> str | None:
        budget = ctx.output_limit_chars
        if mode == "files_with_matches":
            paths = file_rows(stdout, scope)
            if not paths:
                return None
            leading = newest_first(paths, scope, offset + limit)
            return display(
                paged(
                    leading,
                    scope.shown,
                    offset=offset,
                    limit=limit,
                    budget=budget,
                    unit="files",
                    total=len(paths),
                )
            )
        if mode == "count":
            counted, matches = count_rows(stdout, scope)
            if not counted:
                return None
            return display(
                paged(
                    counted,
                    lambda row: f"{scope.shown(row[0])}:{row[1]}",
                    offset=offset,
                    limit=limit,
                    budget=budget,
                    unit="files",
                    total_note=f", {matches:,} matching lines",
                )
            )
        rows, matches = content_rows(stdout, scope)
        if not rows:
            return None
        numbers = args.get("-n", True)
        context = len(rows) != matches
        long = LongLines(_pattern_args(args), anchors(ctx), self._rg_once(ctx))
        return display(
            paged(
                rows,
                lambda row: render_row(row, scope, numbers, long),
                offset=offset,
                limit=limit,
                budget=budget,
                unit="lines" if context else "matching lines",
                total_note=f", {matches:,} matching" if context else "",
            )
        )


def _pattern_args(args: dict[str, Any]) -> list[str]:
    """The pattern and the flags that change what it matches."""
    flags = ["--engine", "auto"]
    if args.get("-i"):
        flags.append("--ignore-case")
    if args.get("multiline"):
        flags += ["--multiline", "--multiline-dotall"]
    return [*flags, "-e", args["pattern"]]


def _filters(args: dict[str, Any], scope: SearchScope, glob: str | None) -> list[str]:
    filters = []
    if args.get("type"):
        filters += ["--type", args["type"]]
        scope.drop_hidden = not args.get("include_ignored")  # see _as_type
    if glob:
        # A file name glob is an rg type (two types would match either); one with a
        # slash is matched on the path below the root too.
        name = glob.removeprefix("**/")
        last = name.rpartition("/")[2]
        if args.get("type") or not _name_glob(last):
            scope.match_glob(glob, on_name="/" not in glob)
        else:
            filters += _as_type(last, scope, args)
            if "/" in name:
                scope.match_glob(glob, on_name=False)
    return filters


def _glob_args(pattern: str, scope: SearchScope, args: dict[str, Any]) -> list[str]:
    """rg's arguments for glob's pattern. rg's -g would list ignored files that match, so
    a pattern on file names becomes an rg type, and the rest is matched on rg's list."""
    pattern = pattern.removeprefix("./")
    if pattern in ("**", "**/*"):
        return []  # every file
    name = pattern.removeprefix("**/")
    if not _name_glob(name):
        scope.match_glob(pattern, on_name=False)
        return []
    if name == pattern:  # no directory part: only the top level
        scope.match_glob(pattern, on_name=False)
    return _as_type(name, scope, args)


def _name_glob(glob: str) -> bool:
    return "/" not in glob and ":" not in glob and glob not in ("*", "**")


def _as_type(glob: str, scope: SearchScope, args: dict[str, Any]) -> list[str]:
    # A type lets a hidden file through even without --hidden: those are dropped after.
    scope.drop_hidden = not args.get("include_ignored")
    return ["--type-add", f"{_TYPE}:{glob}", "--type", _TYPE]


def _content_args(args: dict[str, Any]) -> list[str]:
    found = ["--line-number", "--with-filename", "--null", "--no-heading", "--color", "never"]
    found += ["--max-columns", str(MAX_LINE_CHARS), "--max-columns-preview"]
    for flag in ("-A", "-B", "-C"):
        if flag in args:
            lines = args[flag]
            if not 0 <= lines <= CONTEXT_MAX:
                raise ToolArgumentError(f"{flag} must be 0 to {CONTEXT_MAX} lines, got {lines}")
            found += [flag, str(lines)]
    return found
