"""The sandbox policy: what a command may write, what it may not see, whether it may connect.

Plain data, built once per session from the mode, the working directory, `--add-dir`
roots and the user's extra lists. Every backend (bubblewrap, Landlock) and the path
checks of the file tools read the same policy, so the shell and the in-process tools
obey the same roots.

Where two entries overlap, the deeper one wins: `~/.ssh` stays hidden when HOME is a
writable root, and a writable root inside a hidden directory (`--add-dir
~/.config/gcloud`) is writable, because the user named it.
"""

from __future__ import annotations

import glob
import os
import pwd
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from caretz.sandbox.allowlist import NetworkAllowlist

from caretz.lazy_dataclass import lazy_dataclass

# `sandbox.mode` as profiles.json and --sandbox write it.
ModeName = Literal["workspace-write", "read-only", "off"]


class SandboxMode(StrEnum):
    WORKSPACE_WRITE = "workspace-write"
    READ_ONLY = "read-only"
    OFF = "off"


DEFAULT_MODE = SandboxMode.WORKSPACE_WRITE


class PolicyError(ValueError):
    """A sandbox setting that cannot be used; the message is one line for the user."""


# Files and directories that hold credentials. Hidden from commands (an empty read-only
# directory or /dev/null in their place) and unreadable by the file tools. Users add
# more through the `sandbox.hidden` list.
CREDENTIAL_STORES: tuple[str, ...] = (
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.oci",
    "~/.kube",
    "~/.docker/config.json",
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/git/credentials",
    "~/.config/gh",
    "~/.config/hub",
    "~/.config/glab-cli",
    "~/.npmrc",
    "~/.yarnrc.yml",
    "~/.pypirc",
    "~/.config/pip/pip.conf",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.gem/credentials",
    "~/.m2/settings.xml",
    "~/.gradle/gradle.properties",
    "~/.terraform.d/credentials.tfrc.json",
    "~/.vault-token",
    "~/.pgpass",
    "~/.my.cnf",
    "~/.boto",
    "~/.s3cfg",
    "~/.config/rclone",
    "~/.config/doctl",
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.cache/huggingface/token",
    "~/.config/anthropic",
    "~/.config/openai",
    "~/.codex/auth.json",
    "~/.claude/.credentials.json",
)

# Sockets of services that run commands outside the sandbox on request (a container
# engine, the system and user service managers, D-Bus). Reaching one would undo the
# sandbox, so they are hidden like credentials. `{uid}` is the user's id.
SERVICE_SOCKETS: tuple[str, ...] = (
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/containerd",
    "/run/podman",
    "/run/dbus",
    "/run/systemd",
    "/run/user/{uid}",
)

# Inside every writable root: written by a command, these would run code on the host the
# next time the user runs git or caretz, or change what git reads (`commondir` points git
# at another config and hooks; `modules/` holds the submodules' own; `info/` the exclude
# and attributes files). `.git` itself stays writable (commits work) but is pinned so
# that it cannot be renamed and replaced. A missing directory of these (and a missing
# `.caretz` or `.claude/commands`) is covered with an empty read-only directory, so a
# command cannot create it; a missing file cannot be covered, and sandbox/gitwatch.py
# moves one a command created aside after the command.
GIT_READ_ONLY: tuple[str, ...] = (
    ".git/hooks",
    ".git/config",
    ".git/info",
    ".git/modules",
    ".git/worktrees",
    ".git/commondir",
    ".git/config.worktree",
)
GIT_COVERED: tuple[str, ...] = (".git/hooks", ".git/info", ".git/modules", ".git/worktrees")
CARETZ_PROJECT_DIR = ".caretz"
# Claude Code's command files, which caretz runs as slash commands (docs/commands.md).
CLAUDE_COMMANDS_DIR = ".claude/commands"


