"""Changing files below one folder without ever following a symlink: the door for
caretz's own writes into a project (a rewind's restores, the git watch's put-backs).

A restore or a put-back writes, moves and removes many paths one after another, while a
command or a background job may still be running in the project. Done by path, one
directory swapped for a symlink to HOME between two steps sends the next write into HOME
and the next move takes `~/.bashrc` with it. So every step here starts from the folder's
own fd: the parent of the path is opened with safe_open (no symlink anywhere below the
folder), and the step acts on the last name through that fd (`mkdirat`, `openat` with
O_NOFOLLOW | O_EXCL, `renameat`, `unlinkat`, `symlinkat`), which never follows a symlink
either. A symlink standing along the path is `PathMoved`, and the caller's step fails.

Moves to and from caretz's own data dir (a restore's trash, the git watch's quarantine)
are one rename between two directory fds, or, across file systems, a copy made through
fds and the original removed through fds.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from caretz import private_data
from caretz.sandbox import safe_open
from caretz.sandbox.safe_open import O_PATH, PathMoved

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_COPY_CHUNK = 1 << 20


class Beneath:
    """Steps on paths below `root` (relative POSIX paths), none following a symlink."""

    def __init__(self, root: Path):
        self.root = Path(os.path.realpath(root))

    @contextlib.contextmanager
    def parent(self, relative: str) -> Iterator[tuple[int, str]]:
        """The fd of the folder holding `relative`, and its last name. FileNotFoundError
        when a folder along it is missing, PathMoved when a symlink stands along it,
        NotADirectoryError when a file does."""
        parts = PurePosixPath(relative).parts
        if not parts or parts[0] == "/" or ".." in parts:
            raise ValueError(f"{relative!r} is not a path below {self.root}")
        folder = "/".join(parts[:-1]) or "."
        try:
            fd = safe_open.open_below(self.root, folder, O_PATH | os.O_DIRECTORY)
        except PathMoved:
            raise self._why_not_a_folder(parts[:-1]) from None
        try:
            yield fd, parts[-1]
        except OSError as error:
            if error.filename == parts[-1]:  # named as the caller knows it
                error.filename = relative
            raise
        finally:
            os.close(fd)

    def _why_not_a_folder(self, parts: tuple[str, ...]) -> OSError:
        """PathMoved when a symlink stands along `parts`, else NotADirectoryError."""
        current = self.root
        for part in parts:
            current = current / part
            try:
                mode = os.lstat(current).st_mode
            except OSError:
                break
            if stat.S_ISLNK(mode):
                return PathMoved(errno.ELOOP, f"{current} is a symlink; caretz does not follow it")
            if not stat.S_ISDIR(mode):
                return NotADirectoryError(errno.ENOTDIR, "not a directory", str(current))
        return PathMoved(errno.ELOOP, f"{self.root.joinpath(*parts)} changed")

    def lstat(self, relative: str) -> os.stat_result | None:
        """What stands at `relative` itself; None when nothing does (or a file stands
        where a folder along it should be). PathMoved for a symlink along it."""
        try:
            with self.parent(relative) as (fd, name):
                return os.stat(name, dir_fd=fd, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def is_folder(self, relative: str) -> bool:
        info = self.lstat(relative)
        return info is not None and stat.S_ISDIR(info.st_mode)

    def make_folder(self, relative: str, mode: int = 0o777) -> None:
        with self.parent(relative) as (fd, name):
            os.mkdir(name, mode, dir_fd=fd)

    def remove_folder(self, relative: str) -> None:
        with self.parent(relative) as (fd, name):
            os.rmdir(name, dir_fd=fd)

    def remove_file(self, relative: str) -> None:
        with self.parent(relative) as (fd, name):
            os.unlink(name, dir_fd=fd)

    def make_link(self, target: str, relative: str) -> None:
        with self.parent(relative) as (fd, name):
            os.symlink(target, name, dir_fd=fd)

    def readlink(self, relative: str) -> str:
        with self.parent(relative) as (fd, name):
            return os.readlink(name, dir_fd=fd)

    def create(self, relative: str, data: bytes, mode: int, chmod: int | None = None) -> None:
        """A new file (none may stand there) holding `data`; `chmod`: its exact bits."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with self.parent(relative) as (fd, name):
            handle = os.open(name, flags, mode, dir_fd=fd)
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            if chmod is not None:
                os.fchmod(out.fileno(), chmod)

    def chmod_folder(self, relative: str, mode: int) -> None:
        with self.parent(relative) as (fd, name):
            folder = os.open(name, _DIR, dir_fd=fd)
        try:
            os.fchmod(folder, mode)
        finally:
            os.close(folder)

    def rewrite(self, relative: str, data: bytes, mode: int | None) -> None:
        """`data` as the file at `relative`: a temporary file renamed over the name."""
        path = self.root / relative
        safe_open.replace_file(path, data, (self.root,), mode)

    def read(self, relative: str, limit: int) -> bytes | None:
        """The regular file's bytes (None: no regular file there, or more than `limit`)."""
        with self.parent(relative) as (fd, name):
            try:
                handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
            except OSError:
                return None
        try:
            info = os.fstat(handle)
            if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
                return None
            data = safe_open.read_all(handle, limit + 1)
            return data if len(data) <= limit else None
        finally:
            os.close(handle)

    def names(self, relative: str) -> list[str]:
        """The entries of the folder at `relative` (`""`: the root), sorted; [] when it
        is not a folder."""
        try:
            folder = self._open_folder(relative)
        except (FileNotFoundError, NotADirectoryError, PathMoved):
            return []
        try:
            return sorted(os.listdir(folder))
        finally:
            os.close(folder)

    def is_empty_folder(self, relative: str) -> bool:
        folder = self._open_folder(relative)
        try:
            return not os.listdir(folder)
        finally:
            os.close(folder)

    def files_under(self, relative: str) -> list[str]:
        """Every file, symlink and other non-folder below the folder at `relative`,
        relative to the root; folders entered through their fds only."""
        folder = self._open_folder(relative)
        try:
            return [f"{relative}/{name}" for name in _entries_below(folder)]
        finally:
            os.close(folder)

    def _open_folder(self, relative: str) -> int:
        if not relative:
            return safe_open.open_exact(self.root, _DIR, (self.root,))
        with self.parent(relative) as (fd, name):
            try:
                return os.open(name, _DIR, dir_fd=fd)
            except OSError as error:
                if error.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                if stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                    raise PathMoved(errno.ELOOP, f"{self.root / relative} is a symlink") from None
                raise

    def move_out(self, relative: str, destination: Path) -> None:
        """Move what stands at `relative` to `destination` (in caretz's own data dir; its
        folders are made private)."""
        private_data.make_dir(destination.parent)
        target = os.open(destination.parent, O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            with self.parent(relative) as (fd, name):
                _move(fd, name, target, destination.name)
        finally:
            os.close(target)

    def move_in(self, source: Path, relative: str) -> None:
        """Move `source` (in caretz's own data dir) to `relative`."""
        origin = os.open(source.parent, O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            with self.parent(relative) as (fd, name):
                _move(origin, source.name, fd, name)
        finally:
            os.close(origin)


def _move(source_dir: int, source: str, target_dir: int, target: str) -> None:
    """A rename between two folders' fds; across file systems a copy, then the original
    removed (both through fds)."""
    try:
        os.rename(source, target, src_dir_fd=source_dir, dst_dir_fd=target_dir)
    except OSError as error:
        if error.errno != errno.EXDEV:
            raise
        _copy(source_dir, source, target_dir, target)
        _remove(source_dir, source)


def _copy(source_dir: int, source: str, target_dir: int, target: str) -> None:
    info = os.stat(source, dir_fd=source_dir, follow_symlinks=False)
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(source, dir_fd=source_dir), target, dir_fd=target_dir)
    elif stat.S_ISDIR(info.st_mode):
        os.mkdir(target, 0o700, dir_fd=target_dir)
        inner_source = os.open(source, _DIR, dir_fd=source_dir)
        try:
            inner_target = os.open(target, _DIR, dir_fd=target_dir)
            try:
                for name in os.listdir(inner_source):
                    _copy(inner_source, name, inner_target, name)
                os.fchmod(inner_target, mode)
            finally:
                os.close(inner_target)
        finally:
            os.close(inner_source)
    elif stat.S_ISREG(info.st_mode):
        _copy_file(source_dir, source, target_dir, target, mode)
    else:
        raise OSError(errno.EXDEV, f"cannot move {source} ({safe_open.file_kind(info.st_mode)})")


def _copy_file(source_dir: int, source: str, target_dir: int, target: str, mode: int) -> None:
    reading = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=source_dir)
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        writing = os.open(target, flags, 0o600, dir_fd=target_dir)
        try:
            while chunk := os.read(reading, _COPY_CHUNK):
                os.write(writing, chunk)
            os.fchmod(writing, mode)
        finally:
            os.close(writing)
    finally:
        os.close(reading)


