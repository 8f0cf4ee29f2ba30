"""Opening a checked path so that what was checked is what gets opened.

The file tools check a path (sandbox/paths.py: every symlink resolved, then the roots and
the hidden list) and then open it. Between the two a sandboxed command may swap a
directory or the file for a symlink to `~/.ssh/id_rsa`, to a file outside the roots or to
caretz's data dir. So the open never follows a symlink: the checked path holds none, and
`openat2(2)` with RESOLVE_NO_SYMLINKS (plus RESOLVE_BENEATH from the directory fd of the
deepest root that holds the path, and RESOLVE_NO_MAGICLINKS) opens exactly that path or
fails with ELOOP. Where the kernel lacks openat2 (before Linux 5.6) the same is done one
component at a time, each directory opened with O_NOFOLLOW | O_DIRECTORY from the one
before. A symlink that appeared after the check is `PathMoved`; the caller resolves and
checks the path again, a bounded number of times.

A write never opens the target: it writes a temporary file beside it through the parent
directory's fd and renames it over the name (renameat replaces a symlink put there, it
does not follow it, and a hard link to a file elsewhere keeps that file's content).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SYS_OPENAT2 = 437  # the same number on every architecture (the unified syscall table)
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
_RESOLVE = RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH
O_PATH = getattr(os, "O_PATH", 0o10000000)
# Errors that mean a component of the checked path is not what it was: a symlink now
# (ELOOP), a file where a directory was (ENOTDIR), or a path leaving its anchor (EXDEV).
_MOVED = (errno.ELOOP, errno.ENOTDIR, errno.EXDEV)


class PathMoved(OSError):
    """A component of a checked path changed (a symlink appeared) before it was opened."""


@functools.cache
def _open_how() -> Any:
    """The kernel's `struct open_how`."""

    class OpenHow(ctypes.Structure):
        _fields_ = [
            ("flags", ctypes.c_uint64),
            ("mode", ctypes.c_uint64),
            ("resolve", ctypes.c_uint64),
        ]

    return OpenHow


_libc: Any = None
_have_openat2: bool | None = None


def has_openat2() -> bool:
    """Whether this kernel has openat2 (checked once, on first use)."""
    global _have_openat2
    if _have_openat2 is None:
        try:
            fd = _openat2(-100, "/", O_PATH | os.O_DIRECTORY, 0, RESOLVE_NO_SYMLINKS)
        except OSError as error:
            _have_openat2 = error.errno not in (errno.ENOSYS, errno.EPERM)
        else:
            os.close(fd)
            _have_openat2 = True
    return _have_openat2


def _openat2(dirfd: int, path: str, flags: int, mode: int, resolve: int) -> int:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    how = _open_how()(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, resolve)
    fd: int = _libc.syscall(
        ctypes.c_long(SYS_OPENAT2),
        ctypes.c_int(dirfd),
        ctypes.c_char_p(os.fsencode(path)),
        ctypes.byref(how),
        ctypes.c_size_t(ctypes.sizeof(how)),
    )
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), path)
    return fd


def open_exact(path: Path, flags: int, anchors: Sequence[Path] = (), mode: int = 0o666) -> int:
    """An fd for `path` (absolute, resolved: no symlink, no `..`), no symlink followed.

    `anchors` are directories (the sandbox's roots, resolved) to open beneath: the deepest
    one holding `path` is the start, else `/`. Raises PathMoved when a component is a
    symlink (or not a directory) now, other OSErrors as the kernel gives them.
    """
    anchor = _anchor(path, anchors)
    relative = "." if path == anchor else str(path.relative_to(anchor))
    return open_below(anchor, relative, flags, mode)


def open_below(anchor: Path, relative: str, flags: int, mode: int = 0o666) -> int:
    """`open_exact` for `relative` (a path without `..`; "." for `anchor` itself) beneath
    the directory `anchor`, for callers that hold the two apart (sandbox/beneath.py)."""
    flags |= os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        if has_openat2():
            base = _openat2(-100, str(anchor), O_PATH | os.O_DIRECTORY, 0, RESOLVE_NO_SYMLINKS)
            try:
                return _openat2(base, relative, flags, mode, _RESOLVE)
            finally:
                os.close(base)
        return _walk_open(anchor, relative, flags, mode)
    except OSError as error:
        if error.errno in _MOVED and not isinstance(error, PathMoved):
            where = os.path.normpath(os.path.join(anchor, relative))
            raise PathMoved(error.errno, f"{where} changed while it was opened") from None
        raise


