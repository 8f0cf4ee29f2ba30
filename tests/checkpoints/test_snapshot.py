"""What a checkpoint holds: the working tree as the project's ignore rules see it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from caretz.checkpoints import ProjectTooLarge, SnapshotLimits
from caretz.checkpoints.snapshot import BULK_THRESHOLD, literal_pattern
from tests.checkpoints.helpers import (
    dot_git_digest,
    git,
    meta,
    project_git_state,
    tree_state,
    write,
)


def files_in(store, checkpoint) -> dict[str, str]:
    """path -> mode of every file in a checkpoint's tree."""
    listing = store.git.run("ls-tree", "-r", "-z", checkpoint.tree).split(b"\0")
    found = {}
    for line in filter(None, listing):
        info, path = line.split(b"\t", 1)
        found[path.decode()] = info.split(b" ")[0].decode()
    return found


def test_a_checkpoint_in_a_plain_folder_holds_every_file_with_its_mode(plain_project, open_store):
    store = open_store(plain_project)

    checkpoint = store.checkpoint(meta(1, "fix the tests\nand then the docs", session="s-1"))

    assert files_in(store, checkpoint) == {
        "README.md": "100644",
        "src/app.py": "100644",
        "src/util.py": "100644",
        "run.sh": "100755",
        "app-link": "120000",
    }
    assert (checkpoint.session, checkpoint.turn, checkpoint.kind) == ("s-1", 1, "turn")
    assert checkpoint.prompt == "fix the tests"
    assert checkpoint.time == 1_700_000_001.0
    assert not (plain_project / ".git").exists()


def test_a_later_checkpoint_lists_what_changed_since_the_one_before(plain_project, open_store):
    store = open_store(plain_project)
    first = store.checkpoint(meta(1))
    write(plain_project, "src/app.py", "print('changed')\n")
    write(plain_project, "new.txt", "new\n")
    (plain_project / "README.md").unlink()

    second = store.checkpoint(meta(2))

    assert first.changed == ()
    assert sorted(second.changed) == ["README.md", "new.txt", "src/app.py"]
    assert second.changed_count == 3
    assert [cp.id for cp in store.list("s1")] == [first.id, second.id]


def test_nothing_changed_gives_the_same_tree(plain_project, open_store):
    store = open_store(plain_project)
    first = store.checkpoint(meta(1))
    second = store.checkpoint(meta(2))
    assert second.tree == first.tree
    assert second.id != first.id
    assert second.changed == ()


def test_ignore_rules_of_the_project_are_honoured_and_dot_git_left_out(repo_project, open_store):
    write(repo_project, "src/.gitignore", "generated_*\n")
    write(repo_project, "src/generated_api.py", "# generated\n")
    write(repo_project, ".git/info/exclude", "secret.env\n")
    write(repo_project, "secret.env", "TOKEN=1\n")
    store = open_store(repo_project)

    files = files_in(store, store.checkpoint(meta(1)))

    assert "debug.log" not in files
    assert "build/out.bin" not in files
    assert "src/generated_api.py" not in files
    assert "secret.env" not in files
    assert not any(path.startswith(".git/") for path in files)
    assert {"notes.txt", "src/main.py", "src/.gitignore", "tool.sh"} <= set(files)


def test_ignore_rules_written_during_a_session_do_not_shrink_its_checkpoints(
    plain_project, open_store
):
    store = open_store(plain_project)
    assert "src/util.py" in files_in(store, store.checkpoint(meta(1)))
    write(plain_project, ".gitignore", "*\n")
    write(plain_project, "src/util.py", "edited\n")
    second = files_in(store, store.checkpoint(meta(2)))
    assert {"src/util.py", "README.md", "run.sh"} <= set(second)
    # The next session's store judges by the rules as they are at its start.
    later = open_store(plain_project)
    assert "src/util.py" not in files_in(later, later.checkpoint(meta(3, session="s-2")))


def test_the_exclude_list_is_the_one_of_the_session_start(repo_project, open_store):
    store = open_store(repo_project)
    first = files_in(store, store.checkpoint(meta(1)))
    write(repo_project, ".git/info/exclude", "*\n")
    write(repo_project, "src/main.py", "print('edited')\n")
    write(repo_project, "new.txt", "new\n")
    second = store.checkpoint(meta(2))
    assert set(first) | {"new.txt"} <= set(files_in(store, second))
    assert "src/main.py" in second.changed


def test_files_the_project_tracks_are_covered_even_when_ignored(repo_project, open_store):
    write(repo_project, "build/kept.cfg", "tracked on purpose\n")
    git(repo_project, "add", "-f", "build/kept.cfg")
    store = open_store(repo_project)
    files = files_in(store, store.checkpoint(meta(1)))
    assert "build/kept.cfg" in files and "build/out.bin" not in files


