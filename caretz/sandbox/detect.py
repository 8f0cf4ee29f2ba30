"""Which sandbox works here, and what it enforces: the start-up check and `caretz sandbox check`.

bubblewrap is tried for real (with the flags commands get), because being installed is
not enough: Ubuntu 24.04 and later refuse unprivileged user namespaces through
AppArmor unless an administrator allows them. When it fails, Landlock (Linux >= 5.13)
covers the filesystem part; when neither works, a sandboxed mode cannot start, and the
one-line `problem` names both ways out. Elsewhere than Linux there is no sandbox, and the
check says so rather than running commands unprotected.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import asdict
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from caretz.lazy_dataclass import lazy_dataclass
from caretz.sandbox import landlock as landlock_syscalls
from caretz.sandbox.bwrap import BASE_MOUNTS, ISOLATION
from caretz.sandbox.policy import DEFAULT_MODE, SandboxMode
from caretz.trusted import Programs

if TYPE_CHECKING:
    from caretz.sandbox.allowlist import NetworkAllowlist


PROBE_TIMEOUT_S = 10.0
INSTALL_FIX = "install bubblewrap (apt install bubblewrap)"
OFF_FIX = "run with --sandbox off"
UNIX_OFF = "Unix sockets: no new ones (seccomp), so no host socket, pathname or abstract"
UNIX_NAMED = (
    "; naming sockets (allowUnixSockets, allowSshAgent) lets commands make Unix sockets "
    "again and binds the named ones in: then every socket they can see is reachable"
)
# Without a sandbox every command asks first, and nobody answers in a -p run.
OFF_NOTE = "(then every command asks first; in -p runs add --permission-mode yolo)"


class SandboxBackend(StrEnum):
    BWRAP = "bwrap"
    LANDLOCK = "landlock"
    NONE = "none"


class SandboxUnavailable(RuntimeError):
    """No sandbox can enforce the mode asked for; the message is one line for the user."""


@lazy_dataclass(frozen=True)
class BwrapProbe:
    path: str | None
    works: bool
    detail: str  # "works", "not found on PATH", or the first line bwrap printed


@lazy_dataclass(frozen=True, kw_only=True)
class SandboxCheck:
    platform: str
    mode: SandboxMode
    network: bool
    backend: SandboxBackend
    bwrap: BwrapProbe
    landlock_abi: int
    enforced: tuple[str, ...]
    not_enforced: tuple[str, ...]
    problem: str | None  # why a sandboxed mode cannot start here (one line), else None
    notice: str | None  # a warning to show at start (the Landlock fallback), else None
    # The programs caretz runs itself, found where no command can write (caretz/trusted.py).
    programs: Programs | None = None
    # With the network off: the allowlist's entries as written; None: no proxy.
    allowed_hosts: tuple[str, ...] | None = None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(mode=self.mode.value, backend=self.backend.value)
        data.update(enforced=list(self.enforced), not_enforced=list(self.not_enforced))
        if self.allowed_hosts is not None:
            data["allowed_hosts"] = list(self.allowed_hosts)
        return data

    @property
    def network_label(self) -> str:
        if self.network:
            return "on"
        if self.allowed_hosts is None:
            return "off"
        return f"only {', '.join(self.allowed_hosts) or 'no host'}, through caretz's proxy"


def probe_bwrap(path: str | None, missing: str = "not found on PATH") -> BwrapProbe:
    """Run `true` in a bwrap sandbox with the same isolation flags commands get."""
    if not path:
        return BwrapProbe(None, False, missing)
    argv = [path, *BASE_MOUNTS, *ISOLATION, "--unshare-net", "--", "true"]
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return BwrapProbe(path, False, f"could not run: {error}")
    if done.returncode == 0:
        return BwrapProbe(path, True, "works")
    first = (done.stderr.decode(errors="replace").strip().splitlines() or [""])[0]
    return BwrapProbe(path, False, first or f"exited with status {done.returncode}")


def check_sandbox(
    mode: SandboxMode = DEFAULT_MODE,
    network: bool = False,
    *,
    platform: str | None = None,
    bwrap: BwrapProbe | None = None,
    landlock_abi: int | None = None,
    programs: Programs | None = None,
    allowlist: NetworkAllowlist | None = None,
) -> SandboxCheck:
    """Probe what is not given (bwrap, the kernel's Landlock ABI) and judge. With
    `programs`, bwrap is the trusted one found there, else the first on PATH; with
    `allowlist` (the network off), the hosts caretz's proxy lets through."""
    platform = platform or sys.platform
    linux = platform.startswith("linux")
    if bwrap is None and not linux:
        bwrap = BwrapProbe(None, False, "")
    elif bwrap is None and programs is not None:
        bwrap = probe_bwrap(programs.bwrap.path, programs.bwrap.notice() or "not found on PATH")
    elif bwrap is None:
        bwrap = probe_bwrap(shutil.which("bwrap"))
    if landlock_abi is None:
        landlock_abi = _landlock_abi() if linux else 0
    backend = _choose(linux, bwrap, landlock_abi)
    hosts = tuple(allowlist.entries) if allowlist is not None and not network else None
    enforced, not_enforced = _coverage(mode, network, backend, landlock_abi)
    if hosts is not None and mode is not SandboxMode.OFF and backend is not SandboxBackend.NONE:
        enforced, not_enforced = _with_allowlist(enforced, not_enforced, backend, landlock_abi)
        if backend is SandboxBackend.BWRAP and programs is not None and not programs.nsenter.path:
            not_enforced.append(NO_NSENTER)
    needed = mode is not SandboxMode.OFF
    problem = (
        _problem(platform, bwrap, landlock_abi)
        if needed and backend is SandboxBackend.NONE
        else None
    )
    notice = _fallback_notice(bwrap) if needed and backend is SandboxBackend.LANDLOCK else None
    return SandboxCheck(
        platform=platform,
        mode=mode,
        network=network,
        backend=backend,
        bwrap=bwrap,
        landlock_abi=landlock_abi,
        enforced=tuple(enforced),
        not_enforced=tuple(not_enforced),
        problem=problem,
        notice=notice,
        programs=programs,
        allowed_hosts=hosts,
    )


def require_backend(check: SandboxCheck) -> SandboxBackend:
    """The backend to run commands with; raises SandboxUnavailable when there is none."""
    if check.problem:
        raise SandboxUnavailable(check.problem)
    return check.backend


def render_check(check: SandboxCheck) -> str:
    """A few lines for `caretz sandbox check`."""
    landlock = f"ABI {check.landlock_abi}" if check.landlock_abi else "not available"
    bwrap_where = f" ({check.bwrap.path})" if check.bwrap.path else ""
    lines = [
        f"mode: {check.mode.value}, network {check.network_label}",
        f"bubblewrap: {check.bwrap.detail or 'not available'}{bwrap_where}",
        f"Landlock: {landlock}",
        f"commands run with: {_backend_label(check)}",
    ]
    if check.programs is not None:
        programs = (check.programs.bwrap, check.programs.git, check.programs.python)
        found = ", ".join(f"{p.name} {p.path or '(none caretz may run)'}" for p in programs)
        lines.append(f"programs caretz runs: {found}")
        lines += [f"note: {line}" for line in check.programs.notices()]
    lines += [f"  enforced: {item}" for item in check.enforced]
    lines += [f"  not enforced: {item}" for item in check.not_enforced]
    if check.notice:
        lines.append(f"note: {check.notice}")
    if check.problem:
        lines.append(f"error: {check.problem}")
    return "\n".join(lines)


def _landlock_abi() -> int:
    return landlock_syscalls.abi_version()


def _choose(linux: bool, bwrap: BwrapProbe, landlock_abi: int) -> SandboxBackend:
    if not linux:
        return SandboxBackend.NONE
    if bwrap.works:
        return SandboxBackend.BWRAP
    return SandboxBackend.LANDLOCK if landlock_abi >= 1 else SandboxBackend.NONE


def _backend_label(check: SandboxCheck) -> str:
    if check.mode is SandboxMode.OFF:
        return "no sandbox (--sandbox off)"
    if check.backend is SandboxBackend.NONE:
        return "nothing: a sandboxed mode cannot start"
    return {SandboxBackend.BWRAP: "bubblewrap", SandboxBackend.LANDLOCK: "Landlock (fallback)"}[
        check.backend
    ]


def _problem(platform: str, bwrap: BwrapProbe, landlock_abi: int) -> str:
    if not platform.startswith("linux"):
        return (
            f"the command sandbox needs Linux (bubblewrap or Landlock) and this is {platform}; "
            f"{OFF_FIX} to run commands without it {OFF_NOTE}"
        )
    return (
        f"no command sandbox here (bubblewrap: {bwrap.detail}; Landlock: not available): "
        f"{INSTALL_FIX}, or {OFF_FIX} {OFF_NOTE}"
    )


def _fallback_notice(bwrap: BwrapProbe) -> str:
    return (
        f"bubblewrap is unusable ({bwrap.detail}); commands run under Landlock, which does "
        "not hide credential stores inside writable roots, keep .git/hooks read-only or "
        f"isolate processes; {INSTALL_FIX} for the full sandbox"
    )


def _coverage(
    mode: SandboxMode, network: bool, backend: SandboxBackend, abi: int
) -> tuple[list[str], list[str]]:
    env = "environment: API keys and secret variables removed"
    if mode is SandboxMode.OFF:
        return [env], ["filesystem, network and processes: the sandbox is off"]
    if backend is SandboxBackend.NONE:
        return [env], ["filesystem, network and processes: no sandbox works here"]
    writes = (
        "writes: nowhere (read-only mode)"
        if mode is SandboxMode.READ_ONLY
        else "writes: only in the working directory and --add-dir roots"
    )
    if backend is SandboxBackend.BWRAP:
        return [
            writes,
            "a private /tmp, shared by the session's commands",
            "hidden: credential stores, service sockets, caretz's config and data",
            "read-only: .git/hooks, .git/config, .caretz and .claude/commands in writable roots",
            "network: on"
            if network
            else "network: off (the session's own loopback, shared by its commands)",
            *([] if network else [UNIX_OFF + UNIX_NAMED]),
            "processes: own PID namespace; nothing outlives the command or caretz",
            env,
        ], ["Unix sockets: the host's, where visible (network on)"] if network else []
    return _landlock_coverage(writes, network, abi, env)


def _landlock_coverage(
    writes: str, network: bool, abi: int, env: str
) -> tuple[list[str], list[str]]:
    enforced = [
        writes,
        "a private TMPDIR, shared by the session's commands (/tmp itself is read-only)",
        "hidden: credential stores, service sockets, caretz's config and data (outside "
        "writable roots; their parent directories cannot be listed)",
        "processes: everything a command starts is killed when it ends, times out or caretz "
        "dies; other processes' resource limits cannot be set (seccomp)",
        env,
    ]
    missing = [
        "hidden paths inside writable roots stay readable",
        ".git/hooks, .git/config, .caretz and .claude/commands stay writable inside writable roots",
        "no PID namespace: commands see other processes",
        "no shared network namespace: with the network off a job's server cannot listen on TCP",
    ]
    if not network:
        enforced.append(UNIX_OFF + " (allowUnixSockets and allowSshAgent need bubblewrap)")
    else:
        missing.append("Unix sockets: every pathname socket on the machine (network on)")
    if network:
        enforced.append("network: on")
    elif abi >= 4:
        enforced.append("network: TCP connect and bind refused")
        missing.append("network: UDP and other non-TCP traffic (e.g. DNS) is not blocked")
    else:
        missing.append(f"network: not restricted (needs Landlock ABI 4, this kernel has {abi})")
    if abi < 6:
        missing.append("signals and abstract Unix sockets outside the sandbox (ABI 6)")
    return enforced, missing


PROXY_ENFORCED = (
    "network: only the allowed hosts, through caretz's HTTP and HTTPS proxy (HTTP_PROXY, "
    "HTTPS_PROXY); a name is checked again after DNS and refused if it resolves to a "
    "private address; refusals are named in the command's output; nothing else gets out"
)
NO_NSENTER = (
    "network: the allowlist needs nsenter (util-linux) where no command can write it; "
    "without it commands get no network at all"
)
PROXY_UNINSPECTED = (
    "network: HTTPS through the proxy is a tunnel, not inspected: whatever a command sends "
    "an allowed host (a CDN's name reaches every site it serves) gets there"
)


def _with_allowlist(
    enforced: list[str], missing: list[str], backend: SandboxBackend, abi: int
) -> tuple[list[str], list[str]]:
    """The coverage with the network off and an allowlist: what the proxy adds."""
    enforced = [line for line in enforced if not line.startswith("network:")]
    missing = [line for line in missing if not line.startswith("network:")]
    if backend is SandboxBackend.BWRAP:
        return [*enforced, PROXY_ENFORCED], [*missing, PROXY_UNINSPECTED]
    if abi < 4:
        return enforced, [
            *missing,
            f"network: not restricted (needs Landlock ABI 4, this kernel has {abi}): only "
            "programs that use HTTP_PROXY go through the allowlist",
        ]
    return [*enforced, PROXY_ENFORCED + "; TCP connect to the proxy's port only"], [
        *missing,
        PROXY_UNINSPECTED,
        "network: the proxy's port is open on every address (Landlock rules name ports), "
        "UDP and other non-TCP traffic (e.g. DNS) is not blocked, and other programs on "
        "this machine can use the proxy (it listens on the host's loopback)",
    ]
