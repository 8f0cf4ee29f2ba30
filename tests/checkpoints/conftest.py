"""Real git in tmp dirs: projects (a plain folder, a repository with work in progress)
and a checkpoint store with a hand-moved clock."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from caretz.checkpoints import CheckpointStore
from tests.checkpoints.helpers import Clock, make_repo_with_work_in_progress, require_git, write


@pytest.fixture(autouse=True)
def git_binary() -> str:
    """Every checkpoint test needs the real git: fail, never skip, without it."""
    return require_git()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def plain_project(tmp_path: Path) -> Path:
    """A folder that is not a git repository."""
    project = tmp_path / "plain"
    write(project, "README.md", "# plain\n")
    write(project, "src/app.py", "print('app')\n")
    write(project, "src/util.py", "def util():\n    return 1\n")
    write(project, "run.sh", "#!/bin/sh\necho run\n", executable=True)
    os.symlink("src/app.py", project / "app-link")
    return project


@pytest.fixture
def repo_project(tmp_path: Path) -> Path:
    """A git repository with a commit, a stash, staged work, unstaged work and ignores."""
    project = tmp_path / "repo"
    write(project, ".gitignore", "*.log\nbuild/\n")
    write(project, "src/main.py", "print('main')\n")
    write(project, "src/lib.py", "X = 1\n")
    write(project, "tool.sh", "#!/bin/sh\necho tool\n", executable=True)
    make_repo_with_work_in_progress(project)
    write(project, "debug.log", "ignored log\n")
    write(project, "build/out.bin", "ignored build output\n")
    return project


@pytest.fixture
def open_store(data_dir: Path, clock: Clock):
    def opener(project: Path, **kwargs) -> CheckpointStore:
        return CheckpointStore.open(data_dir, project, clock=clock, **kwargs)

    return opener
