"""The programs caretz runs itself, found where no sandboxed command can write.

bubblewrap, git and the interpreter of caretz's launcher run as the user, outside the
sandbox. Taken from PATH as it is, a project's activated `.venv/bin` would let a command
plant a `bwrap` or `git` there that the next session runs unconfined. So each is looked
up once, at session start, in PATH entries that a command cannot write: an absolute
directory outside every untrusted root (the workspace, `--add-dir` directories, places
the sandbox lets a command write), where the directory and the file (and the file's
real path, past symlinks) are owned by root or the user and are not group- or
world-writable. An entry that fails is skipped, and said in one line; when no entry
passes, the program is not run at all (`Program.path` is None) and the line says why.

A leaf: it imports nothing of caretz, so the sandbox, checkpoints and MCP launch share it.
"""

from __future__ import annotations

import os
import site  # loaded at every interpreter start (the .pth files are its)
import stat
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from caretz.lazy_dataclass import lazy_dataclass

# Writable from inside the sandbox under the Landlock fallback (the host's shared memory).
SANDBOX_WRITABLE: tuple[Path, ...] = (Path("/dev/shm"),)


@lazy_dataclass(frozen=True)
class Program:
    name: str
    path: str | None  # the trusted executable; None: none on PATH that caretz may run
    skipped: tuple[tuple[str, str], ...] = ()  # (a candidate passed over, why)

    def notice(self) -> str | None:
        """One line when an entry of PATH was passed over (None when none was)."""
        if not self.skipped:
            return None
        where, why = self.skipped[0]
        more = f" (and {len(self.skipped) - 1} more)" if len(self.skipped) > 1 else ""
        if self.path:
            return (
                f"{self.name} on PATH is {where}, {why}{more}; caretz skips it and runs {self.path}"
            )
        return (
            f"{self.name} on PATH is {where}, {why}{more}; caretz does not run it "
            f"(put a {self.name} outside the project earlier on PATH)"
        )


@lazy_dataclass(frozen=True, kw_only=True)
class Programs:
    """A session's programs, resolved once at its start."""

    bwrap: Program
    git: Program
    python: Program
    # joins the session's network namespace (util-linux); None: one namespace a command
    nsenter: Program = Program("nsenter", None)
    # the shell of every command and hook (outside the sandbox only this one runs)
    bash: Program = Program("bash", None)

    def notices(self) -> list[str]:
        found = (
            self.bwrap.notice(),
            self.git.notice(),
            self.python.notice(),
            self.nsenter.notice(),
            self.bash.notice(),
        )
        return [line for line in found if line]


def resolve_programs(path_env: str, roots: Iterable[Path]) -> Programs:
    """bubblewrap, git and the launcher's interpreter for a session whose commands can
    write in `roots` (the workspace first)."""
    untrusted = untrusted_roots(roots)
    return Programs(
        bwrap=find_program("bwrap", path_env, untrusted),
        git=find_program("git", path_env, untrusted),
        python=launcher_python(path_env, untrusted),
        nsenter=find_program("nsenter", path_env, untrusted),
        bash=find_program("bash", path_env, untrusted),
    )


def untrusted_roots(roots: Iterable[Path]) -> tuple[Path, ...]:
    """The roots (resolved), and the places the sandbox lets any command write."""
    found = [Path(os.path.realpath(root)) for root in roots]
    return tuple(dict.fromkeys([*found, *SANDBOX_WRITABLE]))


def find_program(
    name: str, path_env: str, untrusted: Sequence[Path], uid: int | None = None
) -> Program:
    """The first `name` on `path_env` that no sandboxed command could have written."""
    uid = os.getuid() if uid is None else uid
    skipped: list[tuple[str, str]] = []
    seen: set[str] = set()
    for entry in path_env.split(os.pathsep):
        candidate = os.path.join(entry, name)
        if not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
            continue
        real = os.path.realpath(candidate)
        if real in seen:
            continue
        seen.add(real)
        why = unsafe_reason(entry, candidate, untrusted, uid)
        if why is None:
            return Program(name, candidate, tuple(skipped))
        skipped.append((candidate, why))
    return Program(name, None, tuple(skipped))


def unsafe_reason(entry: str, candidate: str, untrusted: Sequence[Path], uid: int) -> str | None:
    """Why `candidate`, found in the PATH entry `entry`, may have been planted; else None."""
    if not os.path.isabs(entry):
        return "in a relative PATH entry (it names a folder of the working directory)"
    real = os.path.realpath(candidate)
    places = dict.fromkeys([os.path.realpath(entry), os.path.dirname(real), real])
    for place in places:
        root = _root_holding(Path(place), untrusted)
        if root is not None:
            label = "the writable project" if root == untrusted[0] else "the writable directory"
            return f"inside {label} {root}"
    for place in places:
        why = _unsafe_owner_or_mode(place, uid)
        if why is not None:
            return why
    return None


def trusted_path(path_env: str, untrusted: Sequence[Path], uid: int | None = None) -> str:
    """`path_env` without the entries a sandboxed command could have written (relative,
    inside an untrusted root, or a directory another user could write): the PATH of
    what runs outside the sandbox on the user's say (a hook with `"sandbox": "off"`)."""
    uid = os.getuid() if uid is None else uid
    kept: list[str] = []
    for entry in path_env.split(os.pathsep):
        if not os.path.isabs(entry) or not os.path.isdir(entry):
            continue
        real = os.path.realpath(entry)
        if _root_holding(Path(real), untrusted) is None and (
            _unsafe_owner_or_mode(real, uid) is None
        ):
            kept.append(entry)
    return os.pathsep.join(dict.fromkeys(kept))


def installation_paths() -> list[Path]:
    """caretz's own installation: its package, its interpreter's prefixes and real
    binary, and the site-packages directories whose `.pth` files run at every start."""
    paths = [Path(__file__).resolve().parent, Path(sys.prefix), Path(sys.base_prefix)]
    paths.append(Path(os.path.realpath(sys.executable)).parent)
    with_sites = [*getattr(site, "getsitepackages", list)(), site.getusersitepackages()]
    paths += [Path(p) for p in with_sites if p]
    resolved = [Path(os.path.realpath(p)) for p in paths if os.path.lexists(p)]
    return list(dict.fromkeys(resolved))


def installation_inside(roots: Sequence[Path]) -> list[Path]:
    """The parts of caretz's installation that lie inside one of `roots` (resolved)."""
    resolved = [Path(os.path.realpath(root)) for root in roots]
    return [p for p in installation_paths() if _root_holding(p, resolved) is not None]


def launcher_python(path_env: str, untrusted: Sequence[Path]) -> Program:
    """The interpreter to run the launcher with: the real binary behind caretz's own
    (a venv's `bin/python` is a symlink a command could replace), else `python3` on PATH."""
    own = os.path.realpath(sys.executable)
    why = unsafe_reason(os.path.dirname(own), own, untrusted, os.getuid())
    if why is None:
        return Program("python", own)
    found = find_program("python3", path_env, untrusted)
    return Program("python", found.path, ((own, why), *found.skipped))


def _root_holding(path: Path, roots: Sequence[Path]) -> Path | None:
    for root in roots:
        if path == root or root in path.parents:
            return root
    return None


def _unsafe_owner_or_mode(path: str, uid: int) -> str | None:
    try:
        info = os.stat(path)
    except OSError as error:
        return f"cannot be checked ({error.strerror})"
    if info.st_uid not in (0, uid):
        return f"{path} is owned by another user (uid {info.st_uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path} is writable by other users (mode {stat.S_IMODE(info.st_mode):o})"
    return None
