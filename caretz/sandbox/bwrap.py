"""The sandbox policy as a bubblewrap (`bwrap`) command line.

The view a command gets:
  /                 read-only (every mount below it too)
  /dev, /proc       a minimal /dev; a /proc of the command's own PID namespace, with
                    /proc/sys read-only (a root-owned sysctl is otherwise writable by uid 0)
  /tmp              the session's own directory (sandbox/runtime.py), shared by its
                    commands and removed when the session ends; a private tmpfs where
                    the caller gives none
  writable roots    bound read-write (read-only in read-only mode, and where the root
                    lies on a read-only mount: a read-only project needs no covers)
  .git/hooks, .git/config, .caretz in each root   read-only; `.git` pinned as a mount
                    point so it cannot be renamed and replaced
  hidden paths      an empty read-only tmpfs over a directory, /dev/null over a file
                    (reads are empty, writes vanish, so tools that read it still work)

Processes: `--unshare-pid` gives the command its own PID namespace whose init is
bwrap; when the command exits, init exits and the kernel kills everything left in the
namespace (`cmd &`, `nohup`, `setsid`, double forks). `--die-with-parent` kills the
sandbox when caretz dies, even by kill -9. `--new-session` detaches the command from any
terminal (no TIOCSTI keystroke injection); the bash tool already runs it in its own
session and signals bwrap's process group, and bwrap's death takes the namespace down,
so timeouts and Ctrl-C work unchanged.

Privileges: `--cap-drop ALL` matters when caretz runs as root, where bwrap would
otherwise keep every capability and a command could remount / read-write. bwrap sets
no_new_privs, so setuid programs gain nothing.

Network: `--unshare-net` gives a namespace with only its own loopback, so a server on
the host's 127.0.0.1 is unreachable (connection refused) and so are abstract Unix
sockets. A session's commands share one such namespace: the caller starts bwrap inside
it (`SessionView.shared_net`) and no `--unshare-net` is given. With network allowed the
command shares the host's network namespace. `--seccomp FD` loads the filter that
refuses new Unix sockets (sandbox/seccomp.py).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from caretz.lazy_dataclass import lazy_dataclass
from caretz.sandbox.policy import (
    SandboxMode,
    SandboxPolicy,
    depth,
    guarded_roots,
    is_within,
    root_protection,
    sealed_roots,
)

BASE_MOUNTS: tuple[str, ...] = (
    "--ro-bind", "/", "/",
    "--dev", "/dev",
    "--proc", "/proc",
    "--ro-bind-try", "/proc/sys", "/proc/sys",
    "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
    "--tmpfs", "/tmp",
)  # fmt: skip

ISOLATION: tuple[str, ...] = (
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
)


@lazy_dataclass(frozen=True)
class SessionView:
    """What the session adds to a command's sandbox (sandbox/runtime.py)."""

    tmp: Path | None = None  # the host directory bound as /tmp; None: a private tmpfs
    shared_net: bool = False  # started inside the session's network namespace
    seccomp_fd: int | None = None  # an fd holding the seccomp program
    sockets: tuple[Path, ...] = ()  # named Unix sockets bound in, hidden parents or not


# At one path, the later kind wins; across paths, the deeper path is mounted last.
_ORDER = {"root": 0, "pin": 1, "read-only": 2, "cover": 3, "hide": 4}


