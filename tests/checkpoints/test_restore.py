"""Restoring a checkpoint: byte for byte, the project's git untouched, and undoable."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from caretz.checkpoints import RestoreFailed, SnapshotLimits
from tests.checkpoints.helpers import meta, project_git_state, tree_state, write


def turn_through_file_writes(project: Path) -> None:
    """What the file tools do: create, edit, delete, rename, chmod, a symlink."""
    write(project, "src/new_module.py", "NEW = True\n")
    write(project, "src/main.py", "print('rewritten by the agent')\n")
    (project / "tool.sh").chmod(0o644)
    (project / "src/lib.py").rename(project / "src/library.py")
    (project / "notes.txt").unlink()
    os.symlink("src/library.py", project / "lib-link")
    write(project, "deep/er/folder/file.txt", "deep\n")


def turn_through_bash(project: Path) -> None:
    script = """
        set -e
        echo 'created by bash' > from_bash.txt
        printf 'edited\\r\\nby bash\\n' > src/main.py
        git mv -k src/lib.py src/moved.py 2>/dev/null || mv src/lib.py src/moved.py
        rm notes.txt
        chmod +x src/moved.py
        mkdir -p made/by/bash && echo x > made/by/bash/x
        ln -sf ../tool.sh made/tool-link
        rm -f tool.sh && printf '#!/bin/sh\\necho replaced\\n' > tool.sh
        echo 'still ignored' >> debug.log
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_DIR"] = "/nonexistent"  # `git mv` must not touch the project's index
    subprocess.run(["bash", "-c", textwrap.dedent(script)], cwd=project, env=env, check=True)


@pytest.mark.parametrize("turn", [turn_through_file_writes, turn_through_bash])
@pytest.mark.parametrize("fixture", ["repo_project", "plain_project_with_files"])
def test_a_turn_is_undone_byte_for_byte(request, turn, fixture, open_store):
    project = request.getfixturevalue(fixture)
    is_repo = (project / ".git").exists()
    git_before = project_git_state(project) if is_repo else None
    tree_before = tree_state(project)
    store = open_store(project)

    checkpoint = store.checkpoint(meta(1, "refactor"))
    turn(project)
    store.settle(meta(1))
    after_turn = tree_state(project)
    assert after_turn != tree_before
    result = store.restore(checkpoint, meta(2))

    restored = tree_state(project)
    if "debug.log" in tree_before:  # ignored: the restore leaves it as the turn left it
        assert restored.pop("debug.log") == after_turn["debug.log"]
        tree_before.pop("debug.log")
    assert restored == tree_before
    assert result.changes
    if is_repo:
        assert project_git_state(project) == git_before


@pytest.fixture
def plain_project_with_files(plain_project: Path) -> Path:
    write(plain_project, "src/main.py", "print('main')\n")
    write(plain_project, "src/lib.py", "X = 1\n")
    write(plain_project, "tool.sh", "#!/bin/sh\necho tool\n", executable=True)
    write(plain_project, "notes.txt", "notes\n")
    return plain_project


def test_ignored_files_are_never_touched(repo_project, open_store):
    store = open_store(repo_project)
    checkpoint = store.checkpoint(meta(1))
    write(repo_project, "debug.log", "a new log line\n")
    write(repo_project, "build/new.bin", "fresh build\n")
    write(repo_project, "src/main.py", "changed\n")
    store.settle(meta(1))

    store.restore(checkpoint, meta(2))

    assert (repo_project / "debug.log").read_text() == "a new log line\n"
    assert (repo_project / "build/new.bin").read_text() == "fresh build\n"
    assert (repo_project / "build/out.bin").read_text() == "ignored build output\n"
    assert (repo_project / "src/main.py").read_text() == "print('main, staged and then edited')\n"


def test_rewinding_a_rewind_brings_the_turn_back(plain_project_with_files, open_store):
    project = plain_project_with_files
    store = open_store(project)
    checkpoint = store.checkpoint(meta(1))
    turn_through_file_writes(project)
    store.settle(meta(1))
    after_turn = tree_state(project)

    rewind = store.restore(checkpoint, meta(1))
    again = store.restore(rewind.before, meta(1))

    assert tree_state(project) == after_turn
    kinds = [(cp.kind, cp.restored_to) for cp in store.list("s1")]
    assert kinds == [("turn", None), ("rewind", checkpoint.id), ("rewind", rewind.before.id)]
    assert again.before.tree != rewind.before.tree


def test_type_changes_are_reverted(plain_project, open_store):
    store = open_store(plain_project)
    before = tree_state(plain_project)
    checkpoint = store.checkpoint(meta(1))
    (plain_project / "README.md").unlink()
    write(plain_project, "README.md/inside.txt", "a folder where a file was\n")
    shutil.rmtree(plain_project / "src")
    write(plain_project, "src", "a file where a folder was\n")
    (plain_project / "app-link").unlink()
    write(plain_project, "app-link", "a file where a link was\n")
    (plain_project / "run.sh").unlink()
    os.symlink("README.md", plain_project / "run.sh")
    store.settle(meta(1))

    store.restore(checkpoint, meta(2))

    assert tree_state(plain_project) == before


