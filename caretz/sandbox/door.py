"""The door: the one way caretz itself reads a project's files, and writes its own there.

The model's file tools check their paths (sandbox/paths.py) and open them race-free
(sandbox/safe_open.py). caretz also reads project files on its own, before any tool call
and with no rule asked: AGENTS.md / CLAUDE.md, custom command files, `.caretz/settings.json`,
`.mcp.json`, a worktree's `.git` pointer. A cloned repository chooses what stands at those
names (`AGENTS.md -> ~/.ssh/id_rsa`, `.claude/commands -> /proc`, a FIFO), so every such
read goes through `ProjectDoor`:

- the file must lie inside the door's roots (the project's root and the session's roots)
  once every symlink is resolved: `CLAUDE.md -> AGENTS.md` is read, a link that leaves the
  roots is refused, wherever along the path it stands;
- nothing hidden by the sandbox (credential stores, caretz's own config and data, the
  user's `sandbox.hidden`) and nothing in /proc or /sys, even inside the roots;
- the checked path is opened by safe_open, following no symlink, so a link swapped in
  after the check makes the open fail; the path is checked again, a few times, then refused;
- only a regular file is read (a FIFO would block, a device never ends), with one link (a
  hard link may be another file's, a key's: no path check can see where its other names
  are), and no more than the caller's limit.

Writes (`write_beneath`: a rule saved with "yes, always") and the strict read that goes
with them (`read_beneath`) follow no symlink at all below the project's root: a symlink
anywhere along the path is refused, so what caretz writes stays the project's own file.

A refusal is `Refused`, a PermissionError: callers that already turn an OSError into one
line (a warning, a ConfigError) say it as they say any unreadable file. Its str() is one
line naming the file and why.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from caretz.sandbox import safe_open
from caretz.sandbox.paths import PathGuard, PathRefused, resolve_path
from caretz.sandbox.policy import SandboxPolicy, is_within

OPEN_ATTEMPTS = 5  # a path that keeps changing while it is opened is refused after these
# Never a project's, even under a root of `/`: /proc holds caretz's own environment (its
# keys). A device (/dev) is no regular file, which the open refuses.
KERNEL_TREES = (Path("/proc"), Path("/sys"))
MAX_LISTED = 5000  # entries a listing looks at
MAX_DEPTH = 16  # folders deep a listing goes

HiddenCheck = Callable[[Path], "str | None"]


class Refused(PermissionError):
    """A project file the door does not open; str() is one line: the file and why."""

    def __init__(self, path: Path | str, reason: str):
        super().__init__(reason)
        self.strerror = reason
        self.path = str(path)
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def _nothing_hidden(_path: Path) -> str | None:
    return None


@dataclass(frozen=True)
class ProjectDoor:
    """Reads of a project's files as caretz makes them itself; see the module docstring."""

    roots: tuple[Path, ...]  # resolved: the project's root, then the session's roots
    hidden: HiddenCheck = _nothing_hidden  # why a path is hidden by the sandbox, or None

    @classmethod
    def for_session(
        cls, policy: SandboxPolicy, project_root: Path, guard: PathGuard | None = None
    ) -> ProjectDoor:
        """The session's door: its roots and the project's, its hidden paths (`guard`: the
        file tools' checks of the same policy, when they are built already)."""
        roots = [Path(os.path.realpath(project_root)), *policy.roots]
        hidden = (guard or PathGuard(policy)).hidden_reason
        return cls(tuple(dict.fromkeys(roots)), hidden)

    @classmethod
    def users_own(cls) -> ProjectDoor:
        """A door for files in the user's own folders (their command files): anywhere but
        /proc and /sys, still only regular files with one link, within the limit."""
        return cls((Path("/"),))

    def read(self, path: Path, limit: int) -> bytes:
        """The bytes of the regular file at `path`; FileNotFoundError when there is none,
        Refused when the door does not open it or it holds more than `limit` bytes."""
        for _ in range(OPEN_ATTEMPTS):
            real = self._checked(path)
            try:
                fd, info = safe_open.open_regular(real, self.roots)
            except safe_open.PathMoved:
                continue
            except safe_open.NotRegular as kind:
                raise Refused(path, f"is {kind.kind}, not a regular file") from None
            try:
                return _bounded(path, fd, info, limit)
            finally:
                os.close(fd)
        raise _kept_changing(path)

    def text(self, path: Path, limit: int, errors: str = "strict") -> str:
        """`read` as UTF-8 text (a UnicodeDecodeError with `errors="strict"`)."""
        return self.read(path, limit).decode("utf-8", errors)

    def list_files(self, folder: Path, suffix: str) -> list[Path]:
        """The entries but folders (files, symlinks and the rest, which the reads check)
        named `*suffix` below `folder`, sorted, walked without following a symlink; []
        when there is no folder. Raises Refused for a folder the door does not open."""
        for _ in range(OPEN_ATTEMPTS):
            real = self._checked(folder)
            try:
                fd = _open_folder(folder, real, self.roots)
            except FileNotFoundError:
                return []
            except safe_open.PathMoved:
                continue
            try:
                names = _walk(fd, PurePosixPath(), suffix, [MAX_LISTED], MAX_DEPTH)
            finally:
                os.close(fd)
            return [folder.joinpath(*name.parts) for name in sorted(names)]
        raise _kept_changing(folder)

    def _checked(self, path: Path) -> Path:
        """`path` with every symlink resolved, once it passes the checks; raises Refused."""
        absolute = Path(os.path.normpath(os.path.abspath(path)))
        try:
            real = resolve_path(absolute)
        except PathRefused as problem:
            raise Refused(path, f"cannot be resolved ({problem})") from None
        kernel = next((tree for tree in KERNEL_TREES if is_within(real, tree)), None)
        if kernel is not None:
            raise Refused(path, f"leads into {kernel}, which caretz never reads for a project")
        if not any(is_within(real, root) for root in self.roots):
            roots = ", ".join(str(root) for root in self.roots)
            raise Refused(path, f"leads to {real}, outside the project ({roots})")
        reason = self.hidden(absolute) or self.hidden(real)
        if reason:
            raise Refused(path, reason)
        return real