def test_files_over_the_size_cap_are_left_out_with_a_note(plain_project, open_store):
    write(plain_project, "data/big.bin", "x" * 2048)
    write(plain_project, "data/small.bin", "x" * 100)
    store = open_store(plain_project, limits=SnapshotLimits(size_cap=1024))

    first = store.checkpoint(meta(1))
    write(plain_project, "src/util.py", "y" * 4096)  # a snapshotted file grows past the cap
    second = store.checkpoint(meta(2))

    assert "data/big.bin" not in files_in(store, first)
    assert "data/small.bin" in files_in(store, first)
    assert first.left_out == ("data/big.bin (0.0 MB)",)
    assert "src/util.py" not in files_in(store, second)
    assert sorted(second.left_out) == ["data/big.bin (0.0 MB)", "src/util.py (0.0 MB)"]


def test_a_nested_git_repository_is_left_out_with_a_note(plain_project, open_store):
    nested = plain_project / "vendor" / "lib"
    write(nested, "lib.py", "LIB = 1\n")
    git(nested.parent, "init", "-q", "lib")
    git(nested, "add", "-A")
    git(nested, "commit", "-qm", "lib")
    store = open_store(plain_project)

    checkpoint = store.checkpoint(meta(1))

    assert not any(path.startswith("vendor/") for path in files_in(store, checkpoint))
    assert checkpoint.left_out == ("vendor/lib/ (nested git repository)",)


def test_the_data_dir_inside_the_project_is_never_snapshotted(plain_project, clock):
    from caretz.checkpoints import CheckpointStore

    store = CheckpointStore.open(plain_project / ".caretz-data", plain_project, clock=clock)
    store.checkpoint(meta(1))
    second = store.checkpoint(meta(2))
    assert not any(p.startswith(".caretz-data") for p in files_in(store, second))


def test_line_endings_and_attributes_never_change_the_bytes(plain_project, open_store):
    write(plain_project, ".gitattributes", "* text=auto eol=lf\n*.txt ident\n")
    crlf = "one\r\ntwo\r\n$Id$\r\n"
    write(plain_project, "dos.txt", crlf)
    store = open_store(plain_project)

    checkpoint = store.checkpoint(meta(1))

    blob = store.git.run("cat-file", "blob", f"{checkpoint.tree}:dos.txt")
    assert blob == crlf.encode()


def test_a_large_first_checkpoint_is_the_tree_plain_git_would_write(tmp_path, open_store):
    project = tmp_path / "many"
    for number in range(BULK_THRESHOLD + 100):
        write(project, f"pkg{number % 7}/mod{number}.py", f"VALUE = {number}\n")
    write(project, 'odd/"quoted"\\name.txt', "odd\n")
    store = open_store(project)

    checkpoint = store.checkpoint(meta(1))

    plain = tmp_path / "plain-git"
    env = {"GIT_DIR": str(plain), "GIT_WORK_TREE": str(project), "PATH": os.environ["PATH"]}
    subprocess.run(["git", "init", "-q", "--bare", str(plain)], check=True)
    subprocess.run(["git", "add", "-A"], cwd=project, env=env, check=True)
    expected = subprocess.run(
        ["git", "write-tree"], cwd=project, env=env, capture_output=True, check=True
    ).stdout.decode()
    assert checkpoint.tree == expected.strip()


def test_the_users_git_config_and_environment_do_not_reach_the_shadow(
    repo_project, open_store, tmp_path, monkeypatch
):
    home = tmp_path / "home"
    marker = tmp_path / "hook-ran"
    hooks = tmp_path / "hooks"
    for hook in ("pre-commit", "post-commit", "post-index-change", "reference-transaction"):
        write(hooks, hook, f"#!/bin/sh\ntouch {marker}\n", executable=True)
    write(
        home,
        ".gitconfig",
        f"[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = /bin/false\n"
        f"[core]\n\thooksPath = {hooks}\n\tautocrlf = true\n",
    )
    git(repo_project, "config", "core.hooksPath", str(hooks))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_DIR", str(repo_project / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(repo_project / ".git" / "index"))
    monkeypatch.setenv("GIT_WORK_TREE", str(repo_project))
    before = project_git_state_without_env(repo_project, monkeypatch)
    store = open_store(repo_project)

    checkpoint = store.checkpoint(meta(1))
    write(repo_project, "src/lib.py", "X = 3\r\n")
    store.settle(meta(1))
    result = store.restore(checkpoint, meta(1))

    assert not marker.exists()
    assert store.git.run("cat-file", "blob", f"{result.before.tree}:src/lib.py") == b"X = 3\r\n"
    assert (repo_project / "src/lib.py").read_bytes() == b"X = 1\n"
    assert project_git_state_without_env(repo_project, monkeypatch) == before


