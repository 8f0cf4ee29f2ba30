"""A repository's first checkpoint starts from the project's own git index: the files
unchanged since it are not hashed, their blobs borrowed from the project's object store
until they change; a restore still puts back exact bytes, or refuses and changes nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import zlib
from pathlib import Path

from caretz.checkpoints import ProjectTooLarge, RestoreFailed, SnapshotLimits
from tests.checkpoints.helpers import git, meta, tree_state, write


def own_objects(store) -> set[str]:
    """Every object in the shadow's own store (not the one it borrows from)."""
    done = subprocess.run(
        [store.git.git, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"],
        env=store.git.env(),
        capture_output=True,
        check=True,
    )
    return set(done.stdout.decode().split())


def blob_of(project: Path, path: str) -> str:
    return git(project, "hash-object", path).strip()


def tree_plain_git_writes(project: Path, tmp_path: Path) -> str:
    """The tree of the working tree as the project's git sees it, from a scratch index."""
    index = tmp_path / "scratch-index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    subprocess.run(["git", "add", "-A"], cwd=project, env=env, check=True)
    done = subprocess.run(
        ["git", "write-tree"], cwd=project, env=env, check=True, capture_output=True
    )
    return done.stdout.decode().strip()


def test_the_first_checkpoint_hashes_only_what_differs_from_the_projects_index(
    repo_project, open_store, tmp_path
):
    for number in range(40):
        write(repo_project, f"lib/m{number}.py", f"N = {number}\n")
    git(repo_project, "add", "lib")
    write(repo_project, "lib/m3.py", "N = 'edited, not staged'\n")
    store = open_store(repo_project)

    checkpoint = store.checkpoint(meta(1))

    assert store.git.borrowed == (repo_project / ".git" / "objects").resolve()
    assert checkpoint.tree == tree_plain_git_writes(repo_project, tmp_path)
    own = own_objects(store)
    for path in ("lib/m3.py", "src/main.py", "notes.txt"):  # edited since staged; untracked
        assert blob_of(repo_project, path) in own
    for path in ("lib/m4.py", "src/lib.py", "tool.sh", ".gitignore"):  # as the index has them
        assert blob_of(repo_project, path) not in own
    # Every tree is the shadow's own: comparing checkpoints never needs the project's.
    trees = store.git.text("ls-tree", "-r", "-d", "--format=%(objectname)", checkpoint.tree)
    assert {checkpoint.tree, *trees.split()} <= own


def test_a_file_changed_after_a_checkpoint_is_copied_in_before_the_repository_can_lose_it(
    repo_project, open_store
):
    store = open_store(repo_project)
    before = tree_state(repo_project)
    checkpoint = store.checkpoint(meta(1))
    old_tool = blob_of(repo_project, "tool.sh")
    write(repo_project, "tool.sh", "#!/bin/sh\necho changed by a command\n", executable=True)
    (repo_project / "src" / "lib.py").unlink()
    write(repo_project, "src/new.py", "NEW = 1\n")
    store.settle(meta(1))
    assert old_tool in own_objects(store)
    shutil.rmtree(repo_project / ".git")  # a later turn's command, and a compaction
    store.compact()

    store.restore(checkpoint, meta(2))

    assert tree_state(repo_project) == before  # (`.git` aside, which is not saved)


def test_a_blob_the_repository_lost_before_a_snapshot_saw_the_change_fails_the_restore(
    repo_project, open_store
):
    store = open_store(repo_project)
    checkpoint = store.checkpoint(meta(1))
    write(repo_project, "tool.sh", "#!/bin/sh\necho changed\n", executable=True)
    write(repo_project, "src/new.py", "NEW = 1\n")
    shutil.rmtree(repo_project / ".git")  # the same turn: no snapshot in between
    store.settle(meta(1))
    now = tree_state(repo_project)

    try:
        store.restore(checkpoint, meta(2))
    except RestoreFailed as failure:
        message = str(failure)
    else:
        raise AssertionError("the restore went ahead without tool.sh's old bytes")

    assert "tool.sh: no saved copy of its content" in message
    assert "the project's own git objects" in message
    assert "every file is as it was before the restore" in message
    assert tree_state(repo_project) == now


def test_a_borrowed_blob_whose_bytes_were_changed_is_refused(repo_project, open_store):
    store = open_store(repo_project)
    checkpoint = store.checkpoint(meta(1))
    sha = blob_of(repo_project, "src/lib.py")
    loose = repo_project / ".git" / "objects" / sha[:2] / sha[2:]
    assert loose.is_file()  # the commit's blobs are loose objects in this repository
    write(repo_project, "src/lib.py", "X = 'changed'\n")
    forged = b"X = 'forged'\n"
    os.chmod(loose, 0o644)
    loose.write_bytes(zlib.compress(b"blob %d\0" % len(forged) + forged))
    # The store copies it in when it sees the change: the copy is as bad as the source.
    store.settle(meta(1))

    try:
        store.restore(checkpoint, meta(2))
    except RestoreFailed as failure:
        assert "src/lib.py: its saved copy" in str(failure)
        assert "does not match its name" in str(failure)
    else:
        raise AssertionError("a blob with other bytes was written")
    assert (repo_project / "src" / "lib.py").read_text() == "X = 'changed'\n"


def test_assume_unchanged_and_skip_worktree_do_not_hide_a_changed_file(repo_project, open_store):
    write(repo_project, "src/lib.py", "X = 'changed, marked unchanged'\n")
    git(repo_project, "update-index", "--assume-unchanged", "src/lib.py")
    write(repo_project, "tool.sh", "#!/bin/sh\necho skipped but changed\n", executable=True)
    git(repo_project, "update-index", "--skip-worktree", "tool.sh")
    store = open_store(repo_project)

    checkpoint = store.checkpoint(meta(1))

    for path in ("src/lib.py", "tool.sh"):
        listed = store.git.text("ls-tree", checkpoint.tree, path).split()
        assert listed[2] == blob_of(repo_project, path)


def test_conflicted_files_are_saved_as_they_are_on_disk(repo_project, open_store):
    git(repo_project, "stash", "-q", "-u")  # the work in progress out of the way
    git(repo_project, "checkout", "-q", "-b", "other")
    write(repo_project, "src/lib.py", "X = 'other'\n")
    git(repo_project, "commit", "-qam", "other")
    git(repo_project, "checkout", "-q", "-")
    write(repo_project, "src/lib.py", "X = 'main'\n")
    git(repo_project, "commit", "-qam", "main")
    merge = subprocess.run(["git", "merge", "-q", "other"], cwd=repo_project, capture_output=True)
    assert merge.returncode != 0  # a conflict in src/lib.py
    store = open_store(repo_project)

    checkpoint = store.checkpoint(meta(1))

    listed = store.git.text("ls-tree", checkpoint.tree, "src/lib.py").split()
    assert listed[2] == blob_of(repo_project, "src/lib.py")
    assert b"<<<<<<<" in (repo_project / "src" / "lib.py").read_bytes()


def test_an_index_git_cannot_read_by_itself_is_not_borrowed_from(
    repo_project, open_store, tmp_path
):
    git(repo_project, "update-index", "--split-index")  # its shared part is in .git
    store = open_store(repo_project)

    checkpoint = store.checkpoint(meta(1))

    assert store.git.borrowed is None
    assert checkpoint.tree == tree_plain_git_writes(repo_project, tmp_path)
    assert blob_of(repo_project, "src/lib.py") in own_objects(store)


def test_the_size_guard_counts_what_a_repository_does_not_already_hold(
    repo_project, plain_project, open_store
):
    for project in (repo_project, plain_project):
        for number in range(60):
            write(project, f"data/{number}.txt", f"{number}\n")
    git(repo_project, "add", "data")
    limits = SnapshotLimits(max_files=50)

    checkpoint = open_store(repo_project, limits=limits).checkpoint(meta(1))
    try:
        open_store(plain_project, limits=limits).checkpoint(meta(1, session="s2"))
    except ProjectTooLarge as refused:
        message = str(refused)
    else:
        raise AssertionError("65 files in a plain folder went past a limit of 50")

    assert checkpoint.tree == tree_plain_git_writes(repo_project, repo_project.parent)
    assert "65 files" in message
    assert "in a git repository, only the files that differ from its index are copied" in message


def test_a_repository_whose_path_holds_a_colon_is_borrowed_from_all_the_same(tmp_path, open_store):
    project = tmp_path / 'odd:"name'
    write(project, "kept.txt", "as committed\n")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "start")
    store = open_store(project)
    checkpoint = store.checkpoint(meta(1))
    write(project, "kept.txt", "changed\n")
    store.settle(meta(1))  # the old bytes are copied in, read through the quoted path
    shutil.rmtree(project / ".git")

    store.restore(checkpoint, meta(2))

    assert (project / "kept.txt").read_text() == "as committed\n"


def test_an_index_that_is_not_a_plain_file_is_not_copied(repo_project, open_store, tmp_path):
    """A command can put a link where the index was (to /dev/zero, say): it is not
    followed, and the snapshot is taken the ordinary way."""
    index = repo_project / ".git" / "index"
    index.unlink()
    index.symlink_to("/dev/zero")
    store = open_store(repo_project)

    checkpoint = store.checkpoint(meta(1))

    assert store.git.borrowed is None
    assert {"src/main.py", "notes.txt", "tool.sh"} <= set(
        store.git.text("ls-tree", "-r", "--name-only", checkpoint.tree).splitlines()
    )
