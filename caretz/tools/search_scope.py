"""What one grep or glob may see: the root it searches, what rg is told to leave out, and
the check on each path rg returns.

The sandbox's hidden paths (credential stores, caretz's own dirs, service sockets) and
/proc are passed to rg as excludes when they lie inside the searched directory, so rg
never walks them. Only the paths rg returns are checked afterwards, and only where an
exclude cannot say it exactly: a hidden entry that is a glob, or one that holds a root
the user named (the deeper root wins, so only some of what it covers is hidden). The
user's Read deny and ask rules are checked on the returned paths the same way. rg follows
no symlink, and the root itself was resolved and checked like any read.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass
from caretz.sandbox import safe_open
from caretz.sandbox.policy import existing_paths, is_within
from caretz.tools.base import ToolContext
from caretz.tools.file_access import anchors, checked_path, display_path

if TYPE_CHECKING:
    from caretz.sandbox.paths import PathGuard
    from caretz.sandbox.runner import Sandbox

if TYPE_CHECKING:
    from caretz.permissions import paths as path_globs
else:
    # The rules' path globs: only for a glob search's pattern.
    path_globs = lazy_module("caretz.permissions.paths")

PROC = Path("/proc")
PIN_ATTEMPTS = 5
_GLOB_SPECIALS = "\\*?[]{}!"


class ScopeError(ValueError):
    """The search root cannot be searched; str() is one line for the model."""


@lazy_dataclass(kw_only=True)
class SearchScope:
    rg_cwd: Path  # the directory rg runs in; every path it returns is relative to it
    target: str  # what rg is given to search: "." or "./<file>"
    excludes: list[str]  # rg globs, each "!<anchored path>"
    shown_prefix: str  # how rg_cwd is shown to the model ("" for the workspace)
    guard: PathGuard | None = None  # set when a returned path needs checking
    rules: RuleFilter | None = None
    # A glob rg cannot apply without overriding the ignore rules (its -g does that): the
    # returned paths are matched here, by their name or their path below rg_cwd.
    glob: re.Pattern[str] | None = None
    glob_on_name: bool = False
    # rg lets a hidden file through when a type names it; without include_ignored, dropped.
    drop_hidden: bool = False
    # The name rg is given for a pinned file (/proc/self/fd/N), shown as `target`.
    pinned_target: bytes | None = None
    _verdicts: dict[bytes, bool] = field(default_factory=dict)

    def match_glob(self, pattern: str, *, on_name: bool) -> None:
        """Keep only the returned paths `pattern` matches, by their file name or by their
        path below the searched directory."""
        self.glob = path_globs.glob_to_regex(pattern.removeprefix("./"))
        self.glob_on_name = on_name

    def rg_args(self) -> list[str]:
        args: list[str] = []
        for exclude in self.excludes:
            args += ["-g", exclude]
        return args

    @property
    def checks_paths(self) -> bool:
        return bool(self.guard or self.rules or self.glob or self.drop_hidden)

    def allows(self, relative: bytes) -> bool:
        """Whether a path rg returned (relative to rg_cwd, "./" first) may be shown."""
        relative = self._unpinned(relative)
        if self.drop_hidden and self.target == "." and b"/." in relative:
            return False
        if self.glob is None and self.guard is None and self.rules is None:
            return True
        verdict = self._verdicts.get(relative)
        if verdict is None:
            verdict = self._allows(relative.removeprefix(b"./"))
            self._verdicts[relative] = verdict
        return verdict

    def _allows(self, below: bytes) -> bool:
        name = os.fsdecode(below)
        if self.glob is not None:
            subject = name.rpartition("/")[2] if self.glob_on_name else name
            if not self.glob.match(subject):
                return False
        if self.guard is None and self.rules is None:
            return True
        path = self.rg_cwd / name
        if self.guard is not None and not self.guard.readable(path, resolved=True):
            return False
        return self.rules is None or self.rules.allows(path)

    def _unpinned(self, relative: bytes) -> bytes:
        if self.pinned_target is not None and relative == self.pinned_target:
            return os.fsencode(self.target)
        return relative

    def file_path(self, relative: bytes) -> Path:
        """The file a path rg returned names (a pinned one as the file it stands for)."""
        return self.rg_cwd / os.fsdecode(self._unpinned(relative))

    def shown(self, relative: bytes) -> str:
        name = os.fsdecode(self._unpinned(relative).removeprefix(b"./"))
        return f"{self.shown_prefix}{name}"

    def noted(self, text: str) -> str:
        """The results, with the count of files the user's Read rules kept out."""
        skipped = self.rules.skipped if self.rules is not None else 0
        if skipped:
            files = "file" if skipped == 1 else "files"
            text += f"\n[{skipped} {files} skipped: the user's Read rules cover them]"
        return text


