"""The user's repository as caretz's worktree commands see it, through the trusted git.

git is the program caretz/trusted.py finds on PATH outside the repository (a `git` a
sandboxed command planted in the project's `.venv/bin` is never run), with no inherited
`GIT_*` variable that would point it at another repository or index. The user's own git
configuration applies, as when they run git themselves: a worktree checks out with their
filters (LFS) and attributes.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from caretz.trusted import find_program, untrusted_roots

# Only these reach git from the environment; the rest (GIT_DIR, GIT_WORK_TREE,
# GIT_INDEX_FILE, GIT_CONFIG_PARAMETERS…) would make it act on something else.
_KEPT_GIT_VARIABLES = ("GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_SSH_COMMAND")


class WorktreeError(Exception):
    """What stops a worktree command, in one line; `code` is the exit code."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class RepoGit:
    """The trusted git, run in a folder of the user's repository."""

    program: str
    env: Mapping[str, str]

    @classmethod
    def find(cls, folder: Path, env: Mapping[str, str]) -> RepoGit:
        """The first git on PATH that no sandboxed command in `folder` could have
        written; WorktreeError saying why when there is none caretz may run."""
        found = find_program("git", env.get("PATH", ""), untrusted_roots([folder]))
        if found.path is None:
            raise WorktreeError(found.notice() or "git not found: install git")
        return cls(found.path, git_environment(env))

    def run(self, folder: Path, *args: str) -> str:
        """git's standard output; WorktreeError with git's own last line when it fails."""
        done = self.call(folder, *args)
        if done.returncode != 0:
            raise WorktreeError(last_line(done.stderr) or f"git {args[0]} failed")
        return done.stdout

    def call(self, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
        """git in `folder`; the caller reads the exit code."""
        return subprocess.run(
            [self.program, *args],
            cwd=folder,
            env=dict(self.env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )


def git_environment(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without the GIT_* variables that redirect git, in the C locale (its
    messages are read), never asking on a terminal."""
    kept = {
        name: value
        for name, value in env.items()
        if not name.startswith("GIT_") or name in _KEPT_GIT_VARIABLES
    }
    return {**kept, "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1].removeprefix("fatal: ").removeprefix("error: ") if lines else ""


def absolute(text: str, base: Path) -> Path:
    """A path git printed (absolute, or relative to `base`), resolved."""
    return Path(os.path.realpath(base / text.strip()))