def _walk_open(anchor: Path, relative: str, flags: int, mode: int) -> int:
    """open_exact without openat2: one component at a time, never following a symlink."""
    directory = os.open("/", O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        parts = [*anchor.parts[1:], *Path(relative).parts]
        parts = [part for part in parts if part != "."]
        if not parts:
            return os.open("/", flags, mode)
        for part in parts[:-1]:
            step = os.open(
                part, O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=directory
            )
            os.close(directory)
            directory = step
        return os.open(parts[-1], flags, mode, dir_fd=directory)
    finally:
        os.close(directory)


def _anchor(path: Path, anchors: Sequence[Path]) -> Path:
    holding = [root for root in anchors if root == path or root in path.parents]
    return max(holding, key=lambda root: len(root.parts), default=Path("/"))


def open_regular(path: Path, anchors: Sequence[Path] = ()) -> tuple[int, os.stat_result]:
    """A read-only fd for the regular file at `path`, and its stat.

    The path is first opened with O_PATH (which opens no device and waits on no FIFO), so a
    FIFO, socket, device or directory is refused before anything reads it: NotRegular.
    """
    probe = open_exact(path, O_PATH, anchors)
    try:
        kind = os.fstat(probe)
    finally:
        os.close(probe)
    if stat.S_ISLNK(kind.st_mode):  # O_PATH | O_NOFOLLOW opens a final symlink itself
        raise PathMoved(errno.ELOOP, f"{path} is a symlink now")
    if not stat.S_ISREG(kind.st_mode):
        raise NotRegular(kind.st_mode)
    fd = open_exact(path, os.O_RDONLY | os.O_NONBLOCK, anchors)
    opened = os.fstat(fd)
    if (opened.st_dev, opened.st_ino) != (kind.st_dev, kind.st_ino):
        os.close(fd)
        raise PathMoved(errno.ESTALE, f"{path} was replaced while it was opened")
    return fd, opened


class NotRegular(OSError):
    """Not a regular file; `kind` says what it is, for the model."""

    def __init__(self, mode: int):
        super().__init__(errno.EINVAL, "not a regular file")
        self.kind = file_kind(mode)


def file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def make_dirs(path: Path, anchors: Sequence[Path] = ()) -> None:
    """Create the missing directories of `path` (resolved), each one beneath the last
    through its fd, so no symlink planted along the way is followed."""
    missing: list[str] = []
    existing = path
    while True:
        try:
            directory = open_exact(existing, O_PATH | os.O_DIRECTORY, anchors)
            break
        except FileNotFoundError:
            if existing.parent == existing:
                raise
            missing.append(existing.name)
            existing = existing.parent
    try:
        for name in reversed(missing):
            # One made meanwhile is opened below, without following a symlink.
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=directory)
            step = os.open(
                name, O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=directory
            )
            os.close(directory)
            directory = step
    except OSError as error:
        if error.errno in _MOVED:
            raise PathMoved(error.errno, f"{path} changed while it was made") from None
        raise
    finally:
        os.close(directory)


def replace_file(
    path: Path, data: bytes, anchors: Sequence[Path] = (), file_mode: int | None = None
) -> None:
    """Write `data` as the file at `path` (resolved): a temporary file beside it, through
    the parent directory's fd, renamed over the name. `file_mode` keeps an existing file's
    permission bits (None: a new file's, as the umask leaves them)."""
    directory = open_exact(path.parent, O_PATH | os.O_DIRECTORY, anchors)
    try:
        temporary = f".{path.name[:200]}.caretz-{os.urandom(4).hex()}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temporary, flags, 0o666, dir_fd=directory)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                if file_mode is not None:
                    os.fchmod(handle.fileno(), stat.S_IMODE(file_mode))
            os.rename(temporary, path.name, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=directory)
            raise
    finally:
        os.close(directory)


def read_all(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes from `fd` (a regular file's), read to its end or the limit."""
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