@lazy_dataclass(frozen=True, kw_only=True)
class SandboxPolicy:
    mode: SandboxMode
    cwd: Path  # resolved; always the first of `roots`
    roots: tuple[Path, ...]  # the working directory and --add-dir dirs, resolved
    network: bool  # the host's network; False: the session's own loopback (and the proxy)
    hidden: tuple[Path, ...]  # absolute; an entry may be a glob pattern
    read_only: tuple[Path, ...]  # the user's extra read-only paths; may be globs
    home: Path
    # caretz's own config file or dir and data dir: hidden when sandboxed, and never
    # written by the file tools in any mode, `off` included.
    caretz_dirs: tuple[Path, ...] = ()
    # With the network off: the hosts caretz's proxy lets commands reach (sandbox/allowlist.py);
    # None: no proxy, nothing gets out.
    allowlist: NetworkAllowlist | None = None
    # caretz's installed plugins (in its hidden data dir): read-only to commands, so a
    # plugin's hook runs the scripts it brings; never writable, in any mode but `off`.
    shown: tuple[Path, ...] = ()

    @property
    def enforced(self) -> bool:
        return self.mode is not SandboxMode.OFF

    @property
    def writable_roots(self) -> tuple[Path, ...]:
        return self.roots if self.mode is SandboxMode.WORKSPACE_WRITE else ()

    def existing_hidden(self) -> list[Path]:
        """Hidden paths that exist now, resolved (a symlinked ~/.ssh names its target)."""
        return existing_paths(self.hidden)

    def existing_read_only(self) -> list[Path]:
        return existing_paths(self.read_only)


@lazy_dataclass(frozen=True)
class RootProtection:
    """What a writable root needs so that a command cannot plant code the host runs."""

    pinned: tuple[Path, ...]  # writable, but mount points so they cannot be renamed
    read_only: tuple[Path, ...]  # existing paths made read-only
    missing_dirs: tuple[Path, ...]  # absent dirs to cover with an empty read-only dir


def parse_mode(text: str) -> SandboxMode:
    try:
        return SandboxMode(text.strip().lower())
    except ValueError:
        choices = ", ".join(mode.value for mode in SandboxMode)
        raise PolicyError(f"unknown sandbox mode {text!r}: use one of {choices}") from None


def home_from_env(env: Mapping[str, str], uid: int | None = None) -> Path:
    """HOME from the environment passed in, else the account's home directory."""
    if env.get("HOME"):
        return Path(env["HOME"])
    return Path(pwd.getpwuid(os.getuid() if uid is None else uid).pw_dir)


def build_policy(
    *,
    cwd: Path,
    home: Path,
    mode: SandboxMode = DEFAULT_MODE,
    add_dirs: Sequence[Path | str] = (),
    network: bool = False,
    caretz_dirs: Sequence[Path] = (),
    extra_hidden: Sequence[str] = (),
    extra_read_only: Sequence[str] = (),
    uid: int | None = None,
    allowlist: NetworkAllowlist | None = None,
) -> SandboxPolicy:
    """The session's policy. Raises PolicyError for a root that is not a directory."""
    root_cwd = _directory(Path(cwd), "the working directory")
    roots = _unique([root_cwd, *(_directory(_absolute(d, home, root_cwd), d) for d in add_dirs)])
    hidden = [
        *(_absolute(entry, home, root_cwd) for entry in CREDENTIAL_STORES),
        *(Path(entry.format(uid=os.getuid() if uid is None else uid)) for entry in SERVICE_SOCKETS),
        *(Path(os.path.abspath(d)) for d in caretz_dirs),
        *(_absolute(entry, home, root_cwd) for entry in extra_hidden),
    ]
    read_only = [_absolute(entry, home, root_cwd) for entry in extra_read_only]
    return SandboxPolicy(
        mode=mode,
        cwd=root_cwd,
        roots=tuple(roots),
        network=network,
        hidden=tuple(_unique(hidden)),
        read_only=tuple(_unique(read_only)),
        home=Path(home),
        caretz_dirs=tuple(_unique(Path(os.path.abspath(d)) for d in caretz_dirs)),
        allowlist=None if network else allowlist,
    )


