"""Without git on PATH: one line, and the session goes on without checkpoints."""

from __future__ import annotations

import subprocess
import sys

from caretz.checkpoints import GIT_MISSING

OPEN_WITHOUT_GIT = """
import sys
from pathlib import Path
from caretz.checkpoints import CheckpointStore, GitNotFound
try:
    CheckpointStore.open(Path(sys.argv[1]), Path(sys.argv[2]))
except GitNotFound as missing:
    print(missing)
    print("the session goes on")
"""


def test_git_missing_is_one_line_and_not_a_crash(tmp_path, plain_project):
    empty_bin = tmp_path / "bin-without-git"
    empty_bin.mkdir()

    done = subprocess.run(
        [sys.executable, "-c", OPEN_WITHOUT_GIT, str(tmp_path / "data"), str(plain_project)],
        env={"PATH": str(empty_bin), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [GIT_MISSING, "the session goes on"]
    assert GIT_MISSING == "git not found: checkpoints are off; install git"
    assert not (tmp_path / "data").exists()
