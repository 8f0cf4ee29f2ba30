"""What the commands of one session share: a private /tmp, one network namespace, the cwd.

One sandbox per session, not per command: a dev server started as a background job is
reachable by a later command, and a file a command writes to /tmp is there for the
next one. The walls stay per command (each its own process group and, under
bubblewrap, its own PID namespace, timeout and cleanup); what is shared is:

- a host directory, `<parent>/session-<pid>-XXXX/tmp`, created 0700 when the first
  command starts and removed when the session ends (or, if caretz was killed
  outright, by the next session to start). bubblewrap binds it as /tmp; the Landlock
  launcher makes it TMPDIR (its /tmp stays read-only). The parent (`sessions_parent`)
  is hidden from every session's commands, so sessions running at the same time never
  see each other's files.
- with the network off under bubblewrap, one network namespace: bubblewrap makes it
  once (`--unshare-net`, which brings its loopback up) around a process that waits
  until caretz has opened the namespace's file, and caretz keeps that file open for
  the session. Each command joins it with `nsenter --net=/proc/self/fd/N` (and the user
  namespace that owns it, where bubblewrap made one), which then execs bubblewrap
  without `--unshare-net`. Holding the namespace by a file, not by a process id, means
  no process can die and leave a reused id that would put a command in another
  namespace. Where the namespace cannot be made, each command gets its own, as before.
- with a network allowlist, the proxy (sandbox/netproxy.py) and its checks
  (sandbox/netgate.py: the hosts allowed at the prompt, the refusals not yet told): its
  listening socket is made inside the shared namespace (sandbox/netbridge.py), or on the
  host's loopback under Landlock, when the first command needs it, and closed at the end.
- the working directory between bash commands (`WorkingDir`).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import tempfile
import threading
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import socket

    from caretz.sandbox.allowlist import NetworkAllowlist
    from caretz.sandbox.netgate import AskToAllow, NetworkGate
    from caretz.sandbox.netproxy import ProxyServer

from caretz import private_data
from caretz.inbound import ascii_number
from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass
from caretz.sandbox.beneath import remove_tree
from caretz.sandbox.covers import Covers

if TYPE_CHECKING:
    import hashlib

    from caretz.sandbox import allowlist as sandbox_allowlist
    from caretz.sandbox import netgate, netproxy
else:
    hashlib = lazy_module("hashlib")  # a filter's file name: when a command first needs one
    # The network allowlist's checks and proxy: only once a command runs with an allowlist.
    sandbox_allowlist = lazy_module("caretz.sandbox.allowlist")
    netgate = lazy_module("caretz.sandbox.netgate")
    netproxy = lazy_module("caretz.sandbox.netproxy")

HOLDER_TIMEOUT_S = 10.0


@lazy_dataclass(frozen=True)
class NetNamespace:
    """Open namespace files; the fds are passed to each command's nsenter."""

    net_fd: int
    user_fd: int | None  # the user namespace owning it, when it is not caretz's own

    @property
    def fds(self) -> tuple[int, ...]:
        return (self.net_fd,) if self.user_fd is None else (self.net_fd, self.user_fd)

    def nsenter_argv(self, nsenter: str) -> list[str]:
        argv = [nsenter, f"--net=/proc/self/fd/{self.net_fd}"]
        if self.user_fd is not None:
            argv += [f"--user=/proc/self/fd/{self.user_fd}", "--preserve-credentials"]
        return [*argv, "--"]


