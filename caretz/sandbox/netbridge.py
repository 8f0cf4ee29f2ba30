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

Standard library only: it runs as a script, like the Landlock launcher. caretz's side,
starting it and taking the socket: sandbox/netlisten.py.
"""

from __future__ import annotations

# The script's own start is paid once per session, by its first command: the C socket
# module only (`socket` imports selectors and collections, several ms on a busy machine).
import _socket
import os
import sys

BACKLOG = 128


def main(args: list[str]) -> int:
    """In the namespace: make the listening socket and hand it over the inherited fd."""
    if len(args) != 1 or not (args[0].isascii() and args[0].isdigit()):
        os.write(2, b"usage: netbridge.py FD\n")
        return 2
    channel = _socket.socket(fileno=int(args[0]))
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(BACKLOG)
    rights = listener.fileno().to_bytes(4, sys.byteorder)  # one int: the fd to hand over
    channel.sendmsg([b"listening"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
