"""Which folder a session's checkpoints cover: the git top level of the working
directory, else the working directory itself."""

from __future__ import annotations

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
