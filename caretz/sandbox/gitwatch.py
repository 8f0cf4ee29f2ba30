"""What git takes configuration or code from, watched between commands and put back.

Inside a writable root, `.git/config`, `hooks/`, `info/`, `modules/` and `worktrees/` are
read-only mounts under bubblewrap (policy.py), but a file that does not exist yet cannot
be mounted over: a command could create `.git/commondir` (pointing git at a config and
hooks of its own) or `.git/config.worktree`. Nor can a nested repository the command
creates and adds to the index as a gitlink: the user's `git status` enters it and runs
its `core.fsmonitor`. Under the Landlock fallback nothing in `.git` can be made read-only.

`GitWatch` records these files as they are at session start (their bytes, where small)
and, after every tool call, compares: what was created is moved to a quarantine folder
in caretz's data dir (never deleted: it may be the user's own), what was changed or
removed is written back as it was, and each is one line for the tool result and the
session's log. Under bubblewrap only creations can happen (the rest is read-only), so
only those are looked at there; a change the user makes to `.git/config` meanwhile is
theirs and stays.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import time
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path

from caretz import private_data
from caretz.lazy_dataclass import lazy_dataclass

# In a git dir (`.git`, `.git/modules/<name>`): files git reads configuration or code from.
CONTROL_FILES = ("config", "commondir", "config.worktree", "gitdir")
CONTROL_DIRS = ("hooks", "info")
# Under bubblewrap, the control files a command can still create (no mount covers them).
CREATABLE = ("commondir", "config.worktree")
MAX_SAVED_BYTES = 1 << 20  # a larger control file is watched, but not kept to write back
GITLINK_MODE = b"160000"

Fingerprint = tuple[int, int, int, int]  # mode, inode, size, mtime


@lazy_dataclass
class Saved:
    fingerprint: Fingerprint
    data: bytes | None  # a file's bytes or a symlink's target; None for a directory


@lazy_dataclass
class RepoState:
    """One git dir's watched files (relative to the git dir) as last accepted."""

    git_dir: Path
    files: dict[str, Saved] = field(default_factory=dict)
    full: bool = True  # every change is undone; False: only creations (read-only mounts)


def fingerprint(info: os.stat_result) -> Fingerprint:
    return (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns)


def control_paths(git_dir: Path) -> list[str]:
    """The watched paths of `git_dir` that exist, relative to it (parents first)."""
    found: list[str] = []
    for name in CONTROL_FILES:
        if os.path.lexists(git_dir / name):
            found.append(name)
    for name in CONTROL_DIRS:
        found += _tree(git_dir, name)
    modules = git_dir / "modules"
    if modules.is_dir() and not modules.is_symlink():
        found.append("modules")
        found += [f"modules/{sub}" for sub in _module_paths(modules)]
    elif os.path.lexists(modules):
        found.append("modules")
    worktrees = git_dir / "worktrees"
    if os.path.lexists(worktrees):
        found.append("worktrees")
        if worktrees.is_dir() and not worktrees.is_symlink():
            for entry in sorted(os.listdir(worktrees)):
                found.append(f"worktrees/{entry}")
                for name in CONTROL_FILES:
                    if os.path.lexists(worktrees / entry / name):
                        found.append(f"worktrees/{entry}/{name}")
    return found


def _tree(base: Path, name: str) -> list[str]:
    path = base / name
    if not os.path.lexists(path):
        return []
    found = [name]
    if path.is_dir() and not path.is_symlink():
        for entry in sorted(os.listdir(path)):
            found += _tree(base, f"{name}/{entry}")
    return found


def _module_paths(modules: Path) -> list[str]:
    """Each submodule's git dir below `modules` (names may hold `/`), and its control paths."""
    found: list[str] = []
    for entry in sorted(os.listdir(modules)):
        path = modules / entry
        if not path.is_dir() or path.is_symlink():
            found.append(entry)
            continue
        found.append(entry)
        if (path / "HEAD").exists():
            found += [f"{entry}/{sub}" for sub in control_paths(path)]
        else:
            found += [f"{entry}/{sub}" for sub in _module_paths(path)]
    return found


