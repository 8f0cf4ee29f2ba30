"""Path roots for the in-process file tools (read, write, edit, glob, grep).

The shell sandbox does not cover code that runs inside caretz, so the file tools ask
a PathGuard before they touch a path. It resolves the path the way the kernel will
(`~`, relative to the working directory, every symlink and `..` in order) and then:

- reads: refused under a hidden path, and anywhere in /proc (caretz's own
  /proc/self/environ holds the API keys);
- writes: refused in read-only mode, outside the writable roots, on a hidden path, and
  on a protected one (`.git` and everything in it, `.caretz`, the user's read-only
  list). A write through a symlink is judged by where it lands: `link.txt -> .env`
  is refused when `.env` is read-only, and a link that leaves the roots is refused.

With the sandbox off nothing is checked but this: caretz's own config and data dirs
and the working directory's `.caretz` (the project's rules) are never written by the
file tools, in any mode.

What cannot be decided (a symlink loop, a directory that cannot be searched, `~user`)
is refused. Each refusal is a PathRefused whose message is one line saying what was
refused and why. Tools open `checked.real`, the resolved path, with
caretz.sandbox.safe_open, which follows no symlink: a symlink swapped in after the check
makes the open fail instead of leading elsewhere.
"""

from __future__ import annotations

import os
import stat
from fnmatch import fnmatchcase
from pathlib import Path

from caretz.lazy_dataclass import lazy_dataclass
from caretz.sandbox.policy import (
    CARETZ_PROJECT_DIR,
    SandboxMode,
    SandboxPolicy,
    depth,
    existing_paths,
    is_within,
    protected_names,
)

MAX_SYMLINKS = 40  # the kernel's limit
PROC = Path("/proc")


class PathRefused(PermissionError):
    """A file-tool path the sandbox does not allow; str() is one line for the model."""


@lazy_dataclass(frozen=True)
class CheckedPath:
    asked: str  # as the tool call gave it
    path: Path  # absolute, `~` expanded, `..` folded, symlinks kept (for showing)
    real: Path  # every symlink resolved: the file that will be read or written


class PathGuard:
    def __init__(self, policy: SandboxPolicy):
        self.policy = policy
        self._hidden = _with_real(policy.hidden)
        self._protected = _with_real(
            [root / name for root in policy.writable_roots for name in protected_names()]
            + list(policy.read_only)
        )
        self._always_protected = _with_real([*policy.caretz_dirs, policy.cwd / CARETZ_PROJECT_DIR])

    def for_read(self, raw: str) -> CheckedPath:
        checked = self.resolve(raw)
        if not self.policy.enforced:
            return checked
        if is_within(checked.real, PROC) or is_within(checked.path, PROC):
            raise PathRefused(
                f"refused: cannot read {raw}: /proc is closed to the file tools "
                "(it shows caretz's own environment); use bash"
            )
        reason = self.hidden_reason(checked.path) or self.hidden_reason(checked.real)
        if reason:
            raise PathRefused(f"refused: cannot read {raw}: {reason}")
        return checked

    def for_write(self, raw: str) -> CheckedPath:
        checked = self.resolve(raw)
        via = _via_symlink(checked)
        mode = self.policy.mode
        if mode is SandboxMode.OFF:
            self._refuse_caretz_own(checked, raw, via)
            return checked
        if mode is SandboxMode.READ_ONLY:
            raise PathRefused(f"refused: cannot write {raw}: the sandbox is read-only")
        reason = self.hidden_reason(checked.path) or self.hidden_reason(checked.real)
        if reason:
            raise PathRefused(f"refused: cannot write {raw}{via}: {reason}")
        entry = self._protected_entry(checked.path) or self._protected_entry(checked.real)
        if entry is not None:
            raise PathRefused(
                f"refused: cannot write {raw}{via}: {entry} is read-only in the sandbox"
            )
        self._refuse_caretz_own(checked, raw, via)
        if not any(is_within(checked.real, root) for root in self.policy.writable_roots):
            roots = ", ".join(str(root) for root in self.policy.writable_roots)
            raise PathRefused(
                f"refused: cannot write {raw}{via}: outside the writable roots ({roots})"
            )
        return checked

    def _refuse_caretz_own(self, checked: CheckedPath, raw: str, via: str) -> None:
        """caretz's config, data and project rules: never written, whatever the roots."""
        own = _matching(checked.path, self._always_protected) or _matching(
            checked.real, self._always_protected
        )
        if own is not None:
            raise PathRefused(
                f"refused: cannot write {raw}{via}: {own} is caretz's own "
                "(settings, sessions or project rules); the file tools never write it"
            )

    def hidden_reason(self, path: Path) -> str | None:
        """Why `path` (absolute) is hidden, or None; glob and grep use it to skip entries."""
        entry = _matching(path, self._hidden)
        if entry is None or self._root_below(path, entry):
            return None
        return f"{entry} is hidden by the sandbox"

    def readable(self, path: Path, *, resolved: bool = False) -> bool:
        """Whether the file tools may read `path` (absolute): glob and grep skip the rest.

        `resolved`: the caller knows no component of `path` is a symlink (a directory
        walk that does not follow links), which spares resolving it again.
        """
        if not self.policy.enforced:
            return True
        try:
            real = path if resolved else resolve_path(path)
        except PathRefused:
            return False
        if is_within(path, PROC) or is_within(real, PROC):
            return False
        return not (self.hidden_reason(path) or self.hidden_reason(real))

    def is_hidden(self, path: Path) -> bool:
        if not self.policy.enforced:
            return False
        try:
            real = resolve_path(path)
        except PathRefused:
            return True
        return bool(self.hidden_reason(path) or self.hidden_reason(real))

    def resolve(self, raw: str) -> CheckedPath:
        path = self._absolute(raw)
        try:
            real = resolve_path(path)
        except PathRefused as refused:
            raise PathRefused(f"refused: cannot resolve {raw}: {refused}") from None
        return CheckedPath(raw, Path(os.path.normpath(path)), real)

    def _absolute(self, raw: str) -> Path:
        if not raw.strip():
            raise PathRefused("refused: the path is empty")
        if "\0" in raw:
            raise PathRefused(f"refused: the path {raw!r} holds a NUL byte, which no file name can")
        if raw == "~" or raw.startswith("~/"):
            raw = str(self.policy.home) + raw[1:]
        elif raw.startswith("~"):
            raise PathRefused(f"refused: cannot resolve {raw}: only ~ (your home) is understood")
        path = Path(raw)
        return path if path.is_absolute() else self.policy.cwd / path

    def _protected_entry(self, path: Path) -> Path | None:
        entry = _matching(path, self._protected)
        if entry is None or self._root_below(path, entry):
            return None
        return entry

    def _root_below(self, path: Path, entry: Path) -> bool:
        """Whether a root at or below `entry` holds `path`: the root the user named wins."""
        return any(
            is_within(path, root) and depth(root) >= depth(entry) for root in self.policy.roots
        )


