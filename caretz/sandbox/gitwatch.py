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

A command, or a background job still running, may swap a folder along these paths for a
symlink (`.git/hooks -> ~`): every look, move and write goes through the root's own fd
(sandbox/beneath.py) and follows no symlink, so a put-back never lands outside the root;
a git dir with a symlink along it is one line, and left as it is.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path, PurePosixPath

from caretz import private_data
from caretz.lazy_dataclass import lazy_dataclass
from caretz.sandbox.beneath import Beneath
from caretz.sandbox.safe_open import PathMoved

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

    tree: Beneath  # the writable root it lies in: every step goes through its fd
    git_dir: str  # relative to the root
    files: dict[str, Saved] = field(default_factory=dict)
    full: bool = True  # every change is undone; False: only creations (read-only mounts)

    @property
    def path(self) -> Path:
        return self.tree.root / self.git_dir


def fingerprint(info: os.stat_result) -> Fingerprint:
    return (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns)


def control_paths(tree: Beneath, git_dir: str) -> list[str]:
    """The watched paths of the git dir at `git_dir` (below `tree`'s root) that exist,
    relative to it (parents first)."""
    found: list[str] = []
    for name in CONTROL_FILES:
        if tree.lstat(f"{git_dir}/{name}") is not None:
            found.append(name)
    for name in CONTROL_DIRS:
        found += _tree(tree, git_dir, name)
    modules = tree.lstat(f"{git_dir}/modules")
    if modules is not None:
        found.append("modules")
        if stat.S_ISDIR(modules.st_mode):
            found += [f"modules/{sub}" for sub in _module_paths(tree, f"{git_dir}/modules")]
    worktrees = tree.lstat(f"{git_dir}/worktrees")
    if worktrees is not None:
        found.append("worktrees")
        for entry in tree.names(f"{git_dir}/worktrees"):
            found.append(f"worktrees/{entry}")
            for name in CONTROL_FILES:
                if tree.lstat(f"{git_dir}/worktrees/{entry}/{name}") is not None:
                    found.append(f"worktrees/{entry}/{name}")
    return found


def _tree(tree: Beneath, base: str, name: str) -> list[str]:
    if tree.lstat(f"{base}/{name}") is None:
        return []
    found = [name]
    for entry in tree.names(f"{base}/{name}"):
        found += _tree(tree, base, f"{name}/{entry}")
    return found


def _module_paths(tree: Beneath, modules: str) -> list[str]:
    """Each submodule's git dir below `modules` (names may hold `/`), and its control paths."""
    found: list[str] = []
    for entry in tree.names(modules):
        path = f"{modules}/{entry}"
        found.append(entry)
        if not tree.is_folder(path):
            continue
        if tree.lstat(f"{path}/HEAD") is not None:
            found += [f"{entry}/{sub}" for sub in control_paths(tree, path)]
        else:
            found += [f"{entry}/{sub}" for sub in _module_paths(tree, path)]
    return found


def read_state(tree: Beneath, git_dir: str, content: bool = True) -> dict[str, Saved]:
    """The watched paths with their stat data, and (`content`) their bytes to put back."""
    files: dict[str, Saved] = {}
    for relative in control_paths(tree, git_dir):
        path = f"{git_dir}/{relative}"
        info = tree.lstat(path)
        if info is None:
            continue
        files[relative] = Saved(fingerprint(info), _content(tree, path, info) if content else None)
    return files


