"""Landlock: the filesystem sandbox for when bubblewrap is missing or refused.

Landlock (Linux >= 5.13) needs no user namespace: a process restricts itself and its
future children to a set of path rules, and can never lift them. Four calls do it:
prctl(PR_SET_NO_NEW_PRIVS), landlock_create_ruleset (444), landlock_add_rule (445),
landlock_restrict_self (446). The numbers are the same on every Linux architecture.

This file imports only the standard library because it also runs as a script, the
launcher caretz puts in front of a command (`python -I -S landlock.py FLAGS -- argv`):

1. it makes itself a child subreaper and asks for SIGTERM when caretz dies;
2. it forks; the child drops every capability, applies the rules (read-only where
   granted, read-write in the writable roots and the session's TMPDIR (`--tmp`), TCP
   bind/connect denied when the network is off (but connect to the allowlist's proxy
   port, `--connect-port`: ABI 4), signals and abstract Unix sockets
   outside the sandbox denied), loads the seccomp filter it is given (`--seccomp`:
   no new Unix sockets, sandbox/seccomp.py) and execs the command;
3. when the command ends, or the launcher gets SIGTERM/SIGHUP/SIGINT (a timeout,
   Ctrl-C, caretz's death), it kills every process left below it (background jobs,
   `nohup`, `setsid` children all land on it as the subreaper), reaps them, and exits
   with the command's status. If the launcher itself is killed outright, what it
   started lands on caretz, which is a subreaper too (sandbox/reaper.py).

With `--unconfined` the launcher applies no rules and no filter: it only keeps the
process hygiene (subreaper, death signal, leftovers killed). caretz starts commands
that way when the sandbox is off, or for one command the user let out of it.

What this does not do, unlike bubblewrap: hide paths inside the granted areas, keep
`.git/hooks` read-only inside a writable root, give the command its own PID namespace
(it sees other processes), or restrict UDP and other non-TCP traffic. The caller (landlock_rules.py) decides which
paths are granted.
"""

from __future__ import annotations

# Each import costs start-up time for every command under Landlock: no json, re, enum,
# tempfile or shutil here (the `_signal` core module is `signal` without its enums), nor
# typing: the checker reads `signal` by the name it reads as TYPE_CHECKING.
import ctypes
import os
import stat  # free: os imports it
import struct
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal
else:
    import _signal as signal

SYS_CREATE_RULESET = 444
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
RULE_NET_PORT = 2
PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CAPABILITY_VERSION_3 = 0x20080522

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

FILE_RIGHTS_MASK = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE
EXIT_SETUP_FAILED = 126


class LandlockError(OSError):
    pass


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled."""
    if not sys.platform.startswith("linux"):
        return 0
    version = _libc().syscall(
        SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION)
    )
    return max(int(version), 0)


def handled_fs(abi: int) -> int:
    """Every filesystem right the ABI knows, except device ioctls (left unrestricted)."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


def read_rights() -> int:
    return EXECUTE | READ_FILE | READ_DIR


def restrict_self(
    read: list[str],
    write: list[str],
    network: bool,
    abi: int | None = None,
    connect_ports: tuple[int, ...] = (),
) -> None:
    """Restrict this thread and its future children; raises LandlockError on any failure.
    With the network off (ABI 4), TCP connect stays allowed to `connect_ports` only."""
    abi = abi_version() if abi is None else abi
    if abi < 1:
        raise LandlockError(0, "Landlock is not available in this kernel")
    libc = _libc()
    fs = handled_fs(abi)
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 and not network else 0
    scoped = 0
    if abi >= 6:
        scoped = SCOPE_SIGNAL | (0 if network else SCOPE_ABSTRACT_UNIX_SOCKET)
    attr = struct.pack("=QQQ", fs, net, scoped)
    ruleset = _check(
        libc,
        libc.syscall(SYS_CREATE_RULESET, attr, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0)),
        "landlock_create_ruleset",
    )
    try:
        for path in read:
            _add_rule(libc, ruleset, path, read_rights())
        for path in write:
            _add_rule(libc, ruleset, path, fs)
        for port in connect_ports if net else ():
            _add_port_rule(libc, ruleset, port)
        _check(libc, libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
        _check(
            libc,
            libc.syscall(SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)),
            "landlock_restrict_self",
        )
    finally:
        os.close(ruleset)


