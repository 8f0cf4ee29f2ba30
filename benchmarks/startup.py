"""Start-up time of the caretz command, side by side with its floor.

Prints median wall times over several runs of:
  floor                  python -c "import typer, rich.console"
  caretz --help
  caretz --version
  caretz -p (1st req)    from launch until the loopback model server receives the first request
  caretz -p, 1 MCP       the same with one stdio MCP server configured (mcp-server-time): it
                         imports the MCP SDK and waits for the server's tool list
and each one's ratio to the floor. Targets: --help within 1.5x the floor; the
first request of -p (no MCP server) within 0.6 s.

The loopback server speaks plain HTTP; against an https endpoint the first
request also waits for the CA bundle to load (about 50-80 ms here).

    .venv/bin/python benchmarks/startup.py [--runs 9]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.modelserver import ModelServer, RecordedRequest, Reply  # noqa: E402


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
    )
    return time.perf_counter() - started


def first_request_time(env: dict[str, str], server: ModelServer, arrived: list[float]) -> float:
    arrived.clear()
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "caretz", "-p", "hello", "--model", "anthropic/bench"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    process.wait(timeout=60)
    if not arrived:
        raise SystemExit("caretz -p never reached the model server")
    return arrived[0] - started


def mcp_config(scratch: Path) -> Path:
    """A profiles.json with one stdio MCP server: the reference mcp-server-time."""
    path = scratch / "mcp-profiles.json"
    server = {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
    path.write_text(json.dumps({"profiles": {"general": {"mcpServers": {"time": server}}}}))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    runs = parser.parse_args().runs
    # An installed package has its bytecode (pip compiles on install), as typer and rich
    # here do; an editable checkout under PYTHONDONTWRITEBYTECODE=1 would otherwise
    # recompile every caretz module on every start and measure that instead.
    compileall.compile_dir(ROOT / "caretz", quiet=1)
    scratch = Path(tempfile.mkdtemp(prefix="caretz-startup-"))
    arrived: list[float] = []
    lock = threading.Lock()

    def answer(request: RecordedRequest) -> Reply:
        with lock:
            arrived.append(time.perf_counter())
        return Reply(text="hi")

    with ModelServer() as server:
        server.on(answer)
        env = {
            **os.environ,
            "CARETZ_DATA_DIR": str(scratch / "data"),
            "CARETZ_CONFIG": str(scratch / "profiles.json"),
            "ANTHROPIC_API_KEY": "bench",
            "ANTHROPIC_BASE_URL": server.url,
        }
        with_mcp = {**env, "CARETZ_CONFIG": str(mcp_config(scratch))}
        caretz = [sys.executable, "-m", "caretz"]
        cases = {
            "floor (import typer, rich.console)": lambda: timed(
                [sys.executable, "-c", "import typer, rich.console"], env
            ),
            "caretz --help": lambda: timed([*caretz, "--help"], env),
            "caretz --version": lambda: timed([*caretz, "--version"], env),
            "caretz -p (to 1st request)": lambda: first_request_time(env, server, arrived),
            "caretz -p, 1 stdio MCP server": lambda: first_request_time(with_mcp, server, arrived),
        }
        medians = {}
        for _ in range(runs):  # interleave the cases so machine noise hits them alike
            for name, case in cases.items():
                medians.setdefault(name, []).append(case())
    floor = statistics.median(medians["floor (import typer, rich.console)"])
    print(f"{'case':<38} {'median':>9} {'vs floor':>9}   ({runs} runs each, bytecode compiled)")
    for name, times in medians.items():
        median = statistics.median(times)
        print(f"{name:<38} {median * 1000:8.0f}ms {median / floor:8.2f}x")
    help_ratio = statistics.median(medians["caretz --help"]) / floor
    first = statistics.median(medians["caretz -p (to 1st request)"])
    print(
        f"\n--help within 1.5x the floor: {'yes' if help_ratio <= 1.5 else 'NO'} ({help_ratio:.2f}x)"
    )
    print(f"-p first request within 0.6 s: {'yes' if first <= 0.6 else 'NO'} ({first:.3f}s)")
    mcp = statistics.median(medians["caretz -p, 1 stdio MCP server"])
    print(f"one stdio MCP server adds {mcp - first:.3f}s before the first request")


if __name__ == "__main__":
    main()
