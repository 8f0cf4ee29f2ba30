"""The seccomp filter commands run under with the network off: no new Unix sockets.

A pathname Unix socket is reached with connect() on a path, and neither seccomp (it sees
no memory behind a pointer) nor Landlock (up to ABI 7 it has no rule for connect) can
tell which path. So the filter refuses the socket itself: socket(AF_UNIX, …) fails with
EACCES, which closes every pathname and abstract socket outside the session at once.
socketpair() stays allowed (pipes between a program's own processes: Node, Python's
multiprocessing and many tools use it), and so do inherited sockets. Internet sockets
are the network namespace's business (bubblewrap) or Landlock's TCP rules.

Also refused: io_uring (its IORING_OP_SOCKET creates sockets seccomp never sees) and
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
import platform
import struct
import sys
from dataclasses import dataclass

AF_UNIX = 1
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
X32_SYSCALL_BIT = 0x40000000

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
OFFSET_NR = 0
OFFSET_ARCH = 4
OFFSET_ARG0_LOW = 16  # little-endian: the low 32 bits of args[0] (an int: the rest is ignored)

BPF_LD_W_ABS = 0x20
BPF_JEQ_K = 0x15
BPF_JGE_K = 0x35
BPF_RET_K = 0x06


@dataclass(frozen=True)
class Arch:
    audit: int  # AUDIT_ARCH_*
    socket: int
    io_uring: tuple[int, ...]  # setup, enter, register
    x32: bool  # whether numbers with the x32 bit set reach the same entry point


ARCHES = {
    "x86_64": Arch(0xC000003E, 41, (425, 426, 427), x32=True),
    "aarch64": Arch(0xC00000B7, 198, (425, 426, 427), x32=False),
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
    arch = native_arch(machine)
    deny = SECCOMP_RET_ERRNO | errno.EACCES
    body: list[tuple[int, int, int, int]] = []  # (code, jt, jf, k); jumps patched below
    body.append((BPF_LD_W_ABS, 0, 0, OFFSET_ARCH))
    body.append((BPF_JEQ_K, 0, _TO_DENY, arch.audit))
    body.append((BPF_LD_W_ABS, 0, 0, OFFSET_NR))
    if arch.x32:
        body.append((BPF_JGE_K, _TO_DENY, 0, X32_SYSCALL_BIT))
    for number in arch.io_uring:
        body.append((BPF_JEQ_K, _TO_DENY, 0, number))
    body.append((BPF_JEQ_K, 0, _TO_ALLOW, arch.socket))
    body.append((BPF_LD_W_ABS, 0, 0, OFFSET_ARG0_LOW))
    body.append((BPF_JEQ_K, _TO_DENY, _TO_ALLOW, AF_UNIX))
    allow_at, deny_at = len(body), len(body) + 1
    program = [_patch(at, op, allow_at, deny_at) for at, op in enumerate(body)]
    program += [(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW), (BPF_RET_K, 0, 0, deny)]
    return b"".join(struct.pack("=HBBI", *op) for op in program)


_TO_ALLOW, _TO_DENY = -1, -2  # placeholders for the two return instructions


def _patch(
    at: int, op: tuple[int, int, int, int], allow_at: int, deny_at: int
) -> tuple[int, int, int, int]:
    code, jt, jf, k = op

    def target(jump: int) -> int:
        if jump >= 0:
            return jump
        return (allow_at if jump == _TO_ALLOW else deny_at) - at - 1

    return code, target(jt), target(jf), k