def sessions_parent(data_dir: Path | None = None) -> Path:
    """Where every session's directory lives: `$XDG_RUNTIME_DIR/caretz`, else caretz's
    data dir's `run`, else `<tmp>/caretz-<uid>`. The first two are hidden from commands
    already; the last is added to the hidden paths (sandbox/runner.py). Under Landlock a
    hidden path's parents are searched entry by entry for every command, so a parent
    already hidden costs nothing where a crowded /tmp would."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isdir(runtime):
        return Path(os.path.realpath(runtime)) / "caretz"
    if data_dir is not None:
        return Path(os.path.realpath(data_dir)) / "run"
    return Path(os.path.realpath(tempfile.gettempdir())) / f"caretz-{os.getuid()}"


class SessionRuntime:
    """The session's shared parts, made on first use; `close()` at the session's end."""

    def __init__(self, parent: Path | None = None):
        self.parent = parent or sessions_parent()
        self._lock = threading.Lock()
        # The mount points bubblewrap creates on the host, removed once nothing runs.
        self.covers = Covers()
        self._dir: Path | None = None
        self._net: NetNamespace | None = None
        self._net_tried = False
        self.net_problem: str | None = None  # why the session has no shared namespace
        self._filters: dict[bytes, Path] = {}
        self._fds: list[int] = []
        self._finalizer: weakref.finalize[[Path | None, list[int]], SessionRuntime] | None = None
        self.workdir: Path | None = None  # the bash commands' cwd; None: the project root
        self._reports = 0
        self._gate: NetworkGate | None = None
        self._proxy: ProxyServer | None = None
        self._proxy_tried = False
        self.proxy_problem: str | None = None  # why the allowlist's proxy could not start
        # The session log's emit and the question that allows a refused host (None: nobody
        # to ask), given to the network checks when they are made (runtime/network.py).
        self._network_wiring: tuple[Callable[..., object], AskToAllow | None] | None = None

    def tmp_dir(self) -> Path:
        """The host directory that is the session's /tmp (created on first use)."""
        return self._session_dir() / "tmp"

    def filter_file(self, program: bytes) -> Path:
        """A file holding a seccomp program, written once, readable only by this user."""
        with self._lock:
            if program not in self._filters:
                name = f"seccomp-{hashlib.sha256(program).hexdigest()[:12]}.bpf"
                path = self._session_dir_locked() / name
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o400)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(program)
                self._filters[program] = path
            return self._filters[program]

    def cwd_report(self) -> str:
        """A fresh file name in the session's /tmp for a command to report its cwd in."""
        with self._lock:
            self._reports += 1
            return f".caretz-cwd-{os.getpid()}-{self._reports}"

    def netns(self, bwrap: str) -> NetNamespace | None:
        """The session's network namespace (made on first use); None when it cannot be
        made here (`net_problem` says why): commands then get one each."""
        with self._lock:
            if not self._net_tried:
                self._net_tried = True
                try:
                    self._net = _make_netns(bwrap)
                    self._fds += list(self._net.fds)
                    self._arm_locked()
                except (OSError, ValueError, subprocess.SubprocessError) as error:
                    self.net_problem = f"no shared network namespace: {error}"
            return self._net

    def network_gate(self) -> NetworkGate:
        """The session's network checks (made on first use, with an empty allowlist until a
        command with an allowlist starts), kept across a sandbox rebuilt mid-session."""
        with self._lock:
            if self._gate is None:
                self._gate = netgate.NetworkGate(sandbox_allowlist.NetworkAllowlist())
                if self._network_wiring is not None:
                    self._gate.emit, self._gate.ask = self._network_wiring
            return self._gate

    def wire_network(self, emit: Callable[..., object], ask: AskToAllow | None) -> None:
        """Where the network checks' events go and whom they ask, now or once made."""
        with self._lock:
            self._network_wiring = (emit, ask)
            if self._gate is not None:
                self._gate.emit, self._gate.ask = emit, ask

    def proxy_port(
        self, allowlist: NetworkAllowlist, listener: Callable[[], socket.socket]
    ) -> int | None:
        """The port of the session's proxy, checking against `allowlist` (the proxy starts
        on first use, on the socket `listener` makes); None when it cannot start
        (`proxy_problem` says why): commands then have no network at all."""
        gate = self.network_gate()
        with self._lock:
            gate.allowlist = allowlist
            if not self._proxy_tried:
                self._proxy_tried = True
                try:
                    self._proxy = netproxy.ProxyServer(listener(), gate).start()
                except (OSError, subprocess.SubprocessError) as error:
                    self.proxy_problem = f"the network allowlist's proxy did not start: {error}"
            return self._proxy.port if self._proxy is not None else None

    def stop_proxy(self) -> None:
        """No allowlist any more (the sandbox was rebuilt with the network off or on)."""
        with self._lock:
            proxy, self._proxy, self._proxy_tried = self._proxy, None, False
        if proxy is not None:
            proxy.close()

    def close(self) -> None:
        """Close the namespace files and remove the session's directory."""
        self.stop_proxy()
        with self._lock:
            if self._finalizer is not None:
                self._finalizer()
            self._dir, self._net, self._net_tried = None, None, False
            self._filters.clear()
            self._fds = []
            self._finalizer = None

    def _session_dir(self) -> Path:
        with self._lock:
            return self._session_dir_locked()

    def _session_dir_locked(self) -> Path:
        if self._dir is None:
            _private_parent(self.parent)
            _remove_abandoned(self.parent)
            path = Path(tempfile.mkdtemp(prefix=f"session-{os.getpid()}-", dir=self.parent))
            (path / "tmp").mkdir(mode=0o700)
            self._dir = path
            self._arm_locked()
        return self._dir

    def _arm_locked(self) -> None:
        if self._finalizer is not None:
            self._finalizer.detach()
        self._finalizer = weakref.finalize(self, _release, self._dir, list(self._fds))


