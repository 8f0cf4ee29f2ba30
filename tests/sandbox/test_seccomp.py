"""The command filter, loaded for real by bubblewrap (`--seccomp FD`) and by the Landlock
launcher: no new Unix sockets, no io_uring, no limits set on another process; socketpair,
TCP inside the session and a process's own limits still work."""

from __future__ import annotations

import pytest

from caretz.sandbox.seccomp import (
    SeccompUnsupported,
    command_filter,
    native_arch,
    unix_socket_filter,
)
from tests.sandbox.helpers import run_in

PROBE = """
import ctypes, os, resource, socket
def attempt(name, action):
    try:
        action()
        print(name, "ok")
    except OSError as error:
        print(name, error.errno)
attempt("unix", lambda: socket.socket(socket.AF_UNIX))
attempt("abstract", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM))
attempt("pair", lambda: socket.socketpair())
attempt("tcp", lambda: socket.socket().bind(("127.0.0.1", 0)))
libc = ctypes.CDLL(None, use_errno=True)
def uring():
    if libc.syscall(425, 1, ctypes.create_string_buffer(120)) < 0:
        raise OSError(ctypes.get_errno(), "io_uring_setup")
attempt("io_uring", uring)
attempt("own limit", lambda: resource.prlimit(0, resource.RLIMIT_NOFILE, (64, 64)))
attempt("parent limit", lambda: resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, (8, 8)))
attempt("read parent limit", lambda: resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE))
"""


def results(output: str) -> dict[str, str]:
    return dict(line.rsplit(" ", 1) for line in output.splitlines())


def test_under_bubblewrap(make_policy, bwrap_sandbox):
    found = results(run_in(bwrap_sandbox(make_policy()), f"python3 -c '{PROBE}'").stdout)
    assert found["unix"] == found["abstract"] == found["io_uring"] == "13"  # EACCES
    assert found["pair"] == found["tcp"] == found["own limit"] == "ok"
    assert found["parent limit"] == "1" and found["read parent limit"] == "ok"  # EPERM


def test_under_landlock(make_policy, landlock_sandbox):
    found = results(run_in(landlock_sandbox(make_policy()), f"python3 -c '{PROBE}'").stdout)
    assert found["unix"] == found["abstract"] == found["io_uring"] == "13"
    assert found["pair"] == found["own limit"] == "ok"
    assert found["parent limit"] == "1"  # the launcher's limits are out of reach


def test_with_the_network_on_landlock_keeps_only_the_limit_rule(make_policy, landlock_sandbox):
    found = results(
        run_in(landlock_sandbox(make_policy(network=True)), f"python3 -c '{PROBE}'").stdout
    )
    assert found["unix"] == "ok" and found["parent limit"] == "1"


def test_the_program_and_its_arches():
    assert len(unix_socket_filter("x86_64")) % 8 == 0
    assert command_filter(unix_sockets=True, machine="aarch64") != unix_socket_filter("aarch64")
    assert native_arch("amd64").socket == 41 and native_arch("arm64").socket == 198
    with pytest.raises(SeccompUnsupported, match="riscv64"):
        unix_socket_filter("riscv64")
