"""Which folder a session's checkpoints cover (the git top level of the working
directory, else the working directory itself), and where that folder's own git keeps
its index and objects."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from caretz.sandbox.door import ProjectDoor, read_beneath

POINTER_MAX_BYTES = 4096  # a linked worktree's `.git` file: one `gitdir:` line


def project_root(workspace: Path) -> Path:
    """The nearest folder at or above `workspace` holding a `.git` (a folder, or the
    file of a linked worktree or submodule); `workspace` when there is none.

    Found by looking, not by running git, so the project's repository is never
    touched (no git process reads its config or its index).
    """
    start = workspace.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


@dataclass(frozen=True)
class ProjectGit:
    """The project's own repository, as checkpoints read it (never write it)."""

    git_dir: Path  # a linked worktree's own git dir: its index
    common_dir: Path  # the repository's: objects, info/exclude

    @property
    def index(self) -> Path:
        return self.git_dir / "index"

    @property
    def objects(self) -> Path:
        return self.common_dir / "objects"

    @property
    def exclude_file(self) -> Path:
        return self.common_dir / "info" / "exclude"


def project_git(project: Path) -> ProjectGit | None:
    """The repository whose work tree `project` is (`.git` a folder, or the file of a
    linked worktree), found by reading, not by running git; None when there is none."""
    dot_git = project / ".git"
    if dot_git.is_dir():
        return ProjectGit(dot_git, dot_git)
    try:  # a linked worktree's pointer, through the door: no FIFO, no symlink out
        text = read_beneath(project, ".git", POINTER_MAX_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    text = text.strip()
    if not text.startswith("gitdir:"):
        return None
    git_dir = (project / text[len("gitdir:") :].strip()).resolve()
    common_dir = git_dir
    try:  # the repository's own folder, outside the project: a regular file, bounded
        common = ProjectDoor.users_own().text(git_dir / "commondir", POINTER_MAX_BYTES)
    except FileNotFoundError:
        common = ""
    except OSError:
        return None
    if common.strip():
        common_dir = (git_dir / common.strip()).resolve()
    return ProjectGit(git_dir, common_dir)
