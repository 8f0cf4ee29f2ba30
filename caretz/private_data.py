"""caretz's data dir, private to the user from its first byte, whatever the umask.

Sessions, their images, the checkpoint stores (which hold copies of a project's files,
its `.env` too), approvals, the prompt history and logs live in the data dir. Every
folder caretz makes there is 0700 and every file 0600, set explicitly rather than left
to the umask (umask 000 would make them readable, and writable, by anyone); programs
caretz runs to write there (git, for the checkpoints) run with `PRIVATE_UMASK`.
`private_root` makes a data dir left open by an older caretz private at start.

A write that fails for want of room or rights (a full disk, a quota, a read-only or
closed folder) is one `DataWriteFailed`, naming the data folder and what to do: every
function here raises it, and `writing` turns such an error into it around a write on a
file opened here, so each front end says it in one line.

A leaf: the session log, the checkpoints, the sandbox's quarantine, approvals and the
views all create their folders and files here and nowhere else
(tests/test_architecture_boundaries.py).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
PRIVATE_UMASK = 0o077  # for a program caretz runs that writes in the data dir
OPEN_TO_OTHERS = 0o077  # the group's and others' bits
# What caretz keeps at the top of its data dir (tests/test_architecture_boundaries.py
# finds each name the code joins to the data dir here): a data dir an older caretz left
# open is closed only when it holds nothing else.
OWN_NAMES = frozenset(
    {
        "sessions",
        "checkpoints",
        "mcp-logs",
        "mcp-oauth",
        "run",
        "quarantine",
        "schedule",
        "judge-eval",
        "prompt-history",
        "hook-approvals.json",
        "mcp-approvals.json",
        "project-trust.json",
        "plugins",
    }
)


# Why a write fails that no retry fixes: no room, or no right to write there.
NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
NO_RIGHT = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


class DataWriteFailed(OSError):
    """caretz could not write its own data: `folder` (the data dir), why, what to do."""

    def __init__(self, folder: Path, cause: OSError):
        super().__init__(cause.errno, cause.strerror)
        self.folder = folder

    def __str__(self) -> str:
        if self.errno in NO_ROOM:
            fix = "free space there, or point CARETZ_DATA_DIR at a folder with room"
        else:
            fix = "make it writable, or point CARETZ_DATA_DIR at a folder caretz can write"
        reason = self.strerror or os.strerror(self.errno or 0)
        return f"cannot write caretz's data folder {self.folder}: {reason}: {fix}"


def data_folder(path: Path, *, folder: bool = False) -> Path:
    """The data dir a path of caretz's own lies in: the folder above the first of
    OWN_NAMES on its way down; else the path itself (a `folder`) or its folder."""
    for part in [path, *path.parents]:
        if part.name in OWN_NAMES:
            return part.parent
    return path if folder else path.parent


@contextlib.contextmanager
def writing(path: Path, *, folder: bool = False) -> Iterator[None]:
    """Around a write of caretz's own file (or `folder`) `path`: an OSError for want of
    room or rights becomes DataWriteFailed, naming the data folder."""
    try:
        yield
    except DataWriteFailed:
        raise
    except OSError as error:
        if error.errno in NO_ROOM or error.errno in NO_RIGHT:
            raise DataWriteFailed(data_folder(path, folder=folder), error) from error
        raise


class NotPrivate(OSError):
    """A data dir caretz may not make private: another user's, or one everyone may write
    in (/tmp): closing it would take it from them."""


def make_dir(path: Path) -> Path:
    """`path`, made with every missing folder above it, each 0700 whatever the umask."""
    with writing(path, folder=True):
        return _make_dir(path)


def _make_dir(path: Path) -> Path:
    missing: list[Path] = []
    folder = path
    while not os.path.lexists(folder) and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, DIR_MODE)
            os.chmod(folder, DIR_MODE)  # mkdir's mode went through the umask
    return path


def make_new_dir(path: Path) -> Path:
    """`path` made 0700 (the folders above it too); FileExistsError when it is there."""
    make_dir(path.parent)
    with writing(path, folder=True):
        os.mkdir(path, DIR_MODE)
        os.chmod(path, DIR_MODE)
    return path


def open_file(path: Path, flags: int) -> int:
    """`os.open(path, flags)` for a file of caretz's own, created 0600 (O_CREAT is added),
    and made 0600 when an older caretz left it open; never through a symlink."""
    with writing(path):
        handle = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
        try:
            mode = stat.S_IMODE(os.fstat(handle).st_mode)
            if mode != FILE_MODE:
                os.fchmod(handle, FILE_MODE)
        except OSError:
            os.close(handle)
            raise
    return handle


def append_to(path: Path) -> int:
    """A file of caretz's own opened to append to, its folder made first."""
    make_dir(path.parent)
    return open_file(path, os.O_WRONLY | os.O_APPEND)