def test_a_restore_of_some_paths_leaves_the_others(plain_project, open_store):
    store = open_store(plain_project)
    checkpoint = store.checkpoint(meta(1))
    write(plain_project, "src/app.py", "changed app\n")
    write(plain_project, "src/util.py", "changed util\n")
    write(plain_project, "README.md", "changed readme\n")
    store.settle(meta(1))

    link = plain_project.parent / "link-to-project"
    os.symlink(plain_project, link)
    result = store.restore(checkpoint, meta(2), paths=["src/app.py", str(link / "README.md")])

    assert (plain_project / "src/app.py").read_text() == "print('app')\n"
    assert (plain_project / "README.md").read_text() == "# plain\n"
    assert (plain_project / "src/util.py").read_text() == "changed util\n"
    assert sorted(c.path for c in result.changes) == ["README.md", "src/app.py"]


def test_a_file_a_snapshot_does_not_hold_is_moved_aside_not_lost(plain_project, open_store):
    store = open_store(plain_project, limits=SnapshotLimits(size_cap=1024))
    checkpoint = store.checkpoint(meta(1))
    (plain_project / "src/util.py").unlink()
    store.settle(meta(1))
    write(plain_project, "src/util.py", "z" * 4096)  # over the cap now: in no snapshot

    preview = store.preview(checkpoint)
    result = store.restore(checkpoint, meta(2), force=True)

    assert [c.path for c in preview.conflicts] == ["src/util.py"]
    assert "not in any checkpoint" in preview.conflicts[0].reason
    assert (plain_project / "src/util.py").read_text() == "def util():\n    return 1\n"
    [(path, moved_to)] = result.displaced
    assert path == "src/util.py"
    assert Path(moved_to).read_text() == "z" * 4096


def test_progress_is_reported_for_every_step(plain_project, open_store):
    store = open_store(plain_project)
    checkpoint = store.checkpoint(meta(1))
    write(plain_project, "a.txt", "a\n")
    write(plain_project, "src/app.py", "changed\n")
    store.settle(meta(1))
    steps: list[tuple[int, int, str]] = []

    store.restore(
        checkpoint, meta(2), on_step=lambda n, total, path: steps.append((n, total, path))
    )

    assert steps == [(1, 2, "a.txt"), (2, 2, "src/app.py")]


HALF_WAY = """
import sys
from pathlib import Path
from caretz.checkpoints import CheckpointMeta, CheckpointStore, RestoreFailed
store = CheckpointStore.open(Path(sys.argv[1]), Path(sys.argv[2]))
try:
    store.restore(store.get(sys.argv[3]), CheckpointMeta("s1", 2))
except RestoreFailed as failure:
    print("rolled back" if failure.rolled_back else "not rolled back")
    print(failure)
    sys.exit(3)
"""


def test_a_restore_failing_half_way_leaves_the_tree_as_it_was(
    plain_project, open_store, data_dir, tmp_path
):
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.fail("bwrap is not installed; this test makes a folder read-only with it")
    write(plain_project, "zz-locked/kept.txt", "locked before\n")
    store = open_store(plain_project)
    checkpoint = store.checkpoint(meta(1))
    turn_changes(plain_project)
    store.settle(meta(1))
    before_restore = tree_state(plain_project)
    rewinds_before = store.list("s1")

    # In a mount namespace where zz-locked/ is read-only: the restore gets through the
    # other files first (zz- sorts last), then cannot write there.
    locked = plain_project / "zz-locked"
    command = [
        bwrap, "--bind", "/", "/", "--ro-bind", str(locked), str(locked),
        "--dev", "/dev", "--proc", "/proc",
        sys.executable, "-c", HALF_WAY, str(data_dir), str(plain_project), checkpoint.id,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=Path.cwd())

    assert done.returncode == 3, done.stderr
    assert done.stdout.splitlines()[0] == "rolled back"
    assert "zz-locked/kept.txt" in done.stdout
    assert tree_state(plain_project) == before_restore
    assert store.list("s1") == rewinds_before


def turn_changes(project: Path) -> None:
    write(project, "a-new.txt", "new\n")
    write(project, "src/app.py", "changed app\n")
    (project / "README.md").unlink()
    write(project, "zz-locked/kept.txt", "changed by the turn\n")


def test_an_interrupt_half_way_rolls_back_and_goes_on(plain_project, open_store):
    store = open_store(plain_project)
    checkpoint = store.checkpoint(meta(1))
    turn_changes(plain_project)
    store.settle(meta(1))
    before_restore = tree_state(plain_project)

    def interrupt(number: int, total: int, path: str) -> None:
        if number == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        store.restore(checkpoint, meta(2), on_step=interrupt)

    assert tree_state(plain_project) == before_restore


def test_a_failed_restore_removes_the_symlinks_and_files_it_made(plain_project, open_store):
    store = open_store(plain_project)
    checkpoint = store.checkpoint(meta(1))  # holds app-link (a symlink) and run.sh
    (plain_project / "app-link").unlink()
    (plain_project / "run.sh").unlink()
    write(plain_project, "src/util.py", "changed by the turn\n")
    store.settle(meta(1))
    before_restore = tree_state(plain_project)

    def fail_last(number: int, total: int, path: str) -> None:
        if number == total:  # after the link and run.sh are back: src/util.py
            raise PermissionError(errno.EACCES, "Permission denied", str(plain_project / path))

    with pytest.raises(RestoreFailed) as failed:
        store.restore(checkpoint, meta(2), on_step=fail_last)

    assert failed.value.rolled_back
    assert "src/util.py: Permission denied" in str(failed.value)
    assert not os.path.lexists(plain_project / "app-link")
    assert tree_state(plain_project) == before_restore
