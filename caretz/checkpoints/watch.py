"""Which files can have changed since the last scan: inotify watches on every folder.

Only a hint that narrows a scan (checkpoints/snapshot.py), never a record of its own:
a checkpoint after a command looks at the paths the watches saw, and at the whole tree
whenever they cannot vouch for the whole interval since the last scan. They vouch only
when every folder of the project was watched before that scan began, each folder that
appeared since was watched and is looked at whole, and no event was lost. Anything else
is doubt, and doubt is a whole-tree scan: not Linux, a project on a file system that is
not a local one (NFS, FUSE, 9p: changes made by other machines raise no event), a folder
on another file system (a mount below the project), the watch limit reached
(ENOSPC/EMFILE), an overflowed event queue, a folder renamed or moved away (its watches
would name the old path), the project's folder itself moved, deleted or unmounted.

What inotify does not see, and so neither does this: a write through a shared memory
map (`mmap`; one after the file's descriptor was closed is followed by no event at all),
a write through a hard link from outside the project, and a folder mounted below the
project after the watches were set. docs/checkpoints.md says so. A restore never takes
the hint: it looks at the whole tree before it writes (Stager.snapshot's `whole`), so what
the watches missed is held by the restore's own checkpoint.
"""

from __future__ import annotations

import ctypes
import errno
import os
import re
import struct
import sys
import weakref
from collections.abc import Collection, Sequence
from pathlib import Path

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_UNMOUNT = 0x2000
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

WATCH_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_DONT_FOLLOW
)
# Events lost (the queue overflowed), or a file system gone from under a watch.
LOST = IN_Q_OVERFLOW | IN_UNMOUNT
_OCTAL = re.compile(r"\\([0-7]{3})")
EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then the name, NUL-padded
# File systems whose changes all pass through this kernel, so inotify sees them.
LOCAL_FILE_SYSTEMS = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs", "zfs", "overlay", "bcachefs"}
)
# File systems where a folder's link count is 2 plus its subfolders (1 when too many to
# count), so a folder with a count of 2 has none and need not be read to find them.
LINKS_COUNT_FOLDERS = frozenset({"ext2", "ext3", "ext4", "xfs", "tmpfs"})
# More folders than this and the tree is scanned whole every time (each watch is kernel
# memory, and the walk that sets them up is paid by the first checkpoint).
MAX_FOLDERS = 100_000
# The watches are the user's, shared with editors and other tools (an editor that cannot
# set its own says it cannot watch the workspace): a checkpoint takes at most a quarter.
WATCH_LIMIT = "/proc/sys/fs/inotify/max_user_watches"
WATCH_SHARE = 4


def watch_budget(limit_file: str = WATCH_LIMIT) -> int:
    """How many watches a tree may take: a quarter of the user's limit; 0 when the limit
    cannot be read."""
    try:
        return int(Path(limit_file).read_text().strip()) // WATCH_SHARE
    except (OSError, ValueError):
        return 0


class WatchUnavailable(Exception):
    """The watches cannot vouch for the tree (see the module docstring)."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def file_system_type(path: Path, mountinfo: str = "/proc/self/mountinfo") -> str | None:
    """The type of the file system `path` is on (the longest mount point above it); None
    when it cannot be told, or something is mounted below `path` (a folder there would be
    on another file system)."""
    try:
        lines = Path(mountinfo).read_text(errors="surrogateescape").splitlines()
    except OSError:
        return None
    target, best, kind = str(path), -1, None
    for line in lines:
        fields = line.split(" ")
        if " - " not in line or len(fields) < 5:
            continue
        point = _unescape(fields[4])
        if point.startswith(target.rstrip("/") + "/"):
            return None
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > best:
            best, kind = len(point), line.split(" - ", 1)[1].split(" ", 1)[0]
    return kind


def _unescape(field: str) -> str:
    """A mountinfo field's octal escapes (`\\040` for a space) undone."""
    return _OCTAL.sub(lambda found: chr(int(found.group(1), 8)), field)