def bwrap_argv(
    policy: SandboxPolicy,
    argv: Sequence[str],
    bwrap: str = "bwrap",
    view: SessionView | None = None,
    cwd: Path | None = None,
) -> tuple[list[str], tuple[Path, ...]]:
    """The command line that runs `argv` inside the policy's sandbox, in `cwd` (a root
    or a directory below one; the working directory by default), and the mount points it
    creates on the host: each mount's target missing now inside a root bound read-write
    (sandbox/covers.py removes them once the sandbox is gone)."""
    if policy.mode is SandboxMode.OFF:
        raise ValueError("the sandbox is off; run the command directly")
    if not argv:
        raise ValueError("no command to run")
    view = view or SessionView()
    args = [bwrap, *BASE_MOUNTS]
    if view.tmp is not None:
        args[-2:] = ["--bind", str(view.tmp), "/tmp"]  # in place of BASE_MOUNTS' tmpfs
    remount: list[Path] = []
    mounts = _mounts(policy)
    for kind, path in mounts:
        args += _mount_args(kind, path, policy)
        if kind == "cover" or (kind == "hide" and path.is_dir()):
            remount.append(path)
    for socket in view.sockets:
        args += ["--bind-try", str(socket), str(socket)]
    program = Path(argv[0])
    if program.is_absolute() and _under_tmp(program) and program.is_file():
        # caretz's own program (the packaged rg) installed under the host's /tmp, which the
        # command's /tmp hides: that one file, read-only, where caretz runs it from.
        args += ["--ro-bind", str(program), str(program)]
    for path in policy.shown:  # caretz's installed plugins, inside its hidden data dir
        args += ["--ro-bind-try", str(path), str(path)]
    # Remounting hidden dirs read-only last lets a writable root inside one be bound first.
    for path in remount:
        args += ["--remount-ro", str(path)]
    args += ISOLATION
    if not policy.network and not view.shared_net:
        args.append("--unshare-net")
    if view.seccomp_fd is not None:
        args += ["--seccomp", str(view.seccomp_fd)]
    args += ["--chdir", str(cwd or policy.cwd), "--", *argv]
    return args, _created_on_host(policy, mounts)


def _created_on_host(policy: SandboxPolicy, mounts: list[tuple[str, Path]]) -> tuple[Path, ...]:
    """The targets bubblewrap makes through a read-write bind of the host's folders."""
    if policy.mode is not SandboxMode.WORKSPACE_WRITE:
        return ()
    writable = guarded_roots(policy)
    return tuple(
        path
        for kind, path in mounts
        if kind != "root"
        and not os.path.lexists(path)
        and any(is_within(path, root) for root in writable)
    )


def _mounts(policy: SandboxPolicy) -> list[tuple[str, Path]]:
    guarded, sealed = guarded_roots(policy), sealed_roots(policy)
    # A writable root on a read-only mount is bound read-only: bwrap's own bind keeps it
    # so even if the host remounts it read-write while the command runs.
    mounts = [("read-only" if root in sealed else "root", root) for root in policy.roots]
    for root in guarded:
        protection = root_protection(root)
        mounts += [("pin", path) for path in protection.pinned]
        mounts += [("read-only", path) for path in protection.read_only]
        mounts += [("cover", path) for path in protection.missing_dirs]
    roots = set(policy.roots)
    if guarded or sealed:  # writable roots: the user's read-only paths inside them
        mounts += [("read-only", p) for p in policy.existing_read_only() if p not in roots]
    # A hidden path the user also named as a root stays visible: the root wins.
    mounts += [("hide", path) for path in policy.existing_hidden() if path not in roots]
    # The host's /tmp is out of sight (the command's /tmp is the session's or a tmpfs):
    # a mount there would only add a mount point to it, except inside a root.
    mounts = [
        (kind, path)
        for kind, path in mounts
        if kind == "root" or not _under_tmp(path) or any(is_within(path, r) for r in roots)
    ]
    unique = list(dict.fromkeys(mounts))
    return sorted(unique, key=lambda item: (depth(item[1]), _ORDER[item[0]]))


def _under_tmp(path: Path) -> bool:
    text = str(path)
    return text == "/tmp" or text.startswith("/tmp/")


def _mount_args(kind: str, path: Path, policy: SandboxPolicy) -> list[str]:
    target = str(path)
    if kind == "root":
        writable = policy.mode is SandboxMode.WORKSPACE_WRITE
        return ["--bind" if writable else "--ro-bind", target, target]
    if kind == "pin":
        return ["--bind", target, target]
    if kind == "read-only":
        return ["--ro-bind", target, target]
    if kind == "cover":
        return ["--tmpfs", target]
    if path.is_dir():
        return ["--tmpfs", target]
    # --dev-bind: on a nodev mount /dev/null could not even be opened; reads give nothing.
    # -try: a hidden file deleted since the policy looked needs no hiding.
    return ["--dev-bind-try", "/dev/null", target]
