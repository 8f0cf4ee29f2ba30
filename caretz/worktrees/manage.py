"""caretz's worktrees of a repository: `<main worktree>/.caretz/worktrees/NAME`, on branch
`caretz/NAME`, started from HEAD.

Inside the repository, so its sessions, checkpoints and sandbox need nothing new (the
worktree is an ordinary project folder; the sandbox hides only credential stores and
caretz's own config and data, and keeps the main checkout's `.caretz` read-only, so a
session there cannot write into a worktree). Out of the repository's own status: the
folder is named once in the repository's `info/exclude`, which is local and never
committed (the main checkout's checkpoints leave the worktrees out as nested repositories
anyway).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from caretz.sandbox import door
from caretz.worktrees.git import RepoGit, WorktreeError, absolute, last_line

WORKTREES = Path(".caretz") / "worktrees"
EXCLUDE_LINE = "/.caretz/worktrees/"
EXCLUDE_LIMIT = 4 << 20  # an info/exclude larger than this is not one git keeps
BRANCH_PREFIX = "caretz/"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
# Worktrees of one repository are made one at a time (a batch makes several at once).
_making: dict[Path, threading.Lock] = {}
_making_lock = threading.Lock()


@dataclass(frozen=True)
class Repository:
    git: RepoGit
    top: Path  # the working tree holding the folder it was opened from
    main: Path  # the main working tree: where `.caretz/worktrees` is

    @property
    def folder(self) -> Path:
        return self.main / WORKTREES


@dataclass(frozen=True, kw_only=True)
class Worktree:
    name: str
    path: Path
    branch: str  # "caretz/NAME", or what the worktree has checked out now ("" detached)
    created: bool = False  # made by this call (else it was there)
    missing: bool = False  # git knows it, its folder is gone


def open_repository(folder: Path, env: Mapping[str, str]) -> Repository:
    """The repository `folder` is in; WorktreeError when it is in none, or in a bare one."""
    git = RepoGit.find(folder, env)
    done = git.call(folder, "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        raise WorktreeError(f"{folder} is not in a git repository: worktrees need one")
    top = absolute(done.stdout, folder)
    entries = _entries(git, top)
    if not entries or "bare" in entries[0]:
        raise WorktreeError(f"{top}: a bare repository has no working tree for worktrees")
    return Repository(git, top, Path(entries[0]["worktree"]))


def check_name(name: str) -> str:
    """`name` when it can name a folder and the branch `caretz/NAME`; else WorktreeError."""
    bad = name.endswith((".lock", ".")) or ".." in name
    if bad or not _NAME.fullmatch(name):
        raise WorktreeError(
            f"worktree name {name!r}: use up to 100 letters, digits, '.', '_' and '-', "
            "starting with a letter or digit (it names the folder and the branch caretz/NAME)"
        )
    return name


def enter(repo: Repository, name: str) -> Worktree:
    """The worktree NAME, made now from HEAD when there is none (on its branch, made
    too unless it is left from a removed worktree). Raises WorktreeError."""
    check_name(name)
    with _lock_for(repo.main):
        found = find(repo, name)
        if found is not None and not found.missing:
            return found
        if found is not None:
            repo.git.run(repo.main, "worktree", "prune")
        path = repo.folder / name
        if path.exists():
            raise WorktreeError(
                f"{path} is there and is no worktree of this repository: move it, or "
                "choose another name"
            )
        ensure_excluded(repo)
        branch = BRANCH_PREFIX + name
        if has_branch(repo, branch):
            _add(repo, str(path), branch)
        else:
            _add(repo, "-b", branch, str(path), "HEAD")
        return Worktree(name=name, path=path, branch=branch, created=True)


def listed(repo: Repository) -> list[Worktree]:
    """caretz's worktrees of the repository, by name."""
    found = []
    for entry in _entries(repo.git, repo.main):
        path = Path(entry["worktree"])
        if path.parent != repo.folder:
            continue
        branch = entry.get("branch", "").removeprefix("refs/heads/")
        found.append(
            Worktree(name=path.name, path=path, branch=branch, missing="prunable" in entry)
        )
    return sorted(found, key=lambda worktree: worktree.name)


def find(repo: Repository, name: str) -> Worktree | None:
    return next((w for w in listed(repo) if w.name == name), None)


def changes(repo: Repository, worktree: Worktree) -> list[str]:
    """The worktree's uncommitted changes, untracked files included (`git status` lines)."""
    out = repo.git.run(worktree.path, "status", "--porcelain", "--untracked-files=all")
    return [line for line in out.splitlines() if line.strip()]


