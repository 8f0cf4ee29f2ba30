"""The one object the bash tool asks how to start a command: argv, environment, directory.

    sandbox = open_sandbox(policy, check_sandbox(policy.mode, policy.network), env_filter)
    launch = sandbox.launch(["bash", "-c", command], os.environ)
    try:
        subprocess.Popen(launch.argv, cwd=launch.cwd, env=launch.env,
                         pass_fds=launch.pass_fds, start_new_session=True, ...)
    finally:
        launch.close()
    ...
    sandbox.close()  # the session's end: its /tmp and network namespace go

The caller keeps its own process-group handling: bwrap (and the Landlock launcher) is
the group leader, and signalling the group ends the whole sandbox.

A session's commands share its /tmp and, with the network off under bubblewrap, one
network namespace (sandbox/runtime.py); with the network off they run under the
seccomp filter that refuses new Unix sockets (sandbox/seccomp.py), unless the user
named sockets (`allowUnixSockets`, `allowSshAgent`) under bubblewrap, which binds them in.
With a network allowlist the network stays off and commands get HTTP_PROXY and
HTTPS_PROXY pointing at caretz's proxy (sandbox/netproxy.py), which listens inside the
session's namespace (under Landlock, on the host's loopback, the only port commands may
connect to); after each command the bash tool takes the proxy's refusals
(`network_lines`).

With the sandbox off, and for one command the user let out of it (`confined=False`),
the command still gets the filtered environment and starts under the launcher with no
rules, which kills whatever it leaves behind when it ends or caretz dies.

Start the process from a thread that outlives it (the thread that waits for it is
fine): the kernel's parent-death signal, which `--die-with-parent` and the Landlock
launcher rely on, fires when the thread that forked the child exits, not the process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.lazy_dataclass import lazy_dataclass
from caretz.sandbox import landlock as landlock_syscalls
from caretz.sandbox.bwrap import SessionView, bwrap_argv
from caretz.sandbox.covers import Covers
from caretz.sandbox.detect import SandboxBackend, SandboxCheck, SandboxUnavailable
from caretz.sandbox.envfilter import EnvFilter
from caretz.sandbox.landlock_rules import launcher_argv, unconfined_argv
from caretz.sandbox.netlisten import listener_inside, listener_on_host
from caretz.sandbox.paths import PathGuard
from caretz.sandbox.policy import SandboxPolicy, is_within
from caretz.sandbox.runtime import SessionRuntime
from caretz.sandbox.seccomp import SeccompUnsupported, command_filter

if TYPE_CHECKING:
    import socket


SANDBOX_TMPDIR = "/tmp"  # bwrap binds the session's directory there
SSH_AUTH_SOCK = "SSH_AUTH_SOCK"
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
NO_PROXY = "localhost,127.0.0.1,::1"  # the session's own servers are reached directly


@lazy_dataclass(frozen=True, kw_only=True)
class Launch:
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    pass_fds: tuple[int, ...] = ()  # fds the command line names (seccomp, namespaces)
    opened: tuple[int, ...] = ()  # those opened for this command alone: `close()` them
    # The directories it creates on the host as mount points (sandbox/covers.py).
    mount_points: tuple[Path, ...] = ()

    def close(self) -> None:
        """Close this command's own fds once it has started (or failed to)."""
        for fd in self.opened:
            with contextlib.suppress(OSError):
                os.close(fd)


