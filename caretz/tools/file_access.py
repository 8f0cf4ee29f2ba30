"""How the file tools reach a file: a path argument checked, then opened race-free.

A path goes through the session's PathGuard (caretz.sandbox.paths: every symlink resolved,
then the roots and the hidden list) and is then opened with caretz.sandbox.safe_open,
which follows no symlink, so what was checked is what is read or written. A symlink that
appears in between makes the open fail; the path is then resolved and checked again, a
few times, before the call is refused. Only regular files are read: a FIFO, socket,
device or directory is a failed result before anything waits on it.

Problems are `FileProblem`s (one line for the model; the registry makes it a failed
result) or the guard's `PathRefused`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from caretz.lazy_dataclass import lazy_dataclass
from caretz.sandbox import safe_open
from caretz.sandbox.paths import CheckedPath, PathRefused
from caretz.sandbox.paths import resolve_path as resolve_links
from caretz.tools.base import ToolArgumentError, ToolContext, ToolResult

# How many times a path is checked and opened again when a symlink appears along it.
OPEN_ATTEMPTS = 5


class FileProblem(Exception):
    """A file a tool cannot use as asked; str() is one line for the model."""


_Run = TypeVar("_Run", bound=Callable[..., ToolResult])


def reports_file_problems(run: _Run) -> _Run:
    """A tool method whose FileProblem is its failed result (called outside a registry too)."""

    @functools.wraps(run)
    def reporting(*args: Any, **kwargs: Any) -> ToolResult:
        try:
            return run(*args, **kwargs)
        except FileProblem as problem:
            return ToolResult(ok=False, output=str(problem))

    return reporting  # type: ignore[return-value]  # run's own signature, by functools.wraps


@lazy_dataclass(frozen=True)
class Current:
    """What a checked path holds now: its bytes (None: no file there) and their stat."""

    checked: CheckedPath
    shown: str
    data: bytes | None
    stat: os.stat_result | None


def resolve_path(ctx: ToolContext, raw: str) -> Path:
    """A path argument made absolute: relative paths start at the workspace."""
    _refuse_bad_text(raw)
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = Path(ctx.workspace) / path
    # normpath folds "a/../b" without resolving symlinks, so shown paths stay the ones asked for.
    return Path(os.path.normpath(path))


def checked_path(ctx: ToolContext, raw: str, *, write: bool = False) -> CheckedPath:
    """A path argument, checked for reading (or writing) against the sandbox's roots.

    Raises PathRefused (a failed result for the model) when the sandbox does not allow
    it. Open `.real`, the path with every symlink resolved; show `.path`, as asked.
    Without a sandbox in the context the path is only resolved.
    """
    _refuse_bad_text(raw)
    if ctx.sandbox is None:
        path = resolve_path(ctx, raw)
        try:
            return CheckedPath(raw, path, resolve_links(path))
        except PathRefused as reason:
            verb = "write" if write else "read"
            raise FileProblem(f"Cannot {verb} {display_path(ctx, path)}: {reason}") from None
    guard = ctx.sandbox.paths
    return guard.for_write(raw) if write else guard.for_read(raw)


def _refuse_bad_text(raw: str) -> None:
    if not raw.strip():
        raise ToolArgumentError("path is empty; give a file path relative to the workspace")
    if "\0" in raw:
        raise ToolArgumentError(
            f"path {raw!r} contains a NUL byte, which no file name can hold; "
            "give the path without it"
        )


def display_path(ctx: ToolContext, path: Path) -> str:
    """Workspace-relative (POSIX) when inside the workspace, else absolute."""
    workspace = Path(os.path.normpath(os.path.abspath(ctx.workspace)))
    for base in dict.fromkeys([workspace, Path(os.path.realpath(workspace))]):
        try:
            relative = path.relative_to(base)
        except ValueError:
            continue
        return relative.as_posix() or "."
    return str(path)


def anchors(ctx: ToolContext) -> tuple[Path, ...]:
    """The directories opens start beneath: the sandbox's roots."""
    return ctx.sandbox.paths.policy.roots if ctx.sandbox is not None else ()


def open_file(
    ctx: ToolContext, raw: str, *, write: bool = False
) -> tuple[CheckedPath, int | None, os.stat_result | None]:
    """The checked path and a read-only fd for the regular file there (None, None: no
    file there yet). The caller closes the fd."""
    verb = "write" if write else "read"
    for _ in range(OPEN_ATTEMPTS):
        checked = checked_path(ctx, raw, write=write)
        shown = display_path(ctx, checked.path)
        try:
            fd, stat = safe_open.open_regular(checked.real, anchors(ctx))
        except safe_open.PathMoved:
            continue
        except FileNotFoundError:
            return checked, None, None
        except safe_open.NotRegular as kind:
            raise FileProblem(_not_regular(shown, kind.kind, write)) from None
        except OSError as error:
            raise FileProblem(f"Cannot {verb} {shown}: {error.strerror or error}") from None
        return checked, fd, stat
    raise PathRefused(
        f"refused: cannot {verb} {raw} safely: its path kept changing while it was opened "
        f"(a symlink appeared along it {OPEN_ATTEMPTS} times)"
    )


def _not_regular(shown: str, kind: str, write: bool) -> str:
    if kind == "a directory":
        if write:
            return f"{shown} is a directory; give a file path"
        return f"{shown} is a directory, not a file; use glob to list its files"
    return (
        f"{shown} is {kind}, not a regular file; the file tools read and write only regular files"
    )


def load(ctx: ToolContext, raw: str, *, write: bool = False, max_bytes: int) -> Current:
    """The file's bytes (None when there is none), up to `max_bytes` or a FileProblem."""
    checked, fd, stat = open_file(ctx, raw, write=write)
    shown = display_path(ctx, checked.path)
    if fd is None or stat is None:
        return Current(checked, shown, None, None)
    try:
        if stat.st_size > max_bytes:
            raise FileProblem(
                f"{shown} is too large for this tool ({stat.st_size:,} bytes; the limit is "
                f"{max_bytes:,}); use bash (sed, a script) for it"
            )
        data = safe_open.read_all(fd, max_bytes + 1)
    except OSError as error:
        raise FileProblem(f"Cannot read {shown}: {error.strerror or error}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise FileProblem(f"{shown} grew past {max_bytes:,} bytes while it was read")
    return Current(checked, shown, data, stat)


def store(ctx: ToolContext, current: Current, data: bytes) -> None:
    """Write `data` as the file `current` names, race-free (safe_open.replace_file); the
    directories it needs are made. An existing file keeps its permission bits."""
    real = current.checked.real
    mode = current.stat.st_mode if current.stat is not None else None
    try:
        safe_open.make_dirs(real.parent, anchors(ctx))
        safe_open.replace_file(real, data, anchors(ctx), mode)
    except safe_open.PathMoved:
        raise PathRefused(
            f"refused: cannot write {current.checked.asked} safely: its path changed while "
            "it was written (a symlink appeared along it); nothing was written"
        ) from None
    except OSError as error:
        raise FileProblem(f"Cannot write {current.shown}: {error.strerror or error}") from None