def append(path: Path, data: bytes) -> None:
    """`data` added at the end of caretz's own file `path` (made private first)."""
    with writing(path), os.fdopen(append_to(path), "ab", buffering=0) as out:
        write_all(out.fileno(), data)


def write_all(handle: int, data: bytes) -> None:
    """Every byte of `data` to the file `handle` (a write may take only part)."""
    view = memoryview(data)
    while view:
        view = view[os.write(handle, view) :]


def write_file(path: Path, data: bytes | str, *, executable: bool = False) -> None:
    """`path` holds `data`, written beside it and renamed into place: a reader never sees
    half of it, and a symlink planted in its place is replaced, never followed.
    `executable`: 0700 (an installed plugin's script), else 0600."""
    make_dir(path.parent)
    partial = path.with_name(f".{path.name}.{os.urandom(4).hex()}")
    handle = open_file(partial, os.O_WRONLY | os.O_EXCL)
    try:
        if executable:
            os.fchmod(handle, DIR_MODE)
        with writing(path), os.fdopen(handle, "wb") as out:
            out.write(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)
            out.close()  # its last bytes written here, where a full disk is caught
            os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise


def move_folder(source: Path, target: Path) -> None:
    """The folder `source` (caretz's own, made here) renamed to `target` in the data dir."""
    with writing(target, folder=True):
        os.rename(source, target)


def installed_plugins(data_dir: Path) -> Path:
    """Where installed plugins are copied (shown read-only to a session's commands)."""
    return data_dir / "plugins" / "installed"


def touch(path: Path) -> Path:
    """`path` exists as a private file (one another program will append to)."""
    os.close(append_to(path))
    return path


def private_root(root: Path) -> Path:
    """The data dir `root`, private: one an older caretz left open (0755) is closed, with
    everything in it; a missing one is left to be made by its first file. Raises
    NotPrivate for a folder that is not this user's to close."""
    if not os.path.lexists(root):
        return root
    info = os.stat(root)
    if not stat.S_ISDIR(info.st_mode) or not info.st_mode & OPEN_TO_OTHERS:
        return root  # a file in its place is the session store's to report
    if info.st_uid != os.getuid():
        raise NotPrivate(f"the data folder {root} belongs to another user")
    if info.st_mode & (stat.S_ISVTX | stat.S_IWOTH):
        raise NotPrivate(f"the data folder {root} is one everyone may write in")
    others = sorted(name for name in os.listdir(root) if not _own(name))
    if others:  # a folder of the user's (their home, say): closing it all is not caretz's to do
        shown = ", ".join(others[:3]) + (", …" if len(others) > 3 else "")
        raise NotPrivate(f"the data folder {root} holds what caretz did not make ({shown})")
    close_tree(root)
    return root


def _own(name: str) -> bool:
    """A name caretz keeps at the top of its data dir, or one of its files being written."""
    return name in OWN_NAMES or name.startswith((".approvals-", ".hook-", ".mcp-", ".prompt"))


def close_tree(root: Path) -> None:
    """Take the group's and others' bits off `root` and everything in it (symlinks are
    not followed): what an older caretz, or git under the user's umask, left open."""
    os.chmod(root, DIR_MODE)
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = os.path.join(folder, name)
            with contextlib.suppress(OSError):
                info = os.lstat(path)
                if not stat.S_ISLNK(info.st_mode) and info.st_mode & OPEN_TO_OTHERS:
                    os.chmod(path, stat.S_IMODE(info.st_mode) & ~OPEN_TO_OTHERS)
