"""The door caretz reads a project's files through, and writes its own there: real files,
real symlinks, FIFOs and hard links in tmp dirs, and a real process racing the reads."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from caretz.sandbox import safe_open
from caretz.sandbox.beneath import Beneath, remove_tree
from caretz.sandbox.door import ProjectDoor, Refused, read_beneath, write_beneath
from tests.sandbox.conftest import SECRET_KEY
from tests.sandbox.helpers import wait_for

SWAPPER = Path(__file__).parents[1] / "e2e" / "swapper.py"
LIMIT = 1 << 16


@pytest.fixture
def door(make_policy, work) -> ProjectDoor:
    return ProjectDoor.for_session(make_policy(), work)


@pytest.fixture
def outside(scratch: Path) -> Path:
    folder = scratch / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("outside-secret")
    return folder


def refusal(read, path: Path) -> str:
    with pytest.raises(Refused) as refused:
        read(path)
    line = str(refused.value)
    assert "\n" not in line and line.startswith(f"{path}: ")
    assert isinstance(refused.value, PermissionError)  # an OSError: callers' lines name it
    return line


def test_a_file_and_a_symlink_inside_the_project_are_read(door, work):
    (work / "AGENTS.md").write_text("be kind")
    (work / "CLAUDE.md").symlink_to("AGENTS.md")
    (work / "docs").mkdir()
    (work / "docs" / "x.md").symlink_to("../AGENTS.md")
    for name in ("AGENTS.md", "CLAUDE.md", "docs/x.md"):
        assert door.text(work / name, LIMIT) == "be kind"
    with pytest.raises(FileNotFoundError):
        door.read(work / "missing.md", LIMIT)


@pytest.mark.parametrize(
    "target",
    ["~/.ssh/id_rsa", "/proc/self/environ", "/proc/self/cwd/../../etc/passwd", "outside"],
)
def test_a_symlink_that_leaves_the_project_is_refused(door, work, home, outside, target):
    real = {"~/.ssh/id_rsa": home / ".ssh" / "id_rsa", "outside": outside / "secret.txt"}
    (work / "AGENTS.md").symlink_to(real.get(target, target))
    line = refusal(lambda p: door.read(p, LIMIT), work / "AGENTS.md")
    assert "outside the project" in line or "/proc" in line


def test_a_folder_symlink_in_the_middle_of_the_path_is_refused(door, work, home):
    (work / "keys").symlink_to(home / ".ssh")
    line = refusal(lambda p: door.read(p, LIMIT), work / "keys" / "id_rsa")
    assert f"leads to {home / '.ssh' / 'id_rsa'}, outside the project" in line


def test_hidden_paths_inside_the_roots_are_refused(make_policy, home):
    """A dotfiles repository in HOME: the project's root holds ~/.ssh and caretz's dirs."""
    data = home / ".local" / "share" / "caretz"
    data.mkdir(parents=True)
    (data / "keys.env").write_text("ANTHROPIC_API_KEY=sk-secret")
    door = ProjectDoor.for_session(make_policy(cwd=home, caretz_dirs=[data]), home)
    (home / "AGENTS.md").symlink_to(".ssh/id_rsa")
    (home / "CLAUDE.md").symlink_to(data / "keys.env")
    assert "hidden by the sandbox" in refusal(lambda p: door.read(p, LIMIT), home / "AGENTS.md")
    assert "hidden by the sandbox" in refusal(lambda p: door.read(p, LIMIT), home / "CLAUDE.md")
    assert door.text(home / ".bashrc", LIMIT) == "ordinary dotfile"


def test_a_fifo_a_hard_link_and_a_large_file_are_refused_without_waiting(door, work, outside):
    os.mkfifo(work / "fifo.md")  # nobody writes: a read would block forever
    os.link(outside / "secret.txt", work / "linked.md")
    (work / "large.md").write_bytes(b"x" * (LIMIT + 1))
    read = lambda p: door.read(p, LIMIT)  # noqa: E731
    assert "is a FIFO (named pipe), not a regular file" in refusal(read, work / "fifo.md")
    assert "has 2 hard links" in refusal(read, work / "linked.md")
    assert f"is {LIMIT + 1:,} bytes, more than caretz reads" in refusal(read, work / "large.md")


def test_a_listing_walks_no_symlinked_folder_and_refuses_one_that_leaves(door, work, outside):
    commands = work / ".claude" / "commands"
    (commands / "team").mkdir(parents=True)
    (commands / "review.md").write_text("review")
    (commands / "team" / "ship.md").write_text("ship")
    (commands / "key.md").symlink_to(outside / "secret.txt")  # listed; its read is refused
    (commands / "elsewhere").symlink_to(outside)  # a folder link: never entered
    (outside / "more.md").write_text("more")
    (work / ".caretz").mkdir()
    (work / ".caretz" / "commands").symlink_to("/proc")

    listed = door.list_files(commands, ".md")

    assert listed == [commands / "key.md", commands / "review.md", commands / "team" / "ship.md"]
    assert "outside the project" in refusal(lambda p: door.read(p, LIMIT), listed[0])
    line = refusal(lambda p: door.list_files(p, ".md"), work / ".caretz" / "commands")
    assert "/proc" in line
    assert door.list_files(work / "none", ".md") == []
    (work / "file.md").write_text("x")
    assert "not a folder" in refusal(lambda p: door.list_files(p, ".md"), work / "file.md")


def test_the_strict_read_and_write_follow_no_symlink_at_all(work, outside):
    (work / ".caretz").symlink_to(outside)
    (outside / "settings.json").write_text("{}")
    for step in (
        lambda: read_beneath(work, ".caretz/settings.json", LIMIT),
        lambda: write_beneath(work, ".caretz/settings.json", b"{}"),
    ):
        with pytest.raises(Refused, match="is a symlink"):
            step()
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt", "settings.json"]
    (work / ".caretz").unlink()
    (work / ".caretz").mkdir()
    (work / ".caretz" / "settings.json").symlink_to(outside / "settings.json")
    with pytest.raises(Refused, match="is a symlink"):
        write_beneath(work, ".caretz/settings.json", b'{"a": 1}')
    assert (outside / "settings.json").read_text() == "{}"


def test_a_write_replaces_the_file_and_keeps_its_mode(work):
    written = write_beneath(work, ".caretz/settings.json", b"{}")
    assert written == work / ".caretz" / "settings.json" and written.read_bytes() == b"{}"
    written.chmod(0o600)
    write_beneath(work, ".caretz/settings.json", b'{"b": 2}')
    assert written.read_bytes() == b'{"b": 2}' and written.stat().st_mode & 0o777 == 0o600
    assert read_beneath(work, ".caretz/settings.json", LIMIT) == b'{"b": 2}'


@pytest.mark.parametrize("openat2", [True, False])
def test_reads_raced_by_a_folder_swapped_for_a_link_to_the_keys_never_leak(
    door, work, home, tmp_path, openat2, monkeypatch
):
    """A real process flips `keys` between a folder and a link to ~/.ssh while the door
    reads `keys/id_rsa` (openat2, and the O_NOFOLLOW walk of older kernels)."""
    monkeypatch.setattr(safe_open, "_have_openat2", openat2)
    (work / "keys").mkdir()
    (work / "keys" / "id_rsa").write_text("decoy")
    ready, stop = tmp_path / "ready", tmp_path / "stop"
    swapper = subprocess.Popen(
        [sys.executable, str(SWAPPER), str(ready), str(stop), "dir", str(work / "keys")]
        + [str(home / ".ssh")]
    )
    try:
        assert wait_for(ready.exists), "the swapper never flipped"
        outcomes: set[str] = set()
        # 500 reads at least, and on until one found the folder in place: on a busy machine
        # the swapper may hold one state for many reads (no read count races the clock).
        for tries in range(1, 200_001):
            try:
                outcomes.add(door.text(work / "keys" / "id_rsa", LIMIT))
            except (Refused, FileNotFoundError) as error:
                outcomes.add(type(error).__name__)
            if tries >= 500 and "decoy" in outcomes:
                break
    finally:
        stop.write_text("stop")
        assert swapper.wait(timeout=30) == 0
    assert SECRET_KEY not in outcomes
    assert "decoy" in outcomes


def test_steps_beneath_a_folder_fail_on_a_symlink_along_the_path(work, home):
    tree = Beneath(work)
    (work / "sub").symlink_to(home)
    for step in (
        lambda: tree.create("sub/.bashrc", b"planted", 0o666),
        lambda: tree.remove_file("sub/.bashrc"),
        lambda: tree.make_folder("sub/new"),
        lambda: tree.move_out("sub/.bashrc", work.parent / "trash" / ".bashrc"),
        lambda: tree.files_under("sub"),
    ):
        with pytest.raises(safe_open.PathMoved):
            step()
    with pytest.raises(safe_open.PathMoved):
        tree.lstat("sub/.bashrc")
    assert (home / ".bashrc").read_text() == "ordinary dotfile"
    assert not (home / "new").exists() and not (work.parent / "trash" / ".bashrc").exists()


def test_moves_out_and_back_keep_links_and_folders_as_they_are(work, scratch):
    tree = Beneath(work)
    (work / "d" / "e").mkdir(parents=True)
    (work / "d" / "e" / "f.txt").write_text("f")
    (work / "d" / "link").symlink_to("/etc/passwd")
    trash = scratch / "trash" / "d"
    tree.move_out("d", trash)
    assert not (work / "d").exists() and (trash / "e" / "f.txt").read_text() == "f"
    tree.move_in(trash, "d")
    assert os.readlink(work / "d" / "link") == "/etc/passwd"
    assert tree.files_under("d") == ["d/e/f.txt", "d/link"]


def test_a_move_across_file_systems_copies_through_fds(work):
    other = Path("/dev/shm")
    if not other.is_dir() or os.stat(other).st_dev == os.stat(work).st_dev:
        pytest.skip("no second file system to move to")  # /dev/shm is tmpfs on Linux
    tree = Beneath(work)
    (work / "d").mkdir()
    (work / "d" / "x.sh").write_text("run")
    (work / "d" / "x.sh").chmod(0o750)
    (work / "d" / "link").symlink_to("x.sh")
    target = other / f"caretz-test-{os.getpid()}-{time.monotonic_ns()}"
    try:
        tree.move_out("d", target)
        assert not (work / "d").exists()
        assert (target / "x.sh").stat().st_mode & 0o777 == 0o750
        tree.move_in(target, "d")
        assert (work / "d" / "x.sh").read_text() == "run" and not target.exists()
        assert os.readlink(work / "d" / "link") == "x.sh"
    finally:
        remove_tree(target)


def test_a_tree_is_removed_through_fds_even_read_only_and_links_are_not_followed(scratch, home):
    tree = scratch / "session-tmp"
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "b" / "f").write_text("x")
    (tree / "a" / "home").symlink_to(home)
    (tree / "a" / "b").chmod(0o500)
    (tree / "a").chmod(0o500)
    remove_tree(tree)
    assert not tree.exists()
    assert (home / ".bashrc").read_text() == "ordinary dotfile"
    assert (home / ".ssh" / "id_rsa").read_text() == SECRET_KEY