def read_state(git_dir: Path, content: bool = True) -> dict[str, Saved]:
    """The watched paths with their stat data, and (`content`) their bytes to put back."""
    files: dict[str, Saved] = {}
    for relative in control_paths(git_dir):
        path = git_dir / relative
        try:
            info = os.lstat(path)
        except OSError:
            continue
        files[relative] = Saved(fingerprint(info), _content(path, info) if content else None)
    return files


def _content(path: Path, info: os.stat_result) -> bytes | None:
    if stat.S_ISLNK(info.st_mode):
        return os.fsencode(os.readlink(path))
    if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_SAVED_BYTES:
        with contextlib.suppress(OSError):
            return path.read_bytes()
    return None


class GitWatch:
    """The git dirs of a session's writable roots, and the nested repositories their
    indexes link; see the module docstring."""

    def __init__(
        self,
        roots: Sequence[Path],
        quarantine: Path,
        *,
        git: str | None,
        full: bool,
    ):
        self.roots = [Path(root) for root in roots]
        self.quarantine = quarantine
        self.git = git  # the trusted git, to read gitlinks from an index
        # Every change to a root's git dir undone (Landlock), or only creations (bubblewrap,
        # where the rest is read-only). A nested repository's is not mounted: always every.
        self.full = full
        self._repos: dict[Path, RepoState] = {}
        self._indexes: dict[Path, Fingerprint | None] = {}
        self._gitlinks: dict[Path, set[Path]] = {}

    def start(self) -> None:
        """Record everything as it is now (session start)."""
        for root in self.roots:
            git_dir = root / ".git"
            if git_dir.is_dir() and not git_dir.is_symlink():
                self._repos[git_dir] = RepoState(git_dir, read_state(git_dir), self.full)
                self._indexes[root] = _index_fingerprint(git_dir)
                self._gitlinks[root] = self._read_gitlinks(root)
                for link in self._gitlinks[root]:
                    self._watch_nested(link)

    def check(self, accept: bool = False) -> list[str]:
        """Undo what changed since the last check, one line each; `accept` takes the
        state as it is now instead (a command the user let out of the sandbox)."""
        lines: list[str] = []
        # The git dirs first: git reads the index only once a planted commondir is gone.
        for state in list(self._repos.values()):
            if accept:
                state.files = read_state(state.git_dir)
            else:
                lines += self._undo(state)
        for root in self.roots:
            self._follow_index(root, lines, accept)
        return lines

    # -- nested repositories -------------------------------------------------------------

    def _follow_index(self, root: Path, lines: list[str], accept: bool) -> None:
        git_dir = root / ".git"
        if git_dir not in self._repos:
            return
        now = _index_fingerprint(git_dir)
        if now == self._indexes.get(root):
            return
        self._indexes[root] = now
        links = self._read_gitlinks(root)
        new = links - self._gitlinks.get(root, set())
        self._gitlinks[root] = links
        for link in sorted(new):
            nested = link / ".git"
            if accept or not os.path.lexists(nested):
                self._watch_nested(link)
                continue
            moved = self._move_aside(nested)
            lines.append(
                f"{_shown(nested)}: a nested repository linked into the index during the "
                f"session; git would read its config and hooks, so caretz moved it to {moved}"
            )

    def _watch_nested(self, link: Path) -> None:
        nested = link / ".git"
        if nested.is_dir() and not nested.is_symlink():
            self._repos.setdefault(nested, RepoState(nested, read_state(nested)))

    def _read_gitlinks(self, root: Path) -> set[Path]:
        return gitlinks(root, self.git)

    # -- undoing -------------------------------------------------------------------------

    def _undo(self, state: RepoState) -> list[str]:
        lines: list[str] = []
        before = state.files
        now = read_state(state.git_dir, content=False) if state.full else self._creatable(state)
        moved: list[str] = []
        for relative in now:
            if relative in before or any(relative.startswith(m + "/") for m in moved):
                continue
            path = state.git_dir / relative
            target = self._move_aside(path)
            moved.append(relative)
            lines.append(f"{_shown(path)}: created by a command; caretz moved it to {target}")
        if state.full:
            lines += self._put_back(state, now)
        return lines

    def _creatable(self, state: RepoState) -> dict[str, Saved]:
        found = dict(state.files)
        for name in CREATABLE:
            path = state.git_dir / name
            if name not in found and os.path.lexists(path):
                found[name] = Saved(fingerprint(os.lstat(path)), None)
        return found

    def _put_back(self, state: RepoState, now: dict[str, Saved]) -> list[str]:
        lines: list[str] = []
        for relative, saved in state.files.items():
            current = now.get(relative)
            if saved.data is None or (current and current.fingerprint == saved.fingerprint):
                continue
            path = state.git_dir / relative
            if current is not None and _same_type(current, saved):
                data = _content(path, os.lstat(path))
                if data == saved.data:  # touched, not changed
                    saved.fingerprint = current.fingerprint
                    continue
            if current is not None:
                self._move_aside(path)
            _write_back(path, saved)
            saved.fingerprint = fingerprint(os.lstat(path))
            what = "changed" if current is not None else "removed"
            lines.append(f"{_shown(path)}: {what} by a command; caretz put it back")
        return lines

    def _move_aside(self, path: Path) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = self.quarantine / stamp / str(path).lstrip("/")
        private_data.make_dir(target.parent)
        while os.path.lexists(target):
            target = target.with_name(target.name + "~")
        shutil.move(str(path), str(target))
        private_data.close_tree(target)  # what a command wrote is the user's alone now
        return target