@lazy_dataclass(frozen=True, kw_only=True)
class Sandbox:
    policy: SandboxPolicy
    backend: SandboxBackend
    env_filter: EnvFilter = field(default_factory=EnvFilter)
    bwrap_path: str = "bwrap"
    python: str | None = None  # the interpreter that runs the Landlock launcher
    # The session's shared /tmp, network namespace and bash cwd.
    runtime: SessionRuntime = field(default_factory=SessionRuntime, compare=False, repr=False)
    unix_sockets: tuple[Path, ...] = ()  # `allowUnixSockets`: reachable with the network off
    ssh_agent: bool = False  # `allowSshAgent`: SSH_AUTH_SOCK passed and its socket reachable
    nsenter_path: str | None = None  # joins the session's network namespace
    git_path: str | None = None  # the trusted git (caretz/trusted.py), for caretz's own reads
    # The trusted bash, every command's and hook's shell; None: not resolved (bash on PATH),
    # "": none caretz may run (inside the sandbox the sandbox's own, outside it refused).
    bash_path: str | None = None

    def __post_init__(self) -> None:
        if self.policy.enforced and self.backend is SandboxBackend.NONE:
            raise SandboxUnavailable("no sandbox backend for a sandboxed mode")

    @property
    def enforced(self) -> bool:
        """Whether commands run confined (a sandboxed mode, with a backend that works)."""
        return self.policy.enforced and self.backend is not SandboxBackend.NONE

    @property
    def covers(self) -> Covers:
        """The session's mount points (kept across a sandbox rebuilt mid-session)."""
        return self.runtime.covers

    @cached_property
    def paths(self) -> PathGuard:
        """The same roots, for the in-process file tools."""
        return PathGuard(self.policy)

    def command(self, argv: Sequence[str], confined: bool = True) -> list[str]:
        """`argv` wrapped so that it runs inside the sandbox, to look at: the fds it names
        are closed again (`launch` keeps them open for starting it)."""
        launch = self.launch(argv, os.environ, confined)
        launch.close()
        return launch.argv

    def environment(self, environ: Mapping[str, str], confined: bool = True) -> dict[str, str]:
        """The filtered environment; TMPDIR is the session's /tmp; SSH_AUTH_SOCK only
        when the user allows the agent."""
        env = self.env_filter.for_command(environ)
        if not self.ssh_agent:
            env.pop(SSH_AUTH_SOCK, None)
        if confined and self.enforced:
            tmp = self.runtime.tmp_dir()
            env["TMPDIR"] = SANDBOX_TMPDIR if self.backend is SandboxBackend.BWRAP else str(tmp)
        return env

    def launch(
        self,
        argv: Sequence[str],
        environ: Mapping[str, str],
        confined: bool = True,
        cwd: Path | None = None,
    ) -> Launch:
        """How to start `argv` in `cwd` (the working directory by default)."""
        cwd = cwd or self.policy.cwd
        env = self.environment(environ, confined)
        if not (confined and self.enforced):
            return Launch(argv=unconfined_argv(argv, self.python), env=env, cwd=cwd)
        if self.backend is SandboxBackend.LANDLOCK:
            # Always a filter (prlimit on other processes); Unix sockets with the network off.
            seccomp = self._filter_file(unix_sockets=self.policy.network)
            port = self._proxy_port(listener_on_host)
            command = launcher_argv(
                self.policy,
                argv,
                self.python,
                tmp=self.runtime.tmp_dir(),
                seccomp=seccomp,
                connect_port=port,
            )
            return Launch(argv=command, env=with_proxy(env, port), cwd=cwd)
        return self._bwrap_launch(argv, env, cwd, environ)

    def network_lines(self, ask: bool = True) -> list[str]:
        """After a command, with a network allowlist: the proxy's refusals as lines for the
        model (and events), and the user's answer on allowing them (`ask`); else none."""
        if self.policy.allowlist is None or not self.enforced:
            return []
        return self.runtime.network_gate().settle(ask)

    def cwd_report(self, confined: bool = True) -> tuple[str, Path]:
        """A fresh file for a command's final cwd: (its path inside, its path on the host)."""
        name = self.runtime.cwd_report()
        host = self.runtime.tmp_dir() / name
        if confined and self.enforced and self.backend is SandboxBackend.BWRAP:
            return f"{SANDBOX_TMPDIR}/{name}", host
        return str(host), host

    def allowed_sockets(self, environ: Mapping[str, str]) -> tuple[Path, ...]:
        """The named sockets commands may reach (bubblewrap only; Landlock cannot bind)."""
        sockets = list(self.unix_sockets)
        agent = environ.get(SSH_AUTH_SOCK, "")
        if self.ssh_agent and agent.startswith("/"):
            sockets.append(Path(os.path.realpath(agent)))
        return tuple(dict.fromkeys(sockets))

    def mounts_covers(self, confined: bool = True) -> bool:
        """Whether a command started this way creates cover mount points on the host."""
        return confined and self.enforced and self.backend is SandboxBackend.BWRAP

    def close(self) -> None:
        """The session has ended: its /tmp and network namespace go, and the mount points
        its commands' sandboxes left."""
        self.covers.close()  # first: a sandbox still running is ended before its /tmp goes
        self.runtime.close()

    def _bwrap_launch(
        self, argv: Sequence[str], env: dict[str, str], cwd: Path, environ: Mapping[str, str]
    ) -> Launch:
        prefix: list[str] = []
        held: tuple[int, ...] = ()
        opened: list[int] = []
        sockets = self.allowed_sockets(environ)
        if not self.policy.network:
            namespace = self.runtime.netns(self.bwrap_path) if self.nsenter_path else None
            if namespace is not None and self.nsenter_path:
                prefix, held = namespace.nsenter_argv(self.nsenter_path), namespace.fds
            env = with_proxy(env, self._bwrap_proxy_port(prefix, held))
            if not sockets:
                opened.append(os.open(self._filter_file(), os.O_RDONLY | os.O_CLOEXEC))
        else:
            self.runtime.stop_proxy()  # a sandbox rebuilt with the host's network closes it
        view = SessionView(
            tmp=self.runtime.tmp_dir(),
            shared_net=bool(prefix),
            seccomp_fd=opened[0] if opened else None,
            sockets=sockets if not self.policy.network else (),
        )
        command, mount_points = bwrap_argv(self.policy, argv, self.bwrap_path, view, cwd)
        return Launch(
            argv=[*prefix, *command],
            env=env,
            cwd=cwd,
            pass_fds=(*held, *opened),
            opened=tuple(opened),
            mount_points=mount_points,
        )

    def _bwrap_proxy_port(self, prefix: list[str], held: tuple[int, ...]) -> int | None:
        """The proxy's port inside the session's namespace; None without an allowlist, or
        without a shared namespace to put it in (each command then has its own, empty)."""
        if self.policy.allowlist is not None and not prefix:
            why = self.runtime.net_problem
            self.runtime.network_gate().problem = (
                f"the network allowlist is not in force ({why})"
                if why
                else "the network allowlist needs nsenter (util-linux)"
            )
            return None
        python = self.python or sys.executable
        return self._proxy_port(lambda: listener_inside(prefix, python, held))

    def _proxy_port(self, listener: Callable[[], socket.socket]) -> int | None:
        if self.policy.allowlist is None:
            self.runtime.stop_proxy()  # a sandbox rebuilt without the allowlist closes it
            return None
        port = self.runtime.proxy_port(self.policy.allowlist, listener)
        if port is None:
            self.runtime.network_gate().problem = self.runtime.proxy_problem
        return port

    def _filter_file(self, unix_sockets: bool = False) -> Path:
        return self.runtime.filter_file(command_filter(unix_sockets=unix_sockets))


