"""Which folder a session's checkpoints cover (the git top level of the working
directory, else the working directory itself), and where that folder's own git keeps
its index and objects."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


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
    if not dot_git.is_file():
        return None
    try:
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    git_dir = (project / text[len("gitdir:") :].strip()).resolve()
    common_dir = git_dir
    common = git_dir / "commondir"
    if common.is_file():
        try:
            common_dir = (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
        except OSError:
            return None
    return ProjectGit(git_dir, common_dir)