def gitlinks(root: Path, git: str | None) -> set[Path]:
    """The paths `root`'s index links as gitlinks (submodules, embedded repositories)."""
    if git is None or not (root / ".git").is_dir():
        return set()
    done = subprocess.run(
        [git, "-c", "core.fsmonitor=false", "ls-files", "-s", "-z"],
        capture_output=True,
        cwd="/",
        env=_git_env(root / ".git"),
    )
    links: set[Path] = set()
    for entry in done.stdout.split(b"\0"):
        if entry.startswith(GITLINK_MODE + b" ") and b"\t" in entry:
            links.add(root / os.fsdecode(entry.split(b"\t", 1)[1]))
    return links


def nested_control_paths(roots: Sequence[Path], git: str | None) -> list[Path]:
    """What git reads configuration or code from in the nested repositories the roots'
    indexes link (those with a `.git` directory of their own), as it exists now: for
    bubblewrap to mount read-only, as it does a root's own."""
    found: list[Path] = []
    for root in roots:
        for link in sorted(gitlinks(root, git)):
            nested = link / ".git"
            if not nested.is_dir() or nested.is_symlink():
                continue
            names = (*CONTROL_FILES, *CONTROL_DIRS, "modules", "worktrees")
            found += [nested / name for name in names if os.path.lexists(nested / name)]
    return found


def _same_type(a: Saved, b: Saved) -> bool:
    return stat.S_IFMT(a.fingerprint[0]) == stat.S_IFMT(b.fingerprint[0])


def _write_back(path: Path, saved: Saved) -> None:
    assert saved.data is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    if stat.S_ISLNK(saved.fingerprint[0]):
        os.symlink(os.fsdecode(saved.data), path)
        return
    temporary = path.with_name(path.name + ".caretz-restore")
    temporary.write_bytes(saved.data)
    os.chmod(temporary, stat.S_IMODE(saved.fingerprint[0]))
    os.replace(temporary, path)


def _index_fingerprint(git_dir: Path) -> Fingerprint | None:
    try:
        return fingerprint(os.stat(git_dir / "index"))
    except OSError:
        return None


def _git_env(git_dir: Path) -> dict[str, str]:
    """git reading the project's index only: no system or global config, no hooks."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL")}
    return {
        **keep,
        "GIT_DIR": str(git_dir),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }


def _shown(path: Path) -> str:
    return str(path)