def drop_capabilities() -> None:
    """Empty every capability set, so that root is an ordinary user inside the sandbox.

    Landlock alone would leave root able to load a kernel module or join another
    namespace. For root the bounding set is emptied too, since execve would otherwise
    hand root its full set again; an ordinary user gains nothing on execve under
    no_new_privs, and could not empty the bounding set anyway. Raises LandlockError
    when a set cannot be emptied.
    """
    libc = _libc()
    if os.geteuid() == 0:
        for cap in range(_last_capability() + 1):
            if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and _in_bounding_set(cap):
                raise LandlockError(ctypes.get_errno(), f"cannot drop capability {cap}")
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = ctypes.create_string_buffer(struct.pack("=Ii", CAPABILITY_VERSION_3, 0), 8)
    data = ctypes.create_string_buffer(bytes(24), 24)
    _check(libc, libc.capset(header, data), "capset")


def hide_own_environment() -> None:
    """Make this process undumpable: other processes of the same user, sandboxed
    commands included, can no longer read its /proc/PID/environ (the API keys)."""
    if sys.platform.startswith("linux"):
        _libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def _last_capability() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return 63


def _in_bounding_set(cap: int) -> bool:
    found: int = _libc().prctl(23, cap, 0, 0, 0)  # PR_CAPBSET_READ
    return found == 1


def _add_rule(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return  # gone since the rules were computed: nothing to grant
    try:
        if not _is_dir(fd):
            rights &= FILE_RIGHTS_MASK
        rule = struct.pack("=Qi", rights, fd)
        _check(
            libc,
            libc.syscall(
                SYS_ADD_RULE,
                ctypes.c_int(ruleset),
                ctypes.c_int(RULE_PATH_BENEATH),
                rule,
                ctypes.c_uint32(0),
            ),
            f"landlock_add_rule({path})",
        )
    finally:
        os.close(fd)


def _add_port_rule(libc: ctypes.CDLL, ruleset: int, port: int) -> None:
    rule = struct.pack("=QQ", NET_CONNECT_TCP, port)  # struct landlock_net_port_attr
    result = libc.syscall(
        SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_NET_PORT), rule, ctypes.c_uint32(0)
    )
    _check(libc, result, f"landlock_add_rule(port {port})")


def _is_dir(fd: int) -> bool:
    return stat.S_ISDIR(os.fstat(fd).st_mode)


