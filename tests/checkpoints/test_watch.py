"""A later checkpoint after a command looks at what inotify saw change (checkpoints/
watch.py), and at the whole tree whenever the watches cannot vouch: each case's snapshot
is the tree a whole scan finds, and a rewind puts the files back exactly.

Whether a scan was narrowed shows through the one change inotify does not report, a write
through a shared memory map (docs/checkpoints.md): a narrowed scan misses it, a whole
one sees it."""

from __future__ import annotations

import mmap
import os
import subprocess
import sys
from pathlib import Path

import pytest

from caretz.agent.checkpointing import TurnCheckpoints
from caretz.checkpoints import CheckpointStore
from caretz.checkpoints.watch import TreeWatch, WatchUnavailable, file_system_type
from tests.checkpoints.helpers import meta, tree_state, write

PROBE = "probe.bin"


class UnseenWriter:
    """A file mapped before the watches start; a write through the map makes no event
    (the file stays open meanwhile: closing it raises one)."""

    def __init__(self, path: Path):
        self._file = path.open("r+b")
        self._map = mmap.mmap(self._file.fileno(), 0)

    def write(self, data: bytes) -> None:
        self._map[: len(data)] = data
        self._map.flush()

    def close(self) -> None:
        self._map.close()
        self._file.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    write(project, ".gitignore", "build/\n*.log\n")
    write(project, "src/a.py", "A = 1\n")
    write(project, "src/b.py", "B = 2\n")
    write(project, "src/pkg/c.py", "C = 3\n")
    write(project, "docs/guide.md", "# guide\n")
    write(project, "build/out.txt", "ignored until the rule goes\n")
    write(project, PROBE, "0" * 64)
    return project


def command(project: Path, script: str) -> None:
    """A command of the turn's, as bash runs one: a process of its own."""
    subprocess.run(["sh", "-c", script], cwd=project, check=True)


def whole_scan(reference: CheckpointStore, turn: int) -> str:
    """The tree a store without watches finds (its scans are always whole)."""
    return reference.checkpoint(meta(turn, session="reference")).tree


COMMANDS = {
    "an edit": ("printf 'A = 10\\n' >> src/a.py", True),
    "a deletion": ("rm src/b.py", True),
    "a new file in new folders": (
        "mkdir -p src/new/deep && echo 'N = 1' > src/new/deep/n.py",
        True,
    ),
    "a file changed and changed back": (
        "cp src/a.py saved && echo x >> src/a.py && cat saved > src/a.py && rm saved",
        True,
    ),
    "a symlink and an executable bit": ("ln -s a.py src/link && chmod +x src/b.py", True),
    "a folder renamed": ("mv src/pkg src/package", False),
    "a folder moved out and back": ("mv docs ../docs-away && mv ../docs-away docs", False),
    "an ignore rule dropped": ("printf '*.log\\n' > .gitignore", False),
}


@pytest.mark.parametrize("case", list(COMMANDS))
def test_a_command_s_changes_are_seen_and_rewound(case, project, tmp_path, data_dir):
    script, narrowed = COMMANDS[case]
    probe = UnseenWriter(project / PROBE)
    try:
        store = CheckpointStore.open(data_dir, project)
        reference = CheckpointStore.open(tmp_path / "reference", project, watch=False)
        store.checkpoint(meta(1))  # the baseline: the watches were set before it
        target = store.checkpoint(meta(2))
        before = tree_state(project)

        command(project, script)
        truth = whole_scan(reference, 1)
        probe.write(b"written through a map")
        truth_with_probe = whole_scan(reference, 2)
        later = store.checkpoint(meta(3))
    finally:
        probe.close()  # its close is an event: every later scan sees the probe
    after = tree_state(project)

    assert truth != truth_with_probe
    assert later.tree == (truth if narrowed else truth_with_probe)
    rewind = store.restore(target, meta(4), force=True)
    # A file let in by the rule's removal is one the target did not hold: the rewind
    # takes it away (as after a whole scan), and undoing the rewind brings it back.
    let_in = {"build", "build/out.txt"} if case == "an ignore rule dropped" else set()
    assert tree_state(project) == {k: v for k, v in before.items() if k not in let_in}
    store.restore(rewind.before, meta(5), force=True)
    assert tree_state(project) == after


def test_an_overflowed_queue_is_a_whole_scan_then_watching_resumes(project, tmp_path, data_dir):
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    probe = UnseenWriter(project / PROBE)
    try:
        store = CheckpointStore.open(data_dir, project)
        reference = CheckpointStore.open(tmp_path / "reference", project, watch=False)
        target = store.checkpoint(meta(1))
        before = tree_state(project)

        # One file made and removed, again and again: three events each time, none merged
        # with the one before, all naming one path; the last file's events are lost.
        churn = (
            "import os\n"
            f"for i in range({limit // 2 + 100}):\n"
            "    open('src/t', 'w').close(); os.unlink('src/t')\n"
            "open('src/kept.py', 'w').write('K = 1\\n')\n"
        )
        subprocess.run([sys.executable, "-c", churn], cwd=project, check=True)
        probe.write(b"written through a map")
        lost = store.checkpoint(meta(2))
        assert lost.tree == whole_scan(reference, 1)  # the probe too: a whole scan

        probe.write(b"written through the map again")
        command(project, "echo 'A = 3' > src/a.py")
        truth = whole_scan(reference, 2)
        assert "src/a.py" in store.checkpoint(meta(3)).changed
        assert store.stager.feed is not None and store.stager.feed.off_reason is None
        narrowed = store.checkpoint(meta(4))
        assert narrowed.tree != truth and not narrowed.changed  # watching again
    finally:
        probe.close()
    after = tree_state(project)
    rewind = store.restore(target, meta(5), force=True)
    assert tree_state(project) == before
    store.restore(rewind.before, meta(6), force=True)
    assert tree_state(project) == after