def mounted_read_only(path: Path) -> bool:
    """Whether `path` lies on a read-only mount (a read-only bind mount, a CD, a read-only
    NFS export): nothing below it can be created or changed, by a command or by bubblewrap
    making a mount point."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def guarded_roots(policy: SandboxPolicy) -> tuple[Path, ...]:
    """The writable roots a command can write, whose git and caretz paths are protected
    (`root_protection`). A writable root on a read-only mount is not among them: the
    sandbox binds it read-only, so nothing in it needs covering (and covering would
    mean creating mount points there, which its filesystem refuses)."""
    return tuple(root for root in policy.writable_roots if not mounted_read_only(root))


def sealed_roots(policy: SandboxPolicy) -> tuple[Path, ...]:
    """The writable roots on a read-only mount: bound read-only, nothing in them to cover."""
    guarded = guarded_roots(policy)
    return tuple(root for root in policy.writable_roots if root not in guarded)


def root_protection(root: Path) -> RootProtection:
    """The git and caretz paths of one writable root, as they are on disk now."""
    pinned: list[Path] = []
    read_only: list[Path] = []
    missing: list[Path] = []
    git = root / ".git"
    if git.is_dir() and not git.is_symlink():
        pinned.append(git)
        for name in GIT_READ_ONLY:
            path = root / name
            if path.exists() or path.is_symlink():
                read_only.append(path)
            elif name in GIT_COVERED:
                missing.append(path)
    elif git.exists() or git.is_symlink():
        # A worktree's `gitdir:` pointer file: rewritten, it could point git at planted hooks.
        read_only.append(git)
    for name in (CARETZ_PROJECT_DIR, CLAUDE_COMMANDS_DIR):
        project = root / name
        if project.exists() or project.is_symlink():
            read_only.append(project)
        else:
            # Created by a command, it could plant project rules, hooks or commands for
            # the next session; an empty directory covers it while the command runs.
            missing.append(project)
    return RootProtection(tuple(pinned), tuple(read_only), tuple(missing))


def protected_names() -> tuple[str, ...]:
    """Paths, relative to a writable root, that the file tools never write (nor below them)."""
    return (*GIT_READ_ONLY, ".git", CARETZ_PROJECT_DIR, CLAUDE_COMMANDS_DIR)


def existing_paths(entries: Iterable[Path]) -> list[Path]:
    """Each entry (globs expanded) that exists, resolved through symlinks, without repeats."""
    found: list[Path] = []
    for entry in entries:
        text = str(entry)
        matches = glob.glob(text, include_hidden=True) if glob.has_magic(text) else [text]
        for match in matches:
            if os.path.lexists(match):
                found.append(Path(os.path.realpath(match)))
    return _unique(found)


def is_within(path: Path, base: Path) -> bool:
    """Whether `path` is `base` or lies below it (both absolute and normalized)."""
    parts = base.parts  # a prefix of parts: `base in path.parents`, without making each parent
    return path.parts[: len(parts)] == parts


def depth(path: Path) -> int:
    return len(path.parts)


def _absolute(entry: Path | str, home: Path, cwd: Path) -> Path:
    text = str(entry)
    if text == "~" or text.startswith("~/"):
        text = str(home) + text[1:]
    elif text.startswith("~"):
        raise PolicyError(f"cannot use {text!r}: only ~ (your own home) is understood")
    path = Path(text)
    return Path(os.path.normpath(path if path.is_absolute() else cwd / path))


def _directory(path: Path, label: Path | str) -> Path:
    resolved = Path(os.path.realpath(path))
    if not resolved.is_dir():
        raise PolicyError(f"sandbox root {label}: not a directory")
    return resolved


def _unique(paths: Iterable[Path]) -> list[Path]:
    return list(dict.fromkeys(paths))