def read_beneath(root: Path, relative: str, limit: int) -> bytes:
    """The regular file at `root/relative`, reached with no symlink anywhere below `root`;
    FileNotFoundError when there is none, Refused otherwise (a symlink, a FIFO, too large)."""
    return read_beneath_stat(root, relative, limit)[0]


def read_beneath_stat(root: Path, relative: str, limit: int) -> tuple[bytes, os.stat_result]:
    """`read_beneath`, with the file's status as it was opened (its mtime, say)."""
    anchor, path = _beneath(root, relative)
    try:
        fd, info = safe_open.open_regular(path, (anchor,))
    except safe_open.PathMoved:
        raise Refused(root / relative, _why_moved(anchor, path)) from None
    except safe_open.NotRegular as kind:
        raise Refused(root / relative, f"is {kind.kind}, not a regular file") from None
    try:
        return _bounded(root / relative, fd, info, limit), info
    finally:
        os.close(fd)


def write_beneath(root: Path, relative: str, data: bytes) -> Path:
    """Write `data` as the file `root/relative` (its folders made), with no symlink
    followed below `root`: a temporary file renamed over the name. An existing file keeps
    its permission bits. Returns the path; Refused when a symlink stands along it."""
    anchor, path = _beneath(root, relative)
    try:
        safe_open.make_dirs(path.parent, (anchor,))
        info = _lstat_beneath(path, anchor)
        if info is not None and stat.S_ISLNK(info.st_mode):
            raise safe_open.PathMoved(0, f"{path} is a symlink")
        if info is not None and not stat.S_ISREG(info.st_mode):
            kind = safe_open.file_kind(info.st_mode)
            raise Refused(root / relative, f"is {kind}, not a regular file")
        safe_open.replace_file(path, data, (anchor,), info.st_mode if info else None)
    except safe_open.PathMoved:
        raise Refused(root / relative, _why_moved(anchor, path)) from None
    return root / relative


