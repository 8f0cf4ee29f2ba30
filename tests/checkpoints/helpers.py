"""Helpers for the checkpoint tests: git in a project, files, byte-for-byte views of a tree."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from caretz.checkpoints import CheckpointMeta

GIT_ENV = {
    "GIT_AUTHOR_NAME": "dev",
    "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_COMMITTER_NAME": "dev",
    "GIT_COMMITTER_EMAIL": "dev@example.com",
}


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, start: float = 1_700_000_000.0):
        self.now = start

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def git(project: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "--no-optional-locks", *args],
        cwd=project,
        capture_output=True,
        env={**os.environ, **GIT_ENV},
        check=True,
    )
    return done.stdout.decode()


def require_git() -> str:
    """The real git: a test that needs it fails, never skips, without it."""
    found = shutil.which("git")
    if found is None:
        pytest.fail("git is not installed; checkpoints and their tests need it")
    return found


def make_repo_with_work_in_progress(project: Path) -> None:
    """`git init` and a first commit of the project's files, then a stash (src/lib.py),
    staged work edited again after staging (src/main.py) and an untracked notes.txt."""
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "first")
    write(project, "src/lib.py", "X = 2\n")
    git(project, "stash", "-q")
    write(project, "src/main.py", "print('main, staged')\n")
    git(project, "add", "src/main.py")
    write(project, "src/main.py", "print('main, staged and then edited')\n")
    write(project, "notes.txt", "untracked notes\n")


def write(root: Path, relative: str, text: str, executable: bool = False) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    if executable:
        path.chmod(0o755)
    return path


def tree_state(root: Path) -> dict[str, tuple[str, bytes, bool]]:
    """Everything under `root` but `.git`: kind, bytes (or link target), executable bit;
    folders too, so a folder left behind or missing shows."""
    state: dict[str, tuple[str, bytes, bool]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not (Path(folder) == root and d == ".git"))
        for name in [*files, *dirs]:
            path = Path(folder, name)
            relative = path.relative_to(root).as_posix()
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                state[relative] = ("link", os.readlink(path).encode(), False)
            elif stat.S_ISDIR(info.st_mode):
                state[relative] = ("dir", b"", False)
            else:
                state[relative] = ("file", path.read_bytes(), bool(info.st_mode & 0o100))
    return state


def dot_git_digest(project: Path) -> dict[str, str]:
    """Every file under the project's `.git`, by content: the index, HEAD, refs, stash,
    config and hooks. Read before anything runs git in the project."""
    digest = {}
    for folder, _dirs, files in os.walk(project / ".git"):
        for name in files:
            path = Path(folder, name)
            digest[path.relative_to(project).as_posix()] = hashlib.sha256(
                path.read_bytes()
            ).hexdigest()
    return digest


def project_git_state(project: Path) -> tuple[dict[str, str], bytes, str, str, str]:
    """(.git contents, index bytes, status --porcelain=v2, HEAD, stash list)."""
    digest = dot_git_digest(project)
    index = (project / ".git" / "index").read_bytes()
    status = git(project, "status", "--porcelain=v2", "--untracked-files=all")
    return digest, index, status, git(project, "rev-parse", "HEAD"), git(project, "stash", "list")


def meta(turn: int, prompt: str = "", session: str = "s1") -> CheckpointMeta:
    return CheckpointMeta(session, turn, prompt or f"prompt of turn {turn}")