class TreeWatch:
    """Watches on every folder below `root` but `.git` folders and `skip`."""

    def __init__(
        self,
        root: Path,
        skip: Collection[Path] = (),
        max_folders: int = MAX_FOLDERS,
        limit_file: str = WATCH_LIMIT,
    ):
        """Raises WatchUnavailable when the tree cannot be watched whole."""
        if not sys.platform.startswith("linux"):
            raise WatchUnavailable("not Linux")
        self.root = root
        self._root = os.fsencode(root)
        self._skip = {os.fsencode(path) for path in skip}
        self._max = min(max_folders, watch_budget(limit_file))
        kind = file_system_type(root)
        if kind not in LOCAL_FILE_SYSTEMS:
            raise WatchUnavailable(f"{root} is not on one local file system")
        self._by_links = kind in LINKS_COUNT_FOLDERS
        self._libc = _libc()
        self._fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self._fd < 0:
            raise WatchUnavailable(os.strerror(ctypes.get_errno()))
        self._closer = weakref.finalize(self, os.close, self._fd)
        self._folders: dict[int, bytes] = {}  # watch descriptor: folder, relative ("" root)
        try:
            self._watch_below(b"")
        except WatchUnavailable:
            self.close()
            raise

    def close(self) -> None:
        self._closer()

    def changed(self) -> set[str] | None:
        """The paths (relative to the root) events named since the last call: files, and
        folders that appeared (to be looked at whole, now watched themselves); None when
        the watches lost track and cannot vouch (close this one and start again)."""
        found: set[bytes] = set()
        try:
            while True:
                try:
                    data = os.read(self._fd, 1 << 16)
                except BlockingIOError:
                    break
                if not self._take(data, found):
                    return None
        except (OSError, WatchUnavailable):
            return None
        return {os.fsdecode(path) for path in found}

    def _take(self, data: bytes, found: set[bytes]) -> bool:
        """Adds the paths of one read's events to `found`; False: lost track."""
        offset = 0
        while offset < len(data):
            wd, mask, _cookie, length = EVENT.unpack_from(data, offset)
            offset += EVENT.size
            name = data[offset : offset + length].rstrip(b"\0")
            offset += length
            if mask & LOST:
                return False
            folder = self._folders.get(wd)
            if mask & IN_IGNORED:
                self._folders.pop(wd, None)
                continue
            if folder is None:
                continue  # a folder's last events after its watch went
            if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                if folder == b"":
                    return False  # the project's folder itself
                continue  # its parent's event names it
            if not name:
                continue
            path = folder + b"/" + name if folder else name
            if mask & IN_ISDIR and mask & IN_MOVED_FROM:
                return False  # its watches (and its folders') would name the old path
            if mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO) and name != b".git":
                self._watch_below(path)  # (a new `.git` makes the scan whole: ChangeFeed)
            found.add(path)
        return True

    def _watch_below(self, start: bytes) -> None:
        """Watches `start` and every folder below it: each is watched before it is looked
        at (its link count, then its entries), so a folder made meanwhile raises an
        event. Most folders hold no folder, and their link count says so (2) without a
        read of their entries: on the Linux source, 4,000 of 5,100 folders."""
        pending = [start]
        while pending:
            relative = pending.pop()
            full = self._root + b"/" + relative if relative else self._root
            if full in self._skip:
                continue
            if not self._add(full, relative):
                continue
            try:
                if self._by_links and os.lstat(full).st_nlink == 2:
                    continue
                entries = list(os.scandir(full))
            except FileNotFoundError:
                continue  # gone again: its parent's event names it
            except OSError as error:
                raise WatchUnavailable(f"{os.fsdecode(full)}: {error.strerror}") from error
            for entry in entries:
                if entry.name != b".git" and entry.is_dir(follow_symlinks=False):
                    pending.append(relative + b"/" + entry.name if relative else entry.name)

    def _add(self, full: bytes, relative: bytes) -> bool:
        """Watches one folder; False when it is gone (or no longer a folder)."""
        if len(self._folders) >= self._max:
            raise WatchUnavailable(f"more than {self._max:,} folders")
        wd = self._libc.inotify_add_watch(self._fd, full, WATCH_MASK)
        if wd < 0:
            code = ctypes.get_errno()
            if code in (errno.ENOENT, errno.ENOTDIR):
                return False
            raise WatchUnavailable(f"{os.fsdecode(full)}: {os.strerror(code)}")
        self._folders[wd] = relative
        return True


def _index_state(index: Path) -> tuple[int, int, int, int] | None:
    try:
        info = os.stat(index)
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class ChangeFeed:
    """Which paths a scan of the shadow index (`index`) against the tree at `root` must
    look at: those the watches saw change since the last scan, or None for every path.

    Narrows a scan only when the watches vouch for the whole interval (see the module
    docstring) and the shadow index is the file this feed's own last scan left (another
    caretz process may have staged the tree in between). A change to a `.gitignore`
    (what it lets in may lie anywhere below it) or to a `.git` is looked at whole.
    """

    def __init__(
        self, root: Path, index: Path, skip: Collection[Path] = (), limit: int = 200
    ) -> None:
        self.root = root
        self.index = index
        self.skip = tuple(skip)
        self.limit = limit  # more paths than this and the whole tree is scanned
        self.off_reason: str | None = None  # why this session's scans are all whole
        self._watch: TreeWatch | None = None
        self._index_seen: tuple[int, int, int, int] | None = None
        self._trusted = False  # the scan under way leaves the index vouched for
        self._pending: set[str] = set()  # seen, not looked at yet (a scan of named files)
        self._named: set[str] = set()  # what the scan under way looks at, if named

    def begin(self, named: Sequence[str] | None = None) -> list[str] | None:
        """Called before each scan: the paths to look at, or None (the whole tree).
        `named`: the scan looks at these files alone (caretz's own tools wrote them); the
        other paths the watches saw wait for the next scan."""
        seen, self._index_seen = self._index_seen, None
        intact = seen is not None and seen == _index_state(self.index)
        self._trusted, self._named = False, set(named or ())
        if self.off_reason is not None:
            return None
        found = self._watch.changed() if self._watch is not None else None
        if found is None:  # not started yet, or lost track: watched before a whole scan
            if self._watch is not None:
                self._watch.close()
            self._start()
            self._pending = set()
            self._trusted = named is None
            return None
        # Drained: the scan that follows sees every change made before it.
        self._pending |= found
        if named is not None:
            self._trusted = intact
            return None
        self._trusted = True
        found, self._pending = self._pending, set()
        ignore_rules = any(os.path.basename(path) in (".gitignore", ".git") for path in found)
        if not intact or ignore_rules or len(found) > self.limit:
            return None
        return sorted(found)

    def close(self) -> None:
        """Gives the watches back (the user's inotify instances and watches are shared with
        editors and other tools); the scans after it look at the whole tree."""
        self.off_reason = "closed"
        if self._watch is not None:
            self._watch.close()
            self._watch = None

    def done(self) -> None:
        """Called when a scan and its staging succeeded."""
        if self._trusted and self._watch is not None:
            self._pending -= self._named
            self._index_seen = _index_state(self.index)

    def _start(self) -> None:
        try:
            self._watch = TreeWatch(self.root, self.skip)
        except WatchUnavailable as why:
            self._watch, self.off_reason = None, str(why)