def _lstat_beneath(path: Path, anchor: Path) -> os.stat_result | None:
    """What stands at `path` itself (a symlink is not followed); None: nothing."""
    directory = safe_open.open_exact(path.parent, safe_open.O_PATH | os.O_DIRECTORY, (anchor,))
    try:
        return os.stat(path.name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        return None
    finally:
        os.close(directory)


def _why_moved(anchor: Path, path: Path) -> str:
    """Why a path below `anchor` could not be opened without following a symlink."""
    current = anchor
    for part in path.relative_to(anchor).parts:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except OSError:
            break
        if stat.S_ISLNK(mode):
            return (
                f"{current} is a symlink; caretz reads and writes its own files in a project "
                "only where no symlink leads"
            )
        if current != path and not stat.S_ISDIR(mode):
            kind = "a file" if stat.S_ISREG(mode) else safe_open.file_kind(mode)
            return f"{current} is {kind}, not a folder"
    return "it changed while it was opened"


def _beneath(root: Path, relative: str) -> tuple[Path, Path]:
    parts = PurePosixPath(relative).parts
    if not parts or PurePosixPath(relative).is_absolute() or ".." in parts:
        raise ValueError(f"{relative!r} is not a path below a folder")
    anchor = Path(os.path.realpath(root))
    return anchor, anchor.joinpath(*parts)


def _bounded(path: Path | str, fd: int, info: os.stat_result, limit: int) -> bytes:
    if info.st_nlink > 1:
        raise Refused(
            path,
            f"has {info.st_nlink} hard links; caretz reads project files with one (another "
            "name may be a file outside the project)",
        )
    if info.st_size > limit:
        raise Refused(path, f"is {info.st_size:,} bytes, more than caretz reads ({limit:,})")
    data = safe_open.read_all(fd, limit + 1)
    if len(data) > limit:
        raise Refused(path, f"grew past {limit:,} bytes while it was read")
    return data


def _kept_changing(path: Path) -> Refused:
    return Refused(
        path,
        f"kept changing while it was opened (a symlink appeared along it {OPEN_ATTEMPTS} times)",
    )


def _open_folder(shown: Path, real: Path, anchors: Sequence[Path]) -> int:
    """A readable fd for the folder at `real` (checked), refusing what is no folder."""
    probe = safe_open.open_exact(real, safe_open.O_PATH, anchors)
    try:
        kind = os.fstat(probe)
    finally:
        os.close(probe)
    if stat.S_ISLNK(kind.st_mode):
        raise safe_open.PathMoved(0, f"{real} is a symlink now")
    if not stat.S_ISDIR(kind.st_mode):
        raise Refused(shown, f"is {safe_open.file_kind(kind.st_mode)}, not a folder")
    fd = safe_open.open_exact(real, os.O_RDONLY | os.O_DIRECTORY, anchors)
    opened = os.fstat(fd)
    if (opened.st_dev, opened.st_ino) != (kind.st_dev, kind.st_ino):
        os.close(fd)
        raise safe_open.PathMoved(0, f"{real} was replaced while it was opened")
    return fd


def _walk(
    fd: int, prefix: PurePosixPath, suffix: str, budget: list[int], depth: int
) -> list[PurePosixPath]:
    """Names below the open folder `fd` ending in `suffix`, but folders, which are entered
    through their fds, never through a symlink."""
    found: list[PurePosixPath] = []
    with os.scandir(fd) as entries:
        listed = sorted(entries, key=lambda entry: entry.name)
    for entry in listed:
        budget[0] -= 1
        if budget[0] < 0:
            break
        if entry.is_dir(follow_symlinks=False):
            if depth > 0:
                found += _walk_into(fd, entry.name, prefix, suffix, budget, depth)
        elif entry.name.endswith(suffix):  # a FIFO too: its read says why it is refused
            found.append(prefix / entry.name)
    return found


def _walk_into(
    parent: int, name: str, prefix: PurePosixPath, suffix: str, budget: list[int], depth: int
) -> list[PurePosixPath]:
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=parent)
    except OSError:  # replaced by a symlink or removed since it was listed: skipped
        return []
    try:
        return _walk(fd, prefix / name, suffix, budget, depth - 1)
    finally:
        os.close(fd)