def remove_tree(path: Path) -> None:
    """Remove the folder `path` (caretz's own: a session's private /tmp) and everything
    below it, also what a command left read-only, through fds only: a folder inside it
    swapped for a symlink to HOME meanwhile is removed as a link, never followed. What
    cannot be removed stays."""
    try:
        parent = os.open(path.parent, O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            _remove(parent, path.name, unlock=True)
    finally:
        os.close(parent)


def _remove(parent: int, name: str, unlock: bool = False) -> None:
    """Remove `name` in the folder `parent`, a folder with everything below it; `unlock`
    makes each folder writable first (through its own fd) and carries on past failures."""
    info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(name, dir_fd=parent)
        return
    if unlock:
        _make_writable(parent, name)
    folder = os.open(name, _DIR, dir_fd=parent)
    try:
        for entry in os.listdir(folder):
            if not unlock:
                _remove(folder, entry)
                continue
            with contextlib.suppress(OSError):
                _remove(folder, entry, unlock)
    finally:
        os.close(folder)
    os.rmdir(name, dir_fd=parent)


def _make_writable(parent: int, name: str) -> None:
    """chmod 0700 the folder `name` itself: an O_PATH fd opened without following a
    symlink, changed through its /proc/self/fd link (fchmod refuses an O_PATH fd)."""
    folder = os.open(name, O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    try:
        with contextlib.suppress(OSError):
            os.chmod(f"/proc/self/fd/{folder}", 0o700)
    finally:
        os.close(folder)


def _entries_below(folder: int) -> list[str]:
    found: list[str] = []
    for name in sorted(os.listdir(folder)):
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        if not stat.S_ISDIR(info.st_mode):
            found.append(name)
            continue
        try:
            inner = os.open(name, _DIR, dir_fd=folder)
        except OSError:  # replaced meanwhile: counted as an entry
            found.append(name)
            continue
        try:
            found += [f"{name}/{below}" for below in _entries_below(inner)]
        finally:
            os.close(inner)
    return found