def test_another_process_staging_the_tree_means_a_whole_scan(project, tmp_path, data_dir):
    probe = UnseenWriter(project / PROBE)
    try:
        store = CheckpointStore.open(data_dir, project)
        store.checkpoint(meta(1))
        probe.write(b"written through a map")
        # Another session of the same project: its store writes the same shadow index.
        CheckpointStore.open(data_dir, project, watch=False).checkpoint(meta(1, session="s2"))
        reference = CheckpointStore.open(tmp_path / "reference", project, watch=False)
        assert store.checkpoint(meta(2)).tree == whole_scan(reference, 1)
    finally:
        probe.close()


def test_watches_that_cannot_cover_the_tree_are_not_used(project, tmp_path):
    with pytest.raises(WatchUnavailable, match="more than 2 folders"):
        TreeWatch(project, max_folders=2)
    limit = tmp_path / "max_user_watches"
    limit.write_text("8\n")  # a quarter of it: 2 watches for the tree's 5 folders
    with pytest.raises(WatchUnavailable, match="more than 2 folders"):
        TreeWatch(project, limit_file=str(limit))
    limit.write_text("")  # a limit that cannot be read: no watches at all
    with pytest.raises(WatchUnavailable, match="more than 0 folders"):
        TreeWatch(project, limit_file=str(limit))
    mounts = tmp_path / "mountinfo"
    local = f"22 1 8:1 / {project.parent} rw,relatime shared:1 - ext4 /dev/vda rw\n"
    mounts.write_text(local)
    assert file_system_type(project, str(mounts)) == "ext4"
    remote = f"30 22 0:50 / {project} rw - nfs4 server:/export rw\n"
    mounts.write_text(local + remote)
    assert file_system_type(project, str(mounts)) == "nfs4"
    escaped = str(project / "src" / "a") + "\\040b"  # mountinfo's spelling of "a b"
    mounts.write_text(local + f"31 22 0:51 / {escaped} rw - tmpfs tmpfs rw\n")
    assert file_system_type(project, str(mounts)) is None  # a mount inside the project


def test_a_folder_a_command_made_is_watched_from_then_on(project, tmp_path, data_dir):
    store = CheckpointStore.open(data_dir, project)
    reference = CheckpointStore.open(tmp_path / "reference", project, watch=False)
    store.checkpoint(meta(1))
    command(project, "mkdir -p made/deep && echo one > made/deep/f.txt")
    store.checkpoint(meta(2))
    command(project, "echo two > made/deep/f.txt && echo new > made/deep/g.txt")
    later = store.checkpoint(meta(3))

    assert later.tree == whole_scan(reference, 1)
    assert set(later.changed) == {"made/deep/f.txt", "made/deep/g.txt"}


def test_a_rewind_holds_what_the_watches_missed_so_undoing_it_brings_it_back(project, data_dir):
    probe = UnseenWriter(project / PROBE)
    try:
        store = CheckpointStore.open(data_dir, project)
        target = store.checkpoint(meta(1))
        probe.write(b"written through a map")
        missed = store.checkpoint(meta(2))
        assert PROBE not in missed.changed  # a narrowed scan: no event named it
        preview = store.preview(target)
        rewind = store.restore(target, meta(3), force=True)
    finally:
        probe.close()
    assert PROBE in {change.path for change in preview.changes}
    assert (project / PROBE).read_bytes() == b"0" * 64
    store.restore(rewind.before, meta(4), force=True)
    assert (project / PROBE).read_bytes().startswith(b"written through a map")


def inotify_instances() -> int:
    fds = Path("/proc/self/fd")
    links = []
    for fd in fds.iterdir():
        try:
            links.append(os.readlink(fd))
        except OSError:
            continue  # the listing's own descriptor, closed by now
    return links.count("anon_inode:inotify")


def test_closing_the_store_gives_the_watches_back_and_it_scans_whole_after(project, data_dir):
    before = inotify_instances()
    store = CheckpointStore.open(data_dir, project)
    store.checkpoint(meta(1))
    assert inotify_instances() == before + 1

    store.close()
    assert inotify_instances() == before
    probe = UnseenWriter(project / PROBE)
    try:
        probe.write(b"written through a map")
        later = store.checkpoint(meta(2))
    finally:
        probe.close()
    assert PROBE in later.changed  # a whole scan: no watch narrowed it
    assert inotify_instances() == before


def test_a_session_s_checkpoints_give_the_watches_back_when_it_closes(project, data_dir):
    before = inotify_instances()
    opened = lambda: CheckpointStore.open(data_dir, project)  # noqa: E731
    checkpoints = TurnCheckpoints(None, opener=opened, session="s1")
    store = checkpoints.store
    assert store is not None
    store.checkpoint(meta(1))
    assert inotify_instances() == before + 1
    checkpoints.close()
    assert inotify_instances() == before
