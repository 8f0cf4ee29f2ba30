"""caretz's side of the proxy's listening socket: inside the session's network namespace
(sandbox/netbridge.py, started with the trusted nsenter and interpreter), or on the host's
loopback under Landlock."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

SCRIPT = str(Path(__file__).with_name("netbridge.py"))
BACKLOG = 128
TIMEOUT_S = 10.0


def listener_inside(
    prefix: list[str], python: str, pass_fds: tuple[int, ...] = ()
) -> socket.socket:
    """A listening socket on 127.0.0.1 of the namespace `prefix` enters (the nsenter
    command line, whose fds are `pass_fds`). Raises OSError with the first line the
    script or nsenter printed when it cannot be made."""
    mine, theirs = socket.socketpair()
    try:
        argv = [*prefix, python, "-I", "-S", SCRIPT, str(theirs.fileno())]
        done = subprocess.run(
            argv,
            pass_fds=(*pass_fds, theirs.fileno()),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=TIMEOUT_S,
            check=False,
        )
        theirs.close()  # so that a script that failed is an end of file, not a wait
        mine.settimeout(TIMEOUT_S)
        _, fds, _, _ = socket.recv_fds(mine, 64, 1)
    finally:
        mine.close()
        theirs.close()
    if done.returncode != 0 or len(fds) != 1:
        for fd in fds:
            os.close(fd)
        problem = done.stderr.decode(errors="replace").strip().splitlines()
        raise OSError(problem[-1] if problem else f"exited with status {done.returncode}")
    return socket.socket(fileno=fds[0])


def listener_on_host() -> socket.socket:
    """The Landlock fallback's: commands share the host's network, so the proxy listens on
    the host's loopback (and the launcher lets commands connect to its port only)."""
    return socket.create_server(("127.0.0.1", 0), backlog=BACKLOG)
