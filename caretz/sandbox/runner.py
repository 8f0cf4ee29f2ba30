"""The one object the bash tool asks how to start a command: argv, environment, directory.

    sandbox = open_sandbox(policy, check_sandbox(policy.mode, policy.network), env_filter)
    launch = sandbox.launch(["bash", "-c", command], os.environ)
    subprocess.Popen(launch.argv, cwd=launch.cwd, env=launch.env, start_new_session=True, ...)

The caller keeps its own process-group handling: bwrap (and the Landlock launcher) is
the group leader, and signalling the group ends the whole sandbox.

With the sandbox off, and for one command the user let out of it (`confined=False`),
the command still gets the filtered environment and starts under the launcher with no
rules, which kills whatever it leaves behind when it ends or caretz dies.

Start the process from a thread that outlives it (the thread that waits for it is
fine): the kernel's parent-death signal, which `--die-with-parent` and the Landlock
launcher rely on, fires when the thread that forked the child exits, not the process.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from caretz.sandbox.bwrap import bwrap_argv
from caretz.sandbox.covers import Covers
from caretz.sandbox.detect import Backend, SandboxCheck, SandboxUnavailable
from caretz.sandbox.envfilter import EnvFilter
from caretz.sandbox.landlock_rules import launcher_argv, unconfined_argv
from caretz.sandbox.paths import PathGuard
from caretz.sandbox.policy import SandboxPolicy, root_protection

SANDBOX_TMPDIR = "/tmp"  # bwrap's private tmpfs


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]
    cwd: Path


@dataclass(frozen=True)
class Sandbox:
    policy: SandboxPolicy
    backend: Backend
    env_filter: EnvFilter = field(default_factory=EnvFilter)
    bwrap_path: str = "bwrap"
    python: str | None = None  # the interpreter that runs the Landlock launcher
    # The directories bubblewrap creates as mount points, removed once nothing runs.
    covers: Covers = field(default_factory=Covers, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.policy.enforced and self.backend is Backend.NONE:
            raise SandboxUnavailable("no sandbox backend for a sandboxed mode")

    @property
    def enforced(self) -> bool:
        """Whether commands run confined (a sandboxed mode, with a backend that works)."""
        return self.policy.enforced and self.backend is not Backend.NONE

    @cached_property
    def paths(self) -> PathGuard:
        """The same roots, for the in-process file tools."""
        return PathGuard(self.policy)

    def command(self, argv: Sequence[str], confined: bool = True) -> list[str]:
        """`argv` wrapped so that it runs inside the sandbox; with the sandbox off, or
        `confined=False`, under the launcher that only keeps the process hygiene."""
        if not (confined and self.enforced):
            return unconfined_argv(argv, self.python)
        if self.backend is Backend.BWRAP:
            return bwrap_argv(self.policy, argv, self.bwrap_path)
        return launcher_argv(self.policy, argv, self.python)

    def environment(self, environ: Mapping[str, str], confined: bool = True) -> dict[str, str]:
        """The filtered environment; TMPDIR points at the sandbox's own /tmp under bwrap."""
        env = self.env_filter.for_command(environ)
        if confined and self.enforced and self.backend is Backend.BWRAP:
            env["TMPDIR"] = SANDBOX_TMPDIR
        return env

    def launch(
        self, argv: Sequence[str], environ: Mapping[str, str], confined: bool = True
    ) -> Launch:
        return Launch(
            self.command(argv, confined), self.environment(environ, confined), self.policy.cwd
        )

    def mounts_covers(self, confined: bool = True) -> bool:
        """Whether a command started this way creates cover mount points on the host."""
        return confined and self.enforced and self.backend is Backend.BWRAP

    def cover_paths(self) -> list[Path]:
        """The missing paths of the writable roots that bubblewrap covers."""
        return [
            path
            for root in self.policy.writable_roots
            for path in root_protection(root).missing_dirs
        ]


def open_sandbox(
    policy: SandboxPolicy,
    check: SandboxCheck,
    env_filter: EnvFilter | None = None,
) -> Sandbox:
    """The session's sandbox; raises SandboxUnavailable (one line) when the mode cannot run."""
    if policy.enforced and check.backend is Backend.NONE:
        raise SandboxUnavailable(check.problem or "no command sandbox works here")
    backend = check.backend if policy.enforced else Backend.NONE
    if backend is Backend.LANDLOCK:
        # Without a PID namespace a command could read caretz's /proc/PID/environ.
        from caretz.sandbox.landlock import hide_own_environment

        hide_own_environment()
    bwrap = check.bwrap.path if backend is Backend.BWRAP and check.bwrap.path else "bwrap"
    return Sandbox(policy, backend, env_filter or EnvFilter(), bwrap_path=bwrap)