@dataclass(frozen=True)
class Removed:
    worktree: Worktree
    branch_deleted: bool
    why_kept: str = ""  # why the branch stays


def remove(repo: Repository, name: str, *, force: bool = False) -> Removed:
    """Remove the worktree NAME and its branch when the branch is merged; uncommitted
    changes refuse it (WorktreeError, exit 1) unless `force` discards them."""
    worktree = find(repo, check_name(name))
    if worktree is None:
        raise WorktreeError(f"no worktree {name!r} here: `caretz worktree list` lists them")
    if worktree.missing:
        repo.git.run(repo.main, "worktree", "prune")
        return _without_branch(repo, worktree)
    # git checks the worktree is clean as it removes it (one pass over a large tree, and
    # no change can slip in between a check and the removal); a refusal is then told
    # with the files.
    flags = ["--force"] if force else []
    done = repo.git.call(repo.main, "worktree", "remove", *flags, str(worktree.path))
    if done.returncode != 0:
        changed = [] if force else changes(repo, worktree)
        if changed:
            raise WorktreeError(
                f"worktree {name} has uncommitted changes ({_files(changed)}): commit them, "
                "or remove it with --force to discard them",
                code=1,
            )
        raise WorktreeError(last_line(done.stderr) or f"git could not remove worktree {name}")
    return _without_branch(repo, worktree)


def has_branch(repo: Repository, branch: str) -> bool:
    done = repo.git.call(repo.main, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}")
    return done.returncode == 0


def ensure_excluded(repo: Repository) -> None:
    """The worktrees' folder in the repository's own `info/exclude` (local, never
    committed), so the main checkout's `git status` does not list it."""
    # The git dir found by git; below it, info/exclude is read and written through the
    # project door, no symlink followed.
    git_dir = absolute(repo.git.run(repo.main, "rev-parse", "--git-common-dir"), repo.main)
    name = "info/exclude"
    try:
        text = door.read_beneath(git_dir, name, EXCLUDE_LIMIT).decode("utf-8", "replace")
    except FileNotFoundError:
        text = ""
    except door.Refused as refusal:
        raise WorktreeError(f"not reading {refusal}") from None
    if EXCLUDE_LINE in text.splitlines():
        return
    separator = "" if not text or text.endswith("\n") else "\n"
    added = f"{separator}# caretz's worktrees (caretz worktree list)\n{EXCLUDE_LINE}\n"
    try:
        door.write_beneath(git_dir, name, (text + added).encode("utf-8"))
    except door.Refused as refusal:
        raise WorktreeError(f"not writing {refusal}") from None


def has_commit(repo: Repository) -> bool:
    """Whether HEAD names a commit (a new repository's has none yet)."""
    return repo.git.call(repo.top, "rev-parse", "--verify", "--quiet", "HEAD").returncode == 0


def _add(repo: Repository, *args: str) -> None:
    if not has_commit(repo):
        raise WorktreeError(
            f"{repo.top} has no commit yet: a worktree starts from HEAD, so commit first"
        )
    repo.git.run(repo.top, "worktree", "add", "--quiet", *args)


def _without_branch(repo: Repository, worktree: Worktree) -> Removed:
    branch = BRANCH_PREFIX + worktree.name
    if worktree.branch != branch or not has_branch(repo, branch):
        return Removed(worktree, False, f"{branch} is not its branch" if worktree.branch else "")
    done = repo.git.call(repo.main, "branch", "-d", branch)
    if done.returncode == 0:
        return Removed(worktree, True)
    why = f"it has commits not merged here (git branch -D {branch} deletes it)"
    return Removed(worktree, False, why)


def _entries(git: RepoGit, folder: Path) -> list[dict[str, str]]:
    """`git worktree list --porcelain`, one dict per worktree (a bare word maps to "")."""
    entries: list[dict[str, str]] = []
    for line in git.run(folder, "worktree", "list", "--porcelain").splitlines():
        if not line.strip():
            continue
        key, _, value = line.partition(" ")
        if key == "worktree":
            entries.append({})
            value = str(absolute(value, folder))
        if entries:
            entries[-1][key] = value
    return entries


def _files(changed: list[str]) -> str:
    names = [line[3:] for line in changed]
    shown = ", ".join(names[:3])
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return f"{len(names)} {'file' if len(names) == 1 else 'files'}: {shown}{more}"


def _lock_for(main: Path) -> threading.Lock:
    with _making_lock:
        return _making.setdefault(main, threading.Lock())
