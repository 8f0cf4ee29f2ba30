"""`caretz --worktree NAME` (a session in a worktree of its own), `caretz worktree list`
and `caretz worktree remove NAME` (docs/batch.md)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.config.loading import data_dir
from caretz.config_base import ConfigError
from caretz.session.store import SessionStore
from caretz.text import plural
from caretz.worktrees import manage
from caretz.worktrees.git import WorktreeError

if TYPE_CHECKING:
    from caretz.config.overrides import Flags

# Subcommands that make worktrees of their own or act on them: -w does not go with them.
_NOT_WITH_WORKTREE = ("batch", "worktree")
# The flags that name files: taken from the folder caretz started in, not the worktree's.
_PATH_FLAGS = ("config", "add_dir", "image")


def enter_worktree(name: str, flags: dict[str, Any], subcommand: str | None = None) -> str | None:
    """Make (or reuse) the worktree NAME, say where on stderr and move into it (the same
    subfolder, when it has one); the path flags in `flags` are made absolute first.
    Returns the one line that stops it, or None."""
    if subcommand in _NOT_WITH_WORKTREE:
        return f"--worktree does not go with `caretz {subcommand}`"
    start = Path.cwd()
    try:
        repo = manage.open_repository(start, os.environ)
        worktree = manage.enter(repo, name)
    except WorktreeError as error:
        return str(error)
    for key in _PATH_FLAGS:
        if flags.get(key):
            flags[key] = _absolute(flags[key], start)
    below = start.resolve().relative_to(repo.top) if start.resolve() != repo.top else Path()
    inside = worktree.path / below
    how = "made from HEAD" if worktree.created else "already there"
    sys.stderr.write(
        f"caretz: worktree {worktree.path} on branch {worktree.branch or '(detached)'} ({how})\n"
    )
    os.chdir(inside if inside.is_dir() else worktree.path)
    return None


def list_worktrees(flags: Flags) -> int:
    """caretz's worktrees of this repository: name, branch, changes, sessions, folder."""
    try:
        repo = manage.open_repository(Path.cwd(), os.environ)
        worktrees = manage.listed(repo)
        store = SessionStore(data_dir(os.environ))
    except (WorktreeError, ConfigError) as error:
        return _fails(error)
    if not worktrees:
        sys.stdout.write(f"no caretz worktrees in {repo.main} (caretz -w NAME makes one)\n")
    for worktree in worktrees:
        state = "missing" if worktree.missing else _state(repo, worktree)
        sessions = plural(len(store.ids_of(worktree.path)), "session")
        branch = worktree.branch or "(detached)"
        sys.stdout.write(f"{worktree.name}  {branch}  {state}  {sessions}  {worktree.path}\n")
    return 0


def remove_worktree(flags: Flags, name: str, force: bool = False) -> int:
    """Remove the worktree NAME (refused with uncommitted changes unless `force`), and
    its branch when it is merged."""
    try:
        repo = manage.open_repository(Path.cwd(), os.environ)
        removed = manage.remove(repo, name, force=force)
    except WorktreeError as error:
        return _fails(error)
    branch = manage.BRANCH_PREFIX + name
    if removed.branch_deleted:
        sys.stdout.write(f"removed worktree {name} and its branch {branch}\n")
    else:
        kept = f"; branch {branch} kept: {removed.why_kept}" if removed.why_kept else ""
        sys.stdout.write(f"removed worktree {name}{kept}\n")
    return 0


def _state(repo: manage.Repository, worktree: manage.Worktree) -> str:
    changed = manage.changes(repo, worktree)
    return f"{plural(len(changed), 'change')}" if changed else "clean"


def _fails(error: Exception) -> int:
    sys.stderr.write(f"caretz: {error}\n")
    return error.code if isinstance(error, WorktreeError) else 2


def _absolute(value: Any, start: Path) -> Any:
    """A path flag's value taken from `start`, of the type it came as (a list, a str, a
    Path)."""
    if isinstance(value, list | tuple):
        return [_absolute(item, start) for item in value]
    path = Path(value).expanduser()
    path = path if path.is_absolute() else start / path
    return str(path) if isinstance(value, str) else path
