"""The seccomp filter commands run under with the network off: no new Unix sockets.

A pathname Unix socket is reached with connect() on a path, and neither seccomp (it sees
no memory behind a pointer) nor Landlock (up to ABI 7 it has no rule for connect) can
tell which path. So the filter refuses the socket itself: socket(AF_UNIX, …) fails with
EACCES, which closes every pathname and abstract socket outside the session at once.
socketpair() stays allowed (pipes between a program's own processes: Node, Python's
multiprocessing and many tools use it), and so do inherited sockets. Internet sockets
are the network namespace's business (bubblewrap) or Landlock's TCP rules.

Also refused: setting another process's resource limits (prlimit64 with a pid and a
new limit): under the Landlock fallback, which has no PID namespace, a command could
otherwise end its own launcher, or caretz, with a limit (no file descriptors, no CPU
time) rather than a signal, which Landlock scopes but a limit is not. Also refused: io_uring (its IORING_OP_SOCKET creates sockets seccomp never sees) and
every system call made through another architecture's entry point (on x86_64 the
32-bit `int 0x80` and x32 calls, whose socket calls have other numbers), because a
filter that only knows the native numbers would let them through.

The program is classic BPF (what bubblewrap's `--seccomp FD` and
prctl(PR_SET_SECCOMP) load), built here for x86_64 and aarch64; elsewhere
`unix_socket_filter` raises SeccompUnsupported, and a sandbox that needs the filter
refuses to start rather than run without it.
"""

from __future__ import annotations

import errno
import functools
import platform
import struct
import sys

from caretz.lazy_dataclass import lazy_dataclass

AF_UNIX = 1
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
X32_SYSCALL_BIT = 0x40000000

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
OFFSET_NR = 0
OFFSET_ARCH = 4
OFFSET_ARG0_LOW = 16  # little-endian: the low 32 bits of args[0] (an int: the rest is ignored)
OFFSET_ARG2_LOW = 32

BPF_LD_W_ABS = 0x20
BPF_JEQ_K = 0x15
BPF_JGE_K = 0x35
BPF_RET_K = 0x06


@lazy_dataclass(frozen=True, kw_only=True)
class Arch:
    audit: int  # AUDIT_ARCH_*
    socket: int
    prlimit64: int
    io_uring: tuple[int, ...]  # setup, enter, register
    x32: bool  # whether numbers with the x32 bit set reach the same entry point


ARCHES = {
    "x86_64": Arch(audit=0xC000003E, socket=41, prlimit64=302, io_uring=(425, 426, 427), x32=True),
    "aarch64": Arch(
        audit=0xC00000B7, socket=198, prlimit64=261, io_uring=(425, 426, 427), x32=False
    ),
}


class SeccompUnsupported(RuntimeError):
    """No filter for this machine; the message is one line for the user."""


def native_arch(machine: str | None = None) -> Arch:
    machine = (machine or platform.machine()).lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    if machine not in ARCHES or sys.byteorder != "little":
        raise SeccompUnsupported(
            f"Unix sockets cannot be closed on {machine or 'this machine'} (caretz builds "
            "its seccomp filter for x86_64 and aarch64 only)"
        )
    return ARCHES[machine]


def unix_socket_filter(machine: str | None = None) -> bytes:
    """The filter as bytes: struct sock_filter[] (8 bytes each), for `--seccomp FD`."""
    return command_filter(unix_sockets=False, machine=machine)


@functools.lru_cache(maxsize=8)
def command_filter(*, unix_sockets: bool, machine: str | None = None) -> bytes:
    """No new Unix sockets (unless `unix_sockets`), no io_uring, no foreign entry points,
    and no prlimit on another process (the Landlock launcher or caretz itself: a limit
    there ends it without a signal the sandbox could stop)."""
    arch = native_arch(machine)
    deny = SECCOMP_RET_ERRNO | errno.EACCES
    refuse = SECCOMP_RET_ERRNO | errno.EPERM
    body: list[tuple[int, int, int, int]] = []  # (code, jt, jf, k); jumps patched below
    body.append((BPF_LD_W_ABS, 0, 0, OFFSET_ARCH))
    body.append((BPF_JEQ_K, 0, _TO_DENY, arch.audit))
    body.append((BPF_LD_W_ABS, 0, 0, OFFSET_NR))
    if arch.x32:
        body.append((BPF_JGE_K, _TO_DENY, 0, X32_SYSCALL_BIT))
    for number in arch.io_uring:
        body.append((BPF_JEQ_K, _TO_DENY, 0, number))
    # prlimit64(pid, …): another process's limits (pid != 0) may be read, not set.
    body.append((BPF_JEQ_K, 0, _TO_ALLOW if unix_sockets else 4, arch.prlimit64))
    body.append((BPF_LD_W_ABS, 0, 0, OFFSET_ARG0_LOW))  # pid_t: the low half is the pid
    body.append((BPF_JEQ_K, _TO_ALLOW, 0, 0))
    body.append((BPF_LD_W_ABS, 0, 0, OFFSET_ARG2_LOW))
    body.append((BPF_JEQ_K, _TO_ALLOW_HIGH, _TO_REFUSE, 0))
    if not unix_sockets:
        body.append((BPF_JEQ_K, 0, _TO_ALLOW, arch.socket))
        body.append((BPF_LD_W_ABS, 0, 0, OFFSET_ARG0_LOW))
        body.append((BPF_JEQ_K, _TO_DENY, _TO_ALLOW, AF_UNIX))
    # The new limit's pointer is 64 bits: NULL only when its high half is 0 too.
    allow_high_at = len(body)
    body.append((BPF_LD_W_ABS, 0, 0, OFFSET_ARG2_LOW + 4))
    body.append((BPF_JEQ_K, _TO_ALLOW, _TO_REFUSE, 0))
    allow_at, deny_at, refuse_at = len(body), len(body) + 1, len(body) + 2
    targets = {_TO_ALLOW: allow_at, _TO_DENY: deny_at, _TO_REFUSE: refuse_at}
    targets[_TO_ALLOW_HIGH] = allow_high_at
    program = [_patch(at, op, targets) for at, op in enumerate(body)]
    program += [
        (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
        (BPF_RET_K, 0, 0, deny),
        (BPF_RET_K, 0, 0, refuse),
    ]
    return b"".join(struct.pack("=HBBI", *op) for op in program)


_TO_ALLOW, _TO_DENY, _TO_REFUSE, _TO_ALLOW_HIGH = -1, -2, -3, -4  # placeholders


def _patch(
    at: int, op: tuple[int, int, int, int], targets: dict[int, int]
) -> tuple[int, int, int, int]:
    code, jt, jf, k = op

    def target(jump: int) -> int:
        return jump if jump >= 0 else targets[jump] - at - 1

    return code, target(jt), target(jf), k
