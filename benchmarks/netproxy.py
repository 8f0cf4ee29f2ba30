"""What the network allowlist's proxy costs.

Prints the median of: making a session's network namespace (the bubblewrap holder, which
every session with the network off pays at its first command) and then the proxy's
listening socket inside it (the nsenter'd script that hands it back: what the allowlist
adds, once per session), and, from the host, a small GET and a 20 MB download
from a loopback server, directly and through the proxy (plain HTTP and a CONNECT tunnel).

    .venv/bin/python benchmarks/netproxy.py [--runs 20]
"""

from __future__ import annotations

import argparse
import http.client
import shutil
import socket
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from caretz.sandbox.allowlist import build_allowlist  # noqa: E402
from caretz.sandbox.netgate import NetworkGate  # noqa: E402
from caretz.sandbox.netlisten import listener_inside, listener_on_host  # noqa: E402
from caretz.sandbox.netproxy import ProxyServer  # noqa: E402
from caretz.sandbox.runtime import SessionRuntime  # noqa: E402
from tests.sandbox.netservers import loopback_http  # noqa: E402

BIG = 20 * 1024 * 1024


def median_ms(runs: int, action: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def proxy_start(runs: int) -> tuple[float, float]:
    """(making the session's namespace, then the proxy's socket inside it), median ms."""
    bwrap, nsenter = shutil.which("bwrap"), shutil.which("nsenter")
    assert bwrap and nsenter, "bwrap and nsenter are needed"
    made, bridged = [], []
    for _ in range(runs):
        runtime = SessionRuntime()
        try:
            started = time.perf_counter()
            namespace = runtime.netns(bwrap)
            assert namespace is not None, runtime.net_problem
            middle = time.perf_counter()
            prefix = namespace.nsenter_argv(nsenter)
            listener_inside(prefix, sys.executable, namespace.fds).close()
            made.append((middle - started) * 1000)
            bridged.append((time.perf_counter() - middle) * 1000)
        finally:
            runtime.close()
    return statistics.median(made), statistics.median(bridged)


def get(port: int, path: str, proxy: int | None, tunnel: bool = False) -> int:
    host = "allowed.test" if proxy else "127.0.0.1"
    if proxy is None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    else:
        connection = http.client.HTTPConnection("127.0.0.1", proxy, timeout=30)
        if tunnel:
            connection.set_tunnel(host, port)
    target = path if proxy is None or tunnel else f"http://{host}:{port}{path}"
    connection.request("GET", target, headers={"Host": f"{host}:{port}"})
    size = len(connection.getresponse().read())
    connection.close()
    return size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    made, bridged = proxy_start(runs)
    print(f"the session's namespace: {made:.1f} ms; the proxy's socket inside it: {bridged:.1f} ms")
    allowlist = build_allowlist(["allowed.test"], {"allowed.test": "127.0.0.1"})
    proxy = ProxyServer(listener_on_host(), NetworkGate(allowlist)).start()
    with loopback_http() as upstream:
        upstream.files["/big"] = ("application/octet-stream", b"x" * BIG)
        for label, path in (("small GET", "/small"), ("20 MB GET", "/big")):
            direct = median_ms(runs, lambda p=path: get(upstream.port, p, None))
            plain = median_ms(runs, lambda p=path: get(upstream.port, p, proxy.port))
            tunnel = median_ms(runs, lambda p=path: get(upstream.port, p, proxy.port, True))
            print(
                f"{label}: direct {direct:.2f} ms, through the proxy {plain:.2f} ms, "
                f"through a CONNECT tunnel {tunnel:.2f} ms"
            )
    proxy.close()
    socket.setdefaulttimeout(None)


if __name__ == "__main__":
    main()