def resolve_path(path: Path) -> Path:
    """`path` (absolute) with every symlink and `..` resolved in order, as open(2) would.

    Components that do not exist yet are kept as they are (a write may create them).
    Raises PathRefused (message without the path) when it cannot be decided.
    """
    pending = list(reversed(path.parts[1:]))
    resolved = Path("/")
    links = 0
    while pending:
        part = pending.pop()
        if part in ("", "."):
            continue
        if part == "..":
            resolved = resolved.parent
            continue
        candidate = resolved / part
        try:
            mode = os.lstat(candidate).st_mode
        except FileNotFoundError:
            resolved = candidate
            continue
        except OSError as error:
            raise PathRefused(error.strerror or str(error)) from None
        if not stat.S_ISLNK(mode):
            resolved = candidate
            continue
        links += 1
        if links > MAX_SYMLINKS:
            raise PathRefused("too many levels of symbolic links")
        try:
            target = Path(os.readlink(candidate))
        except OSError:
            # Not a symlink any more (EINVAL) or gone: it changed since the lstat; look again.
            pending.append(part)
            continue
        if target.is_absolute():
            resolved = Path("/")
        pending.extend(reversed([p for p in target.parts if p != "/"]))
    return resolved


def _with_real(entries: list[Path] | tuple[Path, ...]) -> tuple[Path, ...]:
    """The entries as given plus, for those that exist, their resolved paths."""
    return tuple(dict.fromkeys([*entries, *existing_paths(entries)]))


def _matching(path: Path, entries: tuple[Path, ...]) -> Path | None:
    """The deepest entry that is `path` or one of its parents (entries may be globs)."""
    best: Path | None = None
    for entry in entries:
        text = str(entry)
        if any(ch in text for ch in "*?["):
            hit = next((p for p in (path, *path.parents) if fnmatchcase(str(p), text)), None)
        else:
            hit = entry if is_within(path, entry) else None
        if hit is not None and (best is None or depth(hit) > depth(best)):
            best = hit
    return best


def _via_symlink(checked: CheckedPath) -> str:
    if checked.real == checked.path:
        return ""
    return f" (through a symlink to {checked.real})"
