"""Making the working tree match a snapshot, with a journal to undo a half-done restore.

Nothing is overwritten or deleted in place: whatever stands where the restore writes
is first moved aside (to a trash folder when the snapshot before the restore holds
it, to a kept `displaced` folder when it does not: an ignored file, a file over the
size cap). Every step is journalled; if one fails, the journal is played backwards
and the tree is as it was before the restore began.
"""

from __future__ import annotations

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
    """Reads blobs from the shadow repository through one `git cat-file --batch`."""

    def __init__(self, git: ShadowGit):
        self._process = subprocess.Popen(
            git.command(["cat-file", "--batch"]),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=git.work_tree,
            env=git.env(),
            umask=private_data.PRIVATE_UMASK,
        )

    def read(self, sha: str) -> bytes:
        stdin, stdout = self._streams()
        stdin.write(sha.encode() + b"\n")
        stdin.flush()
        header = stdout.readline().split()
        if len(header) != 3 or header[1] != b"blob":
            raise CheckpointError(f"the shadow repository has no blob {sha[:12]}")
        data = stdout.read(int(header[2]))
        stdout.read(1)
        return data

    def _streams(self) -> tuple[IO[bytes], IO[bytes]]:
        assert self._process.stdin is not None and self._process.stdout is not None
        return self._process.stdin, self._process.stdout

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait()


class TreeWriter:
    """Applies changes to the project and can put back everything it did."""

    def __init__(
        self,
        root: Path,
        blobs: BlobReader,
        trash: Path,
        displaced: Path,
        on_step: Step | None = None,
    ):
        self.root = root
        self.blobs = blobs
        self.trash = trash
        self.displaced_dir = displaced
        self.on_step = on_step
        self.journal: list[tuple[str, Path, Path | int | None]] = []
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
                problems.append(f"{self.relative(path)}: {error.strerror or error}")
        self.journal.clear()
        self.rollback_problems = problems
        return problems

    def discard_trash(self) -> None:
        shutil.rmtree(self.trash, ignore_errors=True)

    def _step(self, number: int, total: int, path: str) -> None:
        if self.on_step is not None:
            self.on_step(number, total, path)

    def _write(self, path: str, entry: Entry, in_snapshot: bool) -> None:
        target = self.root / path
        self._make_parents(PurePosixPath(path).parent)
        old_mode = None
        if os.path.lexists(target):
            info = os.lstat(target)
            old_mode = info.st_mode if stat.S_ISREG(info.st_mode) else None
            self._move_aside(path, keep=not in_snapshot or stat.S_ISDIR(info.st_mode))
        data = self.blobs.read(entry.sha)
        if entry.mode == SYMLINK:
            os.symlink(os.fsdecode(data), target)
            self.journal.append(("created", target, None))
            return
        executable = entry.mode == EXECUTABLE
        fd = os.open(
            target,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
            0o777 if executable else 0o666,
        )
        self.journal.append(("created", target, None))
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if old_mode is not None:
            os.chmod(target, _with_exec_bits(old_mode, executable))

    def _make_parents(self, folder: PurePosixPath) -> None:
        """Creates the folders above a path; whatever else stands in the way is moved aside."""
        current = self.root
        for part in folder.parts:
            current = current / part
            if os.path.lexists(current) and not _is_real_dir(current):
                self._move_aside(str(current.relative_to(self.root)), keep=True)
            if not os.path.lexists(current):
                os.mkdir(current)
                self.journal.append(("mkdir", current, None))

    def _move_aside(self, path: str, keep: bool) -> None:
        source = self.root / path
        if not os.path.lexists(source):
            return
        destination = (self.displaced_dir if keep else self.trash) / path
        private_data.make_dir(destination.parent)  # in the data dir; the file keeps its mode
        shutil.move(source, destination)
        self.journal.append(("moved", source, destination))
        if keep:
            self.displaced.append((path, str(destination)))

    def _prune_empty_dirs(self, removed: list[str]) -> None:
        """Removes folders that only held removed files, as `git checkout` does."""
        folders = {p for path in removed for p in PurePosixPath(path).parents if p.parts}
        for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
            target = self.root / folder
            if _is_real_dir(target) and not any(os.scandir(target)):
                mode = stat.S_IMODE(os.lstat(target).st_mode)
                os.rmdir(target)
                self.journal.append(("rmdir", target, mode))

    def _undo(self, action: str, path: Path, extra: Path | int | None) -> None:
        if action == "created" and os.path.lexists(path):
            os.unlink(path)
        elif action == "mkdir" and _is_real_dir(path):
            os.rmdir(path)
        elif action == "rmdir" and not os.path.lexists(path):
            os.mkdir(path)
            os.chmod(path, int(extra or 0o755))
        elif action == "moved" and isinstance(extra, Path) and os.path.lexists(extra):
            shutil.move(extra, path)

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
    removed = {c.path for c in changes if c.new is None}
    unsaved = []
    for change in changes:
        path = root / change.path
        if change.old is not None or not os.path.lexists(path):
            continue
        in_the_way = not _is_real_dir(path)
        if in_the_way or any(p not in removed for p in _files_under(path, root)):
            unsaved.append(change.path)
    return unsaved


def _files_under(folder: Path, root: Path) -> list[str]:
    found = []
    for current, dirs, files in os.walk(folder):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(current, d))]:
            found.append(Path(current, name).relative_to(root).as_posix())
    return found


def _deepest_first(change: Change) -> tuple[int, str]:
    return (-len(PurePosixPath(change.path).parts), change.path)


def _is_real_dir(path: Path) -> bool:
    return os.path.isdir(path) and not os.path.islink(path)


def _with_exec_bits(mode: int, executable: bool) -> int:
    """`mode`'s permissions with execute bits wherever it can read (or none)."""
    permissions = stat.S_IMODE(mode)
    if executable:
        return permissions | ((permissions & 0o444) >> 2)
    return permissions & ~0o111
