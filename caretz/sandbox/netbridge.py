"""The proxy's listening socket, made inside the session's network namespace.

Commands reach caretz's proxy on 127.0.0.1:PORT of their own network namespace, which
has nothing but its loopback. caretz cannot make a socket there itself (joining a
namespace, and the user namespace that owns it, takes a single-threaded process), so it
starts this script for a moment with the trusted nsenter and interpreter:

    nsenter --net=/proc/self/fd/N [--user=… --preserve-credentials] -- python -I -S netbridge.py FD

It binds a TCP socket to 127.0.0.1 on a port the kernel picks, listens, hands the
listening socket back over FD (one end of a socketpair caretz made; SCM_RIGHTS) and
exits. caretz's proxy thread then accepts on it: a socket stays in the namespace it was
made in, whoever holds it, so no process stays behind in the namespace, no Unix socket
is bound anywhere a command could see, and nothing copies bytes between a bridge and
the proxy. Commands keep their seccomp filter (no Unix sockets) and their namespace;
the script runs outside both, as caretz's own code. SO_REUSEPORT is never set, so no
command can bind the same port to take the proxy's connections.

Standard library only: it runs as a script, like the Landlock launcher.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

SCRIPT = Path(__file__)
BACKLOG = 128
TIMEOUT_S = 10.0


def main(args: list[str]) -> int:
    """In the namespace: make the listening socket and hand it over the inherited fd."""
    if len(args) != 1 or not args[0].isdigit():
        os.write(2, b"usage: netbridge.py FD\n")
        return 2
    channel = socket.socket(fileno=int(args[0]))
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(BACKLOG)
    socket.send_fds(channel, [b"listening"], [listener.fileno()])
    return 0


def listener_inside(
    prefix: Sequence[str], python: str, pass_fds: Sequence[int] = ()
) -> socket.socket:
    """A listening socket on 127.0.0.1 of the namespace `prefix` enters (the nsenter
    command line, whose fds are `pass_fds`). Raises OSError with the first line the
    script or nsenter printed when it cannot be made."""
    mine, theirs = socket.socketpair()
    try:
        argv = [*prefix, python, "-I", "-S", str(SCRIPT), str(theirs.fileno())]
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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
