"""A command's changes rewound on a tree of a thousand files, in a repository (whose first
checkpoint starts from the project's own git index and saves only what differs from
it) and in a plain folder (every file saved): the real CLI, real git, a scripted turn."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.checkpoints.helpers import git, require_git, tree_state, write
from tests.e2e.conftest import Caretz
from tests.modelserver import ModelServer, text, tool

FILES = 1_000
# One command: a tracked file changed and one deleted, an untracked file changed and a
# new one made, a file written in an ignored folder.
COMMAND = (
    "printf 'changed by the command\\n' >> src/p0/m1.py && rm src/p1/m400.py"
    " && printf 'changed\\n' > notes.txt && mkdir -p docs && printf 'new\\n' > docs/new.md"
    " && printf 'generated\\n' > build/gen.txt"
)


@pytest.fixture(autouse=True)
def git_binary() -> str:
    return require_git()


def fill(project: Path) -> None:
    """A thousand small modules, an ignored build folder, an untracked note."""
    for number in range(FILES):
        write(project, f"src/p{number // 300}/m{number}.py", f"VALUE = {number}\n")
    write(project, ".gitignore", "build/\n")
    write(project, "build/old.txt", "ignored\n")


def shadow_blobs(caretz: Caretz) -> int:
    """The blobs in the shadow repository's own object store (not what it borrows)."""
    [shadow] = (caretz.data_dir / "checkpoints").glob("*/git")
    done = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch-check"],
        env={"GIT_DIR": str(shadow), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        check=True,
    )
    return sum(1 for line in done.stdout.decode().splitlines() if " blob " in line)


@pytest.mark.parametrize("kind", ["repo", "plain"])
def test_a_commands_changes_are_rewound_and_a_repository_is_saved_by_what_differs(
    caretz: Caretz, server: ModelServer, workspace: Path, kind: str
):
    fill(workspace)
    if kind == "repo":
        git(workspace, "init", "-q")
        git(workspace, "add", "-A")
        git(workspace, "commit", "-qm", "start")
        write(workspace, "src/p1/m300.py", "VALUE = 'changed before the session'\n")
    write(workspace, "notes.txt", "untracked notes\n")
    before = tree_state(workspace)
    server.add(tool("bash", command=COMMAND), text("done"))

    run = caretz("-p", "reshape the project")

    assert run.code == 0, run.stderr
    [created] = [e for e in caretz.events(run.session_id) if e["type"] == "Checkpoint.Created"]
    assert isinstance(created["duration_s"], float)
    after = tree_state(workspace)
    assert "src/p1/m400.py" not in after and after["docs/new.md"][1] == b"new\n"
    # The repository's first checkpoint holds its own copy of the two files that differ
    # from the index (the changed module and the note) and, once the turn is settled,
    # what the command changed: the old bytes of the two files it changed or deleted,
    # the new ones of three. Every other blob stays in the project's own store.
    blobs = shadow_blobs(caretz)
    assert blobs <= 10 if kind == "repo" else blobs > FILES

    rewound = caretz("rewind", "--turn", "1", "--files-only")

    assert rewound.code == 0, rewound.stderr
    now = tree_state(workspace)
    assert now["build/gen.txt"] == after["build/gen.txt"]  # ignored: left as it is
    del now["build/gen.txt"]
    assert now == before