def project_git_state_without_env(project: Path, monkeypatch):
    with monkeypatch.context() as scoped:
        for name in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"):
            scoped.delenv(name, raising=False)
        return project_git_state(project)


def test_literal_patterns_match_only_their_own_path(tmp_path):
    names = ["#hash", "!bang", "star*.txt", "sp ace ", "br[a]ck", "back\\slash"]
    for name in names + ["starX.txt", "brack", "hash"]:
        write(tmp_path, name, "x")
    exclude = tmp_path / "exclude"
    exclude.write_text("\n".join(literal_pattern(n) for n in names) + "\n")
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "g")], check=True)
    done = subprocess.run(
        ["git", "--work-tree", str(tmp_path), "ls-files", "-o", "-z", f"--exclude-from={exclude}"],
        cwd=tmp_path,
        env={"GIT_DIR": str(tmp_path / "g"), "PATH": os.environ["PATH"]},
        capture_output=True,
        check=True,
    )
    listed = {p for p in done.stdout.decode().split("\0") if p and not p.startswith("g/")}
    assert listed == {"starX.txt", "brack", "hash", "exclude"}


def test_a_same_size_edit_right_after_a_checkpoint_is_seen(plain_project, open_store):
    store = open_store(plain_project)
    first = store.checkpoint(meta(1))
    stamp = os.stat(plain_project / "src/app.py")
    write(plain_project, "src/app.py", "print('APP')\n")  # same size, same second
    os.utime(plain_project / "src/app.py", ns=(stamp.st_atime_ns, stamp.st_mtime_ns))

    second = store.checkpoint(meta(2))

    assert second.changed == ("src/app.py",)
    assert second.tree != first.tree


def test_a_linked_worktree_is_a_project_like_any_other(repo_project, open_store, tmp_path):
    linked = tmp_path / "linked"
    git(repo_project, "worktree", "add", "-q", "--detach", str(linked))
    write(repo_project, ".git/info/exclude", "local-only.txt\n")
    write(linked, "local-only.txt", "excluded through the main repository\n")
    write(linked, "work.txt", "work\n")
    before = dot_git_digest(repo_project)
    store = open_store(linked)

    files = files_in(store, store.checkpoint(meta(1)))

    assert "work.txt" in files and "src/main.py" in files
    assert "local-only.txt" not in files
    assert ".git" not in files
    assert dot_git_digest(repo_project) == before


def test_a_project_too_large_to_snapshot_is_refused_in_one_line(plain_project, open_store):
    for number in range(60):
        write(plain_project, f"downloads/{number}.dat", "data\n")
    store = open_store(plain_project, limits=SnapshotLimits(max_files=50))

    with pytest.raises(ProjectTooLarge) as refused:
        store.checkpoint(meta(1))
    write(plain_project, ".gitignore", "downloads/\n")
    checkpoint = store.checkpoint(meta(1))

    assert "65 files" in str(refused.value) and "checkpoints are off here" in str(refused.value)
    assert "\n" not in str(refused.value)
    assert [cp.id for cp in store.list("s1")] == [checkpoint.id]


def test_prepare_stages_the_tree_without_recording_a_checkpoint(plain_project, open_store):
    store = open_store(plain_project)
    store.prepare()
    assert store.list("s1") == [] and store.sessions() == []
    assert store.git.run("ls-files", "-z").count(b"\0") == 5
    checkpoint = store.checkpoint(meta(1))
    assert set(files_in(store, checkpoint)) == set(tree_state(plain_project)) - {"src"}


def test_checkpoints_never_run_the_projects_config_hooks_or_fsmonitor(
    repo_project, open_store, tmp_path
):
    marker = tmp_path / "planted-code-ran"
    planted = f"#!/bin/sh\ntouch {marker}\n"
    git(repo_project, "config", "core.fsmonitor", f"touch {marker}; false")
    git(repo_project, "config", "core.hooksPath", str(repo_project / ".git" / "hooks"))
    for hook in ("pre-commit", "post-commit", "post-checkout", "post-index-change"):
        write(repo_project, f".git/hooks/{hook}", planted, executable=True)
    nested = repo_project / "vendor"  # a nested repository in the work tree, not linked
    write(nested, "lib.py", "LIB = 1\n")
    git(nested, "init", "-q")
    git(nested, "config", "core.fsmonitor", f"touch {marker}; false")
    store = open_store(repo_project)

    before = (repo_project / "src/main.py").read_text()
    first = store.checkpoint(meta(1))
    write(repo_project, "src/main.py", "print('edited')\n")
    store.settle(meta(1))
    store.restore(first, meta(2))

    assert (repo_project / "src/main.py").read_text() == before
    assert not marker.exists()
