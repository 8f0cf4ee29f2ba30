"""Making the working tree match a snapshot, with a journal to undo a half-done restore.

Nothing is overwritten or deleted in place: whatever stands where the restore writes
is first moved aside (to a trash folder when the snapshot before the restore holds
it, to a kept `displaced` folder when it does not: an ignored file, a file over the
size cap). Every step is journalled; if one fails, the journal is played backwards
and the tree is as it was before the restore began.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from caretz import private_data
from caretz.checkpoints.errors import CheckpointError, RestoreFailed
from caretz.checkpoints.git import ShadowGit
from caretz.checkpoints.model import FileChange
from caretz.sandbox.beneath import Beneath
from caretz.sandbox.safe_open import PathMoved

SYMLINK, EXECUTABLE, GITLINK = "120000", "100755", "160000"
Step = Callable[[int, int, str], None]


@dataclass(frozen=True)
class Entry:
    mode: str
    sha: str


@dataclass(frozen=True)
class Change:
    """One path that differs between two trees: `old` is now, `new` is the target."""

    path: str
    old: Entry | None
    new: Entry | None

    def as_file_change(self) -> FileChange:
        if self.old is None:
            return FileChange(self.path, "added")
        if self.new is None:
            return FileChange(self.path, "deleted")
        return FileChange(self.path, "modified")


def diff_trees(git: ShadowGit, old: str, new: str, paths: Sequence[str] = ()) -> list[Change]:
    """Every file that differs between two trees (renames are a delete and an add)."""
    args = ["diff-tree", "-r", "-z", "--no-renames", "--raw", old, new]
    fields = git.run(*args, "--", *paths).split(b"\0")
    changes = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(b":"):
            continue
        old_mode, new_mode, old_sha, new_sha, _status = meta[1:].decode().split(" ")
        changes.append(
            Change(
                os.fsdecode(path),
                None if old_mode == "000000" else Entry(old_mode, old_sha),
                None if new_mode == "000000" else Entry(new_mode, new_sha),
            )
        )
    return changes


class BlobReader:
    """Reads blobs from the shadow repository (and the store it borrows from) through one
    `git cat-file --batch`, each checked against its name."""

    def __init__(self, git: ShadowGit):
        self._borrowing = git.borrowed is not None
        self._process = subprocess.Popen(
            git.command(["cat-file", "--batch"]),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=git.work_tree,
            env=git.env(borrow=True),
            umask=private_data.PRIVATE_UMASK,
        )

    def read(self, sha: str) -> bytes:
        stdin, stdout = self._streams()
        stdin.write(sha.encode() + b"\n")
        stdin.flush()
        header = stdout.readline().split()
        if len(header) != 3 or header[1] != b"blob":
            raise CheckpointError(f"no saved copy of its content (blob {sha[:12]}){self._where()}")
        data = stdout.read(int(header[2]))
        stdout.read(1)
        if hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() != sha:
            raise CheckpointError(
                f"its saved copy (blob {sha[:12]}) does not match its name{self._where()}"
            )
        return data

    def _where(self) -> str:
        if not self._borrowing:
            return ""
        return "; it was kept in the project's own git objects, which have lost or changed it"

    def _streams(self) -> tuple[IO[bytes], IO[bytes]]:
        assert self._process.stdin is not None and self._process.stdout is not None
        return self._process.stdin, self._process.stdout

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait()


class TreeWriter:
    """Applies changes to the project and can put back everything it did.

    Every step goes through the project's folder fd (sandbox/beneath.py), never through
    a symlink: a folder swapped for a link to HOME while the restore runs makes the step
    fail (and the restore roll back), it never writes, moves or removes anything there.
    """

    def __init__(
        self,
        root: Path,
        blobs: BlobReader,
        trash: Path,
        displaced: Path,
        on_step: Step | None = None,
    ):
        self.root = root
        self.tree = Beneath(root)
        self.blobs = blobs
        self.trash = trash
        self.displaced_dir = displaced
        self.on_step = on_step
        self.journal: list[tuple[str, str, Path | int | None]] = []
        # Folders this restore found or made: not looked at again for each file below them
        # (a write still opens its folder without following a symlink, so a swap fails it).
        self.folders: set[str] = set()
        self.displaced: list[tuple[str, str]] = []
        self.rollback_problems: list[str] = []

    def apply(self, changes: Sequence[Change]) -> None:
        removals = sorted((c for c in changes if c.new is None), key=_deepest_first)
        writes = sorted(
            (c for c in changes if c.new is not None and c.new.mode != GITLINK),
            key=lambda c: c.path,
        )
        total = len(removals) + len(writes)
        for number, change in enumerate(removals, 1):
            self._step(number, total, change.path)
            self._move_aside(change.path, keep=False)
        self._prune_empty_dirs([c.path for c in removals])
        for number, change in enumerate(writes, len(removals) + 1):
            self._step(number, total, change.path)
            assert change.new is not None
            self._write(change.path, change.new, in_snapshot=change.old is not None)

    def rollback(self) -> list[str]:
        """Undoes the journal, newest step first; returns what could not be undone."""
        problems = []
        for action, path, extra in reversed(self.journal):
            try:
                self._undo(action, path, extra)
            except OSError as error:
                problems.append(f"{path}: {error.strerror or error}")
        self.journal.clear()
        self.rollback_problems = problems
        return problems

    def discard_trash(self) -> None:
        shutil.rmtree(self.trash, ignore_errors=True)

    def _step(self, number: int, total: int, path: str) -> None:
        if self.on_step is not None:
            self.on_step(number, total, path)

    def _write(self, path: str, entry: Entry, in_snapshot: bool) -> None:
        try:
            data = self.blobs.read(entry.sha)  # first: a blob that cannot be had changes nothing
        except CheckpointError as error:
            raise CheckpointError(f"{path}: {error}") from None
        self._make_parents(PurePosixPath(path).parent)
        old_mode = None
        info = self.tree.lstat(path)
        if info is not None:
            old_mode = info.st_mode if stat.S_ISREG(info.st_mode) else None
            keep = not in_snapshot or stat.S_ISDIR(info.st_mode)
            self._move_aside(path, keep=keep, present=True)
        if entry.mode == SYMLINK:
            self.tree.make_link(os.fsdecode(data), path)
            self.journal.append(("created", path, None))
            return
        executable = entry.mode == EXECUTABLE
        exact = _with_exec_bits(old_mode, executable) if old_mode is not None else None
        self.tree.create(path, data, 0o777 if executable else 0o666, exact)
        self.journal.append(("created", path, None))

    def _make_parents(self, folder: PurePosixPath) -> None:
        """Creates the folders above a path; whatever else stands in the way is moved aside."""
        current = PurePosixPath()
        for part in folder.parts:
            current = current / part
            if str(current) in self.folders:
                continue
            info = self.tree.lstat(str(current))
            if info is not None and not stat.S_ISDIR(info.st_mode):
                self._move_aside(str(current), keep=True, present=True)
                info = None
            if info is None:
                self.tree.make_folder(str(current))
                self.journal.append(("mkdir", str(current), None))
            self.folders.add(str(current))

    def _move_aside(self, path: str, keep: bool, present: bool = False) -> None:
        """Move what stands at `path` to the trash or the displaced folder (`present`: it
        was just seen there)."""
        if not present and self.tree.lstat(path) is None:
            return
        destination = (self.displaced_dir if keep else self.trash) / path
        self.tree.move_out(path, destination)  # into the data dir; the file keeps its mode
        self.folders = {f for f in self.folders if f != path and not f.startswith(path + "/")}
        self.journal.append(("moved", path, destination))
        if keep:
            self.displaced.append((path, str(destination)))

    def _prune_empty_dirs(self, removed: list[str]) -> None:
        """Removes folders that only held removed files, as `git checkout` does."""
        folders = {p for path in removed for p in PurePosixPath(path).parents if p.parts}
        for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
            info = self.tree.lstat(str(folder))
            if info is None or not stat.S_ISDIR(info.st_mode):
                continue
            if self.tree.is_empty_folder(str(folder)):
                self.tree.remove_folder(str(folder))
                self.journal.append(("rmdir", str(folder), stat.S_IMODE(info.st_mode)))

    def _undo(self, action: str, path: str, extra: Path | int | None) -> None:
        info = self.tree.lstat(path)
        if action == "created" and info is not None:
            self.tree.remove_file(path)
        elif action == "mkdir" and info is not None and stat.S_ISDIR(info.st_mode):
            self.tree.remove_folder(path)
        elif action == "rmdir" and info is None:
            self.tree.make_folder(path)
            self.tree.chmod_folder(path, extra if isinstance(extra, int) and extra else 0o755)
        elif action == "moved" and isinstance(extra, Path) and os.path.lexists(extra):
            self.tree.move_in(extra, path)

    def relative(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)


def apply_or_roll_back(writer: TreeWriter, changes: Sequence[Change], undo_hint: str) -> None:
    """Applies `changes`; on any failure puts the tree back and raises RestoreFailed."""
    try:
        writer.apply(changes)
    except BaseException as error:
        problems = writer.rollback()
        if not isinstance(error, OSError | CheckpointError):
            raise
        where = getattr(error, "filename", None) or ""
        reason = f"{error.strerror or error}" if isinstance(error, OSError) else str(error)
        detail = f"{writer.relative(Path(where))}: {reason}" if where else reason
        if problems:
            raise RestoreFailed(
                f"restore failed ({detail}) and {len(problems)} step(s) could not be undone "
                f"({problems[0]}); {undo_hint}",
                rolled_back=False,
            ) from error
        raise RestoreFailed(
            f"restore failed ({detail}); every file is as it was before the restore",
            rolled_back=True,
        ) from error


def unsaved_paths(root: Path, changes: Sequence[Change]) -> list[str]:
    """Paths a restore writes where something stands that no snapshot holds (an ignored
    file, one over the size cap, a folder holding such files)."""
    tree = Beneath(root)
    removed = {c.path for c in changes if c.new is None}
    unsaved = []
    for change in changes:
        if change.old is not None:
            continue
        try:
            info = tree.lstat(change.path)
            if info is None:
                continue
            in_the_way = not stat.S_ISDIR(info.st_mode)
            if in_the_way or any(p not in removed for p in tree.files_under(change.path)):
                unsaved.append(change.path)
        except PathMoved:
            raise CheckpointError(
                f"{change.path}: a symlink appeared along it while the restore looked; "
                "nothing was restored (try again once nothing is changing the project)"
            ) from None
    return unsaved


def _deepest_first(change: Change) -> tuple[int, str]:
    return (-len(PurePosixPath(change.path).parts), change.path)


def _with_exec_bits(mode: int, executable: bool) -> int:
    """`mode`'s permissions with execute bits wherever it can read (or none)."""
    permissions = stat.S_IMODE(mode)
    if executable:
        return permissions | ((permissions & 0o444) >> 2)
    return permissions & ~0o111
