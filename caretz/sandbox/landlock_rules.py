"""The sandbox policy as Landlock rules, and the launcher command line that applies them.

Landlock grants rights on a directory for everything below it and has no way to take
a right back lower down, so "read everything except ~/.ssh" cannot be said directly.
What can: read-only rules on every entry of `/` except the hidden paths, descending
into each directory that holds a hidden path and granting its other entries one by
one. The directories on the way down (`/`, HOME, `~/.config`...) get no rule of their
own: their entries are readable but they cannot be listed, and a file created in them
after the rules were made is unreadable for that command. The rules are computed for
every command, so that moment is the command's start.

Writes: the writable roots, the session's TMPDIR (sandbox/runtime.py), and the usual
devices (/dev/null, /dev/tty, /dev/shm...). Not expressible: read-only paths inside a
writable root (`.git/hooks`, `.git/config`, `.caretz`) and hidden paths inside one;
`uncovered` names them so `caretz sandbox check` can say so.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from caretz.lazy_dataclass import lazy_dataclass
from caretz.sandbox.policy import (
    SandboxMode,
    SandboxPolicy,
    guarded_roots,
    is_within,
    root_protection,
)

LAUNCHER = Path(__file__).with_name("landlock.py")

WRITABLE_DEVICES: tuple[str, ...] = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
)


@lazy_dataclass(frozen=True)
class LandlockRules:
    read: tuple[str, ...]
    write: tuple[str, ...]
    network: bool
    uncovered: tuple[Path, ...]  # hidden or read-only paths these rules leave writable/readable


def landlock_rules(policy: SandboxPolicy) -> LandlockRules:
    writable = list(guarded_roots(policy))  # a root on a read-only mount gets no write rule
    hidden = [p for p in policy.existing_hidden() if p not in policy.roots]
    inside_roots = [p for p in hidden if any(is_within(p, root) for root in writable)]
    hideable = [p for p in hidden if p not in inside_roots]
    uncovered = [*inside_roots, *_read_only_inside(policy)]
    devices = [d for d in WRITABLE_DEVICES if os.path.exists(d)]
    return LandlockRules(
        read=tuple(str(p) for p in [*readable_entries(hideable), *_existing(policy.shown)]),
        write=tuple([*(str(root) for root in writable), *devices]),
        network=policy.network,
        uncovered=tuple(uncovered),
    )


def _existing(paths: Sequence[Path]) -> list[Path]:
    return [path for path in paths if os.path.isdir(path)]


def readable_entries(hidden: Sequence[Path], top: Path = Path("/")) -> list[Path]:
    """Paths whose read-only rules cover everything under `top` except `hidden`."""
    if not hidden:
        return [top]
    hidden_set = set(hidden)
    ancestors = {parent for path in hidden for parent in path.parents}
    if top in hidden_set or top not in ancestors:
        return [] if top in hidden_set else [top]
    granted: list[Path] = []
    pending = [top]
    while pending:
        directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue  # unreadable: nothing below it is granted
        for entry in entries:
            path = Path(entry.path)
            if path in hidden_set:
                continue
            if path in ancestors:
                pending.append(path)
            elif not entry.is_symlink():
                granted.append(path)  # a symlink's target is granted, or not, by its own path
    return sorted(granted)


def launcher_argv(
    policy: SandboxPolicy,
    argv: Sequence[str],
    python: str | None = None,
    abi: int | None = None,
    tmp: Path | None = None,
    seccomp: Path | None = None,
    connect_port: int | None = None,
) -> list[str]:
    """`python -I -S landlock.py FLAGS -- argv`: applies the rules in a child, then execs.
    `tmp` is the session's TMPDIR (writable), `seccomp` a file with the filter to load,
    `connect_port` the one TCP port a command may connect to with the network off (the
    allowlist's proxy)."""
    if policy.mode is SandboxMode.OFF:
        raise ValueError("the sandbox is off; run the command directly")
    if not argv:
        raise ValueError("no command to run")
    rules = landlock_rules(policy)
    flags = ["--parent", str(os.getpid())]
    if abi is not None:
        flags += ["--abi", str(abi)]
    if tmp is not None:
        flags += ["--tmp", str(tmp)]
    if seccomp is not None:
        flags += ["--seccomp", str(seccomp)]
    if rules.network:
        flags.append("--network")
    elif connect_port is not None:
        flags += ["--connect-port", str(connect_port)]
    for path in rules.read:
        flags += ["--read", path]
    for path in rules.write:
        flags += ["--write", path]
    return [python or sys.executable, "-I", "-S", str(LAUNCHER), *flags, "--", *argv]


def unconfined_argv(argv: Sequence[str], python: str | None = None) -> list[str]:
    """The launcher with no rules: `argv` runs as the user, but nothing it starts outlives
    it or caretz (the launcher is its subreaper and dies with caretz). The launcher needs
    Linux; elsewhere `argv` runs as it is, in the process group its caller gives it."""
    if not argv:
        raise ValueError("no command to run")
    if not sys.platform.startswith("linux"):
        return list(argv)
    flags = ["--parent", str(os.getpid()), "--unconfined"]
    return [python or sys.executable, "-I", "-S", str(LAUNCHER), *flags, "--", *argv]


def _read_only_inside(policy: SandboxPolicy) -> list[Path]:
    found: list[Path] = []
    guarded = guarded_roots(policy)
    for root in guarded:
        protection = root_protection(root)
        found += [*protection.pinned, *protection.read_only, *protection.missing_dirs]
    found += [p for p in policy.existing_read_only() if any(is_within(p, r) for r in guarded)]
    return found