def with_proxy(env: dict[str, str], port: int | None) -> dict[str, str]:
    """`env` with the proxy variables (both spellings: curl reads only the lower-case
    http_proxy) pointing at caretz's proxy on `port`; `env` itself when there is none."""
    if port is None:
        return env
    url = f"http://127.0.0.1:{port}"
    env = dict(env)
    for name in PROXY_VARIABLES:
        env[name] = env[name.lower()] = url
    env["NO_PROXY"] = env["no_proxy"] = NO_PROXY
    return env


def open_sandbox(
    policy: SandboxPolicy,
    check: SandboxCheck,
    env_filter: EnvFilter | None = None,
    *,
    unix_sockets: Sequence[Path] = (),
    ssh_agent: bool = False,
    runtime: SessionRuntime | None = None,
) -> Sandbox:
    """The session's sandbox; raises SandboxUnavailable (one line) when the mode cannot run.
    `runtime` carries a session's /tmp and namespace over to a sandbox with new settings."""
    if policy.enforced and check.backend is SandboxBackend.NONE:
        raise SandboxUnavailable(check.problem or "no command sandbox works here")
    backend = check.backend if policy.enforced else SandboxBackend.NONE
    if backend is SandboxBackend.LANDLOCK or (
        backend is SandboxBackend.BWRAP and not policy.network
    ):
        try:
            command_filter(unix_sockets=policy.network)
        except SeccompUnsupported as error:
            message = f"{error}; allow the network or run with --sandbox off"
            raise SandboxUnavailable(message) from None
    if backend is SandboxBackend.LANDLOCK:
        # Without a PID namespace a command could read caretz's /proc/PID/environ.
        landlock_syscalls.hide_own_environment()
    runtime = runtime or SessionRuntime()
    # Other sessions' directories are out of sight (this one's /tmp is bound or granted).
    parent = runtime.parent
    if backend is not SandboxBackend.NONE and not any(is_within(parent, p) for p in policy.hidden):
        policy = dataclasses.replace(policy, hidden=(*policy.hidden, parent))
    bwrap = check.bwrap.path if backend is SandboxBackend.BWRAP and check.bwrap.path else "bwrap"
    return Sandbox(
        policy=policy,
        backend=backend,
        env_filter=env_filter or EnvFilter(),
        bwrap_path=bwrap,
        runtime=runtime,
        unix_sockets=tuple(Path(os.path.realpath(p)) for p in unix_sockets),
        ssh_agent=ssh_agent,
        nsenter_path=shutil.which("nsenter") if backend is SandboxBackend.BWRAP else None,
    )