def _release(path: Path | None, fds: Sequence[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    if path is not None:
        remove_tree(path)


def _remove_abandoned(parent: Path) -> None:
    """Remove the directories of sessions whose caretz is gone (killed outright)."""
    for entry in os.scandir(parent):
        owner = entry.name.split("-")[1] if entry.name.startswith("session-") else ""
        if ascii_number(owner) is not None and not os.path.exists(f"/proc/{owner}"):
            remove_tree(Path(entry.path))


def _private_parent(parent: Path) -> None:
    """Make `parent` (0700, this user's); refuse one that is not (another user's trap)."""
    private_data.make_dir(parent)
    info = os.lstat(parent)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise OSError(f"{parent} is not a private directory of this user; remove it")


def _make_netns(bwrap: str) -> NetNamespace:
    """bubblewrap makes the namespace around a process that blocks until caretz has
    opened the namespace's file, then exits; the open file keeps the namespace."""
    info_r, info_w = os.pipe()
    block_r, block_w = os.pipe()
    argv = [
        bwrap, "--ro-bind", "/", "/", "--unshare-net", "--die-with-parent",
        "--info-fd", str(info_w), "--block-fd", str(block_r), "--", "true",
    ]  # fmt: skip
    try:
        holder = subprocess.Popen(
            argv,
            pass_fds=(info_w, block_r),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
    finally:
        os.close(info_w)
        os.close(block_r)
    try:
        info = _read_all(info_r)
        if not info:
            problem = holder.communicate(timeout=HOLDER_TIMEOUT_S)[1].decode(errors="replace")
            raise OSError((problem.strip().splitlines() or ["bubblewrap failed"])[0])
        pid = int(json.loads(info)["child-pid"])
        namespace = _open_namespaces(pid)
    finally:
        os.close(info_r)
        with contextlib.suppress(OSError):
            os.write(block_w, b"x")
        os.close(block_w)
        with contextlib.suppress(subprocess.TimeoutExpired):
            holder.communicate(timeout=HOLDER_TIMEOUT_S)
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    return namespace


def _open_namespaces(pid: int) -> NetNamespace:
    net_fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    user_fd: int | None = None
    try:
        if os.fstat(net_fd).st_ino == os.stat("/proc/self/ns/net").st_ino:
            raise OSError("bubblewrap did not make a network namespace")
        user_fd = os.open(f"/proc/{pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
        if os.fstat(user_fd).st_ino == os.stat("/proc/self/ns/user").st_ino:
            os.close(user_fd)
            user_fd = None
    except BaseException:
        os.close(net_fd)
        if user_fd is not None:
            os.close(user_fd)
        raise
    return NetNamespace(net_fd, user_fd)


def _read_all(fd: int) -> bytes:
    """bubblewrap writes the child's pid as JSON to the info fd and closes it."""
    data = b""
    while b"}" not in data:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    return data