def _check(libc: ctypes.CDLL, result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise LandlockError(errno, f"{what} failed: {os.strerror(errno)}")
    return int(result)


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
USAGE = (
    "usage: landlock.py [--parent PID] [--abi N] [--network] [--unconfined] [--tmp DIR]"
    " [--seccomp FILE] [--connect-port N] [--read PATH]... [--write PATH]... -- COMMAND"
)


class LaunchSpec:
    def __init__(self) -> None:
        self.read: list[str] = []
        self.write: list[str] = []
        self.network = False
        self.unconfined = False  # no rules, no filter: process hygiene only
        self.parent = 0
        self.abi: int | None = None
        self.tmp = ""  # the session's TMPDIR, writable
        self.seccomp = ""  # a file holding the seccomp program to load
        self.connect_ports: tuple[int, ...] = ()  # TCP ports open with the network off
        self.command: list[str] = []


def parse_args(args: list[str]) -> LaunchSpec:
    """The launcher's arguments (plain flags: parsing JSON would cost start-up time)."""
    spec = LaunchSpec()
    position = 0
    while position < len(args):
        flag = args[position]
        if flag == "--":
            spec.command = args[position + 1 :]
            break
        if flag in ("--network", "--unconfined"):
            setattr(spec, flag[2:], True)
            position += 1
            continue
        if position + 1 >= len(args):
            raise ValueError(f"{flag} needs a value")
        value = args[position + 1]
        if flag in ("--read", "--write"):
            getattr(spec, flag[2:]).append(value)
        elif flag == "--parent":
            spec.parent = int(value)
        elif flag == "--abi":
            spec.abi = int(value)
        elif flag == "--connect-port":
            spec.connect_ports += (int(value),)
        elif flag in ("--tmp", "--seccomp"):
            setattr(spec, flag[2:], value)
        else:
            raise ValueError(f"unknown flag {flag}")
        position += 2
    if not spec.command:
        raise ValueError("no command after --")
    return spec


def main(args: list[str]) -> int:
    """The launcher; returns the command's exit status (128+N when killed by signal N)."""
    try:
        spec = parse_args(args)
    except ValueError as error:
        os.write(2, f"landlock.py: {error}\n{USAGE}\n".encode())
        return 2
    for signum in STOP_SIGNALS:
        signal.signal(signum, _on_signal)
    libc = _libc()
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if spec.parent and os.getppid() != spec.parent:
        return 128 + signal.SIGTERM  # caretz died before the death signal was set
    try:
        return _supervise(spec)
    except _Stop as stop:
        return 128 + stop.signum
    finally:
        _block_signals()
        _kill_descendants()


class _Stop(Exception):
    def __init__(self, signum: int):
        self.signum = signum


def _on_signal(signum: int, _frame: object) -> None:
    raise _Stop(signum)


def _supervise(spec: LaunchSpec) -> int:
    env = dict(os.environ, TMPDIR=spec.tmp) if spec.tmp and not spec.unconfined else os.environ
    _block_signals()
    pid = os.fork()
    if pid == 0:
        _exec_restricted(spec, dict(env))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    _, status = os.waitpid(pid, 0)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def _exec_restricted(spec: LaunchSpec, env: dict[str, str]) -> None:
    """In the forked child: never returns; exits 126 rather than run unrestricted."""
    try:
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        _libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if not spec.unconfined:
            program = read_program(spec.seccomp) if spec.seccomp else b""
            drop_capabilities()
            write = [*spec.write, spec.tmp] if spec.tmp else spec.write
            restrict_self(spec.read, write, spec.network, spec.abi, spec.connect_ports)
            if program:
                load_seccomp(program)
        os.execvpe(spec.command[0], spec.command, env)
    except Exception as error:  # any failure: report it, never run unrestricted
        os.write(2, f"caretz sandbox (Landlock): {spec.command[0]}: {error}\n".encode())
    finally:
        os._exit(EXIT_SETUP_FAILED)


def _block_signals() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)


def read_program(path: str) -> bytes:
    """The classic BPF program in `path` (read before the rules hide it)."""
    with open(path, "rb") as handle:
        program = handle.read()
    if not program or len(program) % 8:
        raise LandlockError(0, f"{path}: not a seccomp program")
    return program


def load_seccomp(program: bytes) -> None:
    """Load a classic BPF program (no_new_privs is already set)."""
    filters = ctypes.create_string_buffer(program, len(program))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(program) // 8, ctypes.addressof(filters))
    libc = _libc()
    result = libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0)
    _check(libc, result, "prctl(PR_SET_SECCOMP)")


def _kill_descendants() -> None:
    """Kill and reap everything below this process until nothing is left."""
    me = os.getpid()
    while True:
        try:
            reaped, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return  # no child, hence no descendant: orphans are reparented to this subreaper
        if reaped:
            continue
        for pid in _descendants(me):
            try:  # noqa: SIM105 (contextlib would add start-up time)
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not (entry.isascii() and entry.isdigit()):
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        parent = int(stat.rsplit(b")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry))
    found: list[int] = []
    pending = list(children.get(root, []))
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending.extend(children.get(pid, []))
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