def _content(tree: Beneath, path: str, info: os.stat_result) -> bytes | None:
    if stat.S_ISLNK(info.st_mode):
        return os.fsencode(tree.readlink(path))
    if stat.S_ISREG(info.st_mode):
        return tree.read(path, MAX_SAVED_BYTES)
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
            tree = Beneath(root)
            if tree.is_folder(".git"):
                git_dir = root / ".git"
                self._repos[git_dir] = RepoState(tree, ".git", read_state(tree, ".git"), self.full)
                self._indexes[root] = _index_fingerprint(git_dir)
                self._gitlinks[root] = self._read_gitlinks(root)
                for link in self._gitlinks[root]:
                    self._watch_nested(root, link)

    def check(self, accept: bool = False) -> list[str]:
        """Undo what changed since the last check, one line each; `accept` takes the
        state as it is now instead (a command the user let out of the sandbox)."""
        lines: list[str] = []
        # The git dirs first: git reads the index only once a planted commondir is gone.
        for state in list(self._repos.values()):
            try:
                if accept:
                    state.files = read_state(state.tree, state.git_dir)
                else:
                    lines += self._undo(state)
            except (PathMoved, NotADirectoryError):
                lines.append(
                    f"{state.path}: a symlink or a file stands along it now; caretz changed "
                    "nothing there (git would follow it: look before running git)"
                )
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
        tree = Beneath(root)
        for link in sorted(new):
            nested = _below(root, link / ".git")
            try:
                present = nested is not None and tree.lstat(nested) is not None
            except PathMoved:
                present = False  # under a symlink: not the project's own; git stops there
            if accept or not present:
                self._watch_nested(root, link)
                continue
            assert nested is not None
            moved = self._move_aside(tree, nested)
            lines.append(
                f"{_shown(link / '.git')}: a nested repository linked into the index during "
                f"the session; git would read its config and hooks, so caretz moved it to {moved}"
            )

    def _watch_nested(self, root: Path, link: Path) -> None:
        nested = _below(root, link / ".git")
        tree = Beneath(root)
        try:
            if nested is None or not tree.is_folder(nested):
                return
            self._repos.setdefault(link / ".git", RepoState(tree, nested, read_state(tree, nested)))
        except PathMoved:
            return  # a symlink along it: not a repository of the project's own

    def _read_gitlinks(self, root: Path) -> set[Path]:
        return gitlinks(root, self.git)

    # -- undoing -------------------------------------------------------------------------

    def _undo(self, state: RepoState) -> list[str]:
        lines: list[str] = []
        before = state.files
        if state.full:
            now = read_state(state.tree, state.git_dir, content=False)
        else:
            now = self._creatable(state)
        moved: list[str] = []
        for relative in now:
            if relative in before or any(relative.startswith(m + "/") for m in moved):
                continue
            target = self._move_aside(state.tree, f"{state.git_dir}/{relative}")
            moved.append(relative)
            lines.append(
                f"{_shown(state.path / relative)}: created by a command; caretz moved it "
                f"to {target}"
            )
        if state.full:
            lines += self._put_back(state, now)
        return lines

    def _creatable(self, state: RepoState) -> dict[str, Saved]:
        found = dict(state.files)
        for name in CREATABLE:
            info = state.tree.lstat(f"{state.git_dir}/{name}")
            if name not in found and info is not None:
                found[name] = Saved(fingerprint(info), None)
        return found

    def _put_back(self, state: RepoState, now: dict[str, Saved]) -> list[str]:
        lines: list[str] = []
        tree = state.tree
        for relative, saved in state.files.items():
            current = now.get(relative)
            if not _to_put_back(saved, current):
                continue
            path = f"{state.git_dir}/{relative}"
            if current is not None and _same_type(current, saved):
                info = tree.lstat(path)
                if info is not None and _content(tree, path, info) == saved.data:
                    saved.fingerprint = current.fingerprint  # touched, not changed
                    continue
            if current is not None:
                self._move_aside(tree, path)
            _write_back(tree, path, saved)
            info = tree.lstat(path)
            if info is not None:
                saved.fingerprint = fingerprint(info)
            what = "changed" if current is not None else "removed"
            lines.append(
                f"{_shown(state.path / relative)}: {what} by a command; caretz put it back"
            )
        return lines

    def _move_aside(self, tree: Beneath, relative: str) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = self.quarantine / stamp / str(tree.root / relative).lstrip("/")
        while os.path.lexists(target):
            target = target.with_name(target.name + "~")
        tree.move_out(relative, target)
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


def _to_put_back(saved: Saved, current: Saved | None) -> bool:
    """Whether `saved` differs from what stands there now and can be put back: a folder
    gone or replaced (its entries are looked at one by one), a file or link changed."""
    if stat.S_ISDIR(saved.fingerprint[0]):
        return current is None or not _same_type(current, saved)
    if saved.data is None:  # too large to keep
        return False
    return current is None or current.fingerprint != saved.fingerprint


def _same_type(a: Saved, b: Saved) -> bool:
    return stat.S_IFMT(a.fingerprint[0]) == stat.S_IFMT(b.fingerprint[0])


def _write_back(tree: Beneath, path: str, saved: Saved) -> None:
    """Put `saved` back at `path` (its missing folders made), through the root's fd."""
    parents = PurePosixPath(path).parents
    for folder in reversed([str(p) for p in parents if p.parts]):
        if tree.lstat(folder) is None:
            tree.make_folder(folder)
    mode = saved.fingerprint[0]
    if stat.S_ISDIR(mode):
        tree.make_folder(path)
        tree.chmod_folder(path, stat.S_IMODE(mode))
    elif stat.S_ISLNK(mode):
        assert saved.data is not None
        tree.make_link(os.fsdecode(saved.data), path)
    else:
        assert saved.data is not None
        tree.rewrite(path, saved.data, mode)


def _below(root: Path, path: Path) -> str | None:
    """`path` relative to `root` (POSIX), None when it is not below it."""
    try:
        relative = path.relative_to(root)
    except ValueError:
        return None
    return relative.as_posix() if relative.parts else None


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