def search_scope(ctx: ToolContext, raw: str | None, tool: str, *, files_only: bool) -> SearchScope:
    """The scope of a search of `raw` (default: the workspace). Raises PathRefused (from
    the sandbox's check of the root) or ScopeError."""
    checked = checked_path(ctx, raw or os.path.normpath(ctx.workspace))
    root = checked.real
    try:
        mode = os.stat(root).st_mode
    except FileNotFoundError:
        raise ScopeError(f"Path not found: {display_path(ctx, checked.path)}") from None
    except OSError as error:
        shown = display_path(ctx, checked.path)
        raise ScopeError(f"Cannot search {shown}: {error.strerror}") from None
    if stat.S_ISDIR(mode):
        rg_cwd, target = root, "."
    elif stat.S_ISREG(mode) and not files_only:
        rg_cwd, target = root.parent, f"./{root.name}"
    else:
        kind = "a regular file or directory" if not files_only else "a directory"
        raise ScopeError(f"Not {kind}: {display_path(ctx, checked.path)}")
    shown = display_path(ctx, rg_cwd)
    scope = SearchScope(
        rg_cwd=rg_cwd, target=target, excludes=[], shown_prefix="" if shown == "." else f"{shown}/"
    )
    guard = ctx.sandbox.paths if ctx.sandbox is not None and ctx.sandbox.policy.enforced else None
    if guard is not None and target == ".":
        scope.excludes, exact = _hidden_excludes(guard, root)
        scope.guard = None if exact else guard
    rules = RuleFilter(ctx, tool)
    scope.rules = rules if rules.active else None
    return scope


def _hidden_excludes(guard: PathGuard, root: Path) -> tuple[list[str], bool]:
    """rg excludes for the hidden entries inside `root`, and whether they say it exactly."""
    policy = guard.policy
    entries = dict.fromkeys([*policy.hidden, *existing_paths(policy.hidden), PROC])
    excludes: list[str] = []
    exact = True
    for entry in entries:
        if glob.has_magic(str(entry)):
            exact = False  # a glob may match anywhere below: each returned path is checked
        elif entry != root and is_within(entry, root):
            if any(is_within(named, entry) for named in policy.roots):
                exact = False  # a root the user named lies inside: only part is hidden
                continue
            excludes.append("!/" + _escaped(entry.relative_to(root).as_posix()))
    return excludes, exact


def _escaped(path: str) -> str:
    return "".join(f"\\{ch}" if ch in _GLOB_SPECIALS else ch for ch in path)


class RuleFilter:
    """The files a search leaves out because a Read deny or ask rule covers them (counted)."""

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


@contextlib.contextmanager
def rg_place(
    scope: SearchScope, ctx: ToolContext
) -> Iterator[tuple[str, str, tuple[int, ...], Sandbox | None]]:
    """Where rg runs for `scope`: (its working directory, its target, the fds it keeps,
    the sandbox it runs in). With the session's sandbox on, rg runs inside it on the
    paths as they are: whatever a link swapped in leads to is what a command would see
    (never a hidden store), and a directory held open outside the sandbox would lead
    out of it. Without one, the paths are held open as they were checked (`pinned`)."""
    sandbox = ctx.sandbox
    if sandbox is not None and sandbox.enforced:
        yield str(scope.rg_cwd), scope.target, (), sandbox
        return
    with pinned(scope, anchors(ctx)) as (cwd, target, fds):
        yield cwd, target, fds, None


class PathChanged(ScopeError):
    """The searched path kept changing (a symlink swapped in) while it was opened."""


@contextlib.contextmanager
def pinned(
    scope: SearchScope, anchors: tuple[Path, ...]
) -> Iterator[tuple[str, str, tuple[int, ...]]]:
    """rg's working directory and target as open fds (/proc/self/fd/N), opened beneath the
    sandbox's roots without following a symlink: a path swapped for a link after the check
    cannot send rg elsewhere. Raises PathChanged when that keeps happening."""
    fds: list[int] = []
    try:
        for _ in range(PIN_ATTEMPTS):
            try:
                fds.append(
                    safe_open.open_exact(scope.rg_cwd, safe_open.O_PATH | os.O_DIRECTORY, anchors)
                )
                if scope.target != ".":
                    fd, _ = safe_open.open_regular(scope.rg_cwd / scope.target, anchors)
                    fds.append(fd)
                break
            except (safe_open.PathMoved, safe_open.NotRegular):
                for fd in fds:
                    os.close(fd)
                fds.clear()
        else:
            raise PathChanged(
                f"refused: cannot search {scope.target if scope.target != '.' else scope.rg_cwd} "
                "safely: its path kept changing while it was opened"
            )
        target = scope.target
        if len(fds) == 2:
            target = f"/proc/self/fd/{fds[1]}"
            scope.pinned_target = os.fsencode(target)
        yield f"/proc/self/fd/{fds[0]}", target, tuple(fds)
    finally:
        for fd in fds:
            os.close(fd)
