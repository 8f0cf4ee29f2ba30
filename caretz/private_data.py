"""caretz's data dir, private to the user from its first byte, whatever the umask.

Sessions, their images, the checkpoint stores (which hold copies of a project's files,
its `.env` too), approvals, the prompt history and logs live in the data dir. Every
folder caretz makes there is 0700 and every file 0600, set explicitly rather than left
to the umask (umask 000 would make them readable, and writable, by anyone); programs
caretz runs to write there (git, for the checkpoints) run with `PRIVATE_UMASK`.
`private_root` makes a data dir left open by an older caretz private at start.

A leaf: the session log, the checkpoints, the sandbox's quarantine, approvals and the
views all create their folders and files here and nowhere else
(tests/test_architecture_boundaries.py).
"""

from __future__ import annotations

import contextlib
import os
import stat
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
        "run",
        "quarantine",
        "schedule",
        "judge-eval",
        "prompt-history",
        "hook-approvals.json",
        "mcp-approvals.json",
        "project-trust.json",
    }
)


class NotPrivate(OSError):
    """A data dir caretz may not make private: another user's, or one everyone may write
    in (/tmp): closing it would take it from them."""


def make_dir(path: Path) -> Path:
    """`path`, made with every missing folder above it, each 0700 whatever the umask."""
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
    os.mkdir(path, DIR_MODE)
    os.chmod(path, DIR_MODE)
    return path


def open_file(path: Path, flags: int) -> int:
    """`os.open(path, flags)` for a file of caretz's own, created 0600 (O_CREAT is added),
    and made 0600 when an older caretz left it open; never through a symlink."""
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


def write_file(path: Path, data: bytes | str) -> None:
    """`path` holds `data`, written beside it and renamed into place: a reader never sees
    half of it, and a symlink planted in its place is replaced, never followed."""
    make_dir(path.parent)
    partial = path.with_name(f".{path.name}.{os.urandom(4).hex()}")
    handle = open_file(partial, os.O_WRONLY | os.O_EXCL)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise


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
