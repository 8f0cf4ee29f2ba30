"""Start-up time of the caretz command, side by side with its floor.

Prints median wall times over several interleaved runs of:
  floor                  python -c "import typer, rich.console"
  caretz --help
  caretz --version
  caretz -p (1st req)    from launch until the loopback model server receives the first request
and each one's ratio to the floor; then, measured after those, the same `-p` with one stdio
MCP server configured (mcp-server-time: `-p` does not wait for it; its process starts, and
caretz imports the MCP SDK on a thread of its own while the session starts), and what that
server adds before the first request (goal: at most 0.3 s), against `-p` with a settings
file that names no server (a settings file is read and checked with pydantic, server or
not; the line also gives the figure against no file). Then it checks which modules
`-p` imports before its first request against
the recorded budget (tests/data/import_budget.txt; tests/test_import_budget.py checks the
same). Targets: --help and --version within 1.5x the floor; the first request of -p (no
MCP server) within 2.2x the floor and within 0.6 s.

Every case runs in a scratch git repository, against one loopback server speaking plain
HTTP; against an https endpoint the first request also waits for TLS (the CA bundle,
the handshake). The machine's load average is printed before and after: the ratios mean
something on a quiet machine.

    .venv/bin/python benchmarks/startup.py [--runs 7] [--write-budget]

With `--against NAME=DIR` (repeatable) it times only `-p` to its first request, this
tree's against each DIR's copy of the `caretz` package (put first on PYTHONPATH, same
interpreter and packages), interleaved, and prints each one's median and its ratio to
this tree's: how to tell what one change to start-up buys.

    .venv/bin/python benchmarks/startup.py --runs 25 --against plain=/tmp/plain
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
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.importtime import (  # noqa: E402
    BUDGET,
    budget_entries,
    floor_modules,
    modules_before_first_request,
    outside_budget,
    read_budget,
)
from tests.modelserver import ModelServer, RecordedRequest, Reply  # noqa: E402

FLOOR = "floor (import typer, rich.console)"
FIRST_REQUEST = "caretz -p (to 1st request)"
WITH_FILE = "caretz -p, profiles.json, no server"
WITH_MCP = "caretz -p, the same with 1 stdio MCP server"
TARGET_RATIO = 2.2
TARGET_S = 0.6
TARGET_MCP_S = 0.3  # what one stdio MCP server may add before the first request


def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
    )
    return time.perf_counter() - started


def first_request_time(
    env: dict[str, str], cwd: Path, arrived: list[float], cpu: list[float] | None = None
) -> float:
    """Launch to the loopback server's first request; the run's CPU time (user and system,
    to its end) goes to `cpu` when given: a figure a busy machine moves less than the wall
    time."""
    arrived.clear()
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "caretz", "-p", "hello", "--model", "anthropic/bench"],
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0  # reaped above
    if not arrived:
        raise SystemExit("caretz -p never reached the model server")
    if cpu is not None:
        cpu.append(usage.ru_utime + usage.ru_stime)
    return arrived[0] - started


def mcp_config(scratch: Path, servers: int = 1) -> Path:
    """A profiles.json with one stdio MCP server (the reference mcp-server-time), or none:
    a settings file is read and checked with pydantic, server or not."""
    path = scratch / f"profiles-{servers}-mcp.json"
    server = {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
    general = {"mcpServers": {"time": server} if servers else {}}
    path.write_text(json.dumps({"profiles": {"general": general}}))
    return path


def project(scratch: Path) -> Path:
    """A git repository with one commit, as a project caretz runs in."""
    folder = scratch / "project"
    folder.mkdir()
    (folder / "README.md").write_text("# demo\n")
    git = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com"}
    env = {**os.environ, **git, "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        subprocess.run(["git", *command], cwd=folder, env=env, check=True)
    return folder


def medians(cases: dict[str, Callable[[], float]], runs: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):  # interleaved, so machine noise hits every case alike
        for name, case in cases.items():
            times[name].append(case())
    return {name: statistics.median(values) for name, values in times.items()}


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} ({os.cpu_count()} CPUs)"


def check_budget(env: dict[str, str], cwd: Path, server: ModelServer, write: bool) -> bool:
    """The modules -p imports before its first request, against the recorded budget."""
    modules = modules_before_first_request(server, cwd, env, "--model", "anthropic/bench")
    floor = floor_modules(cwd, env)
    if write:
        BUDGET.write_text(BUDGET_HEADER + "\n".join(budget_entries(modules, floor)) + "\n")
        print(f"\nimport budget written: {BUDGET.relative_to(ROOT)}")
        return True
    outside = outside_budget(modules, read_budget(), floor)
    caretz = [name for name in modules if name.startswith("caretz")]
    print(
        f"\nimports before the first request: {len(modules)} modules "
        f"({len(set(modules) - floor)} beyond the floor, {len(caretz)} of caretz)"
    )
    if outside:
        print(f"import budget: NO, outside it: {', '.join(outside)}")
        return False
    print(f"import budget: yes ({BUDGET.relative_to(ROOT)})")
    return True


BUDGET_HEADER = """\
# What `caretz -p` may import before its first model request, besides what the floor
# (`import typer, rich.console`) imports: caretz's modules by name, any other by its
# top-level package. Checked by tests/test_import_budget.py and benchmarks/startup.py;
# `benchmarks/startup.py --write-budget` records the current list. A module that needs
# a place here should be one the first request cannot do without (docs/architecture.md,
# "Lazy imports").
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--write-budget", action="store_true", help="record the import budget")
    parser.add_argument(
        "--against",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="time -p's first request against DIR's copy of the caretz package",
    )
    options = parser.parse_args()
    copies = dict(each.split("=", 1) for each in options.against)
    # An installed package has its bytecode (pip compiles on install), as typer and rich
    # here do; an editable checkout under PYTHONDONTWRITEBYTECODE=1 would otherwise
    # recompile every caretz module on every start and measure that instead.
    for folder in (ROOT, *map(Path, copies.values())):
        compileall.compile_dir(folder / "caretz", quiet=1)
    if copies:
        compare(copies, options.runs)
        return
    scratch = Path(tempfile.mkdtemp(prefix="caretz-startup-"))
    workspace = project(scratch)
    arrived: list[float] = []
    lock = threading.Lock()

    def answer(request: RecordedRequest) -> Reply:
        with lock:
            arrived.append(time.perf_counter())
        return Reply(text="hi")

    print(f"before: {load()}")
    with ModelServer() as server:
        env = {
            **os.environ,
            "CARETZ_DATA_DIR": str(scratch / "data"),
            "CARETZ_CONFIG": str(scratch / "profiles.json"),
            "ANTHROPIC_API_KEY": "bench",
            "ANTHROPIC_BASE_URL": server.url,
        }
        server.on(answer)
        caretz = [sys.executable, "-m", "caretz"]
        floor_case = [sys.executable, "-c", "import typer, rich.console"]
        with_mcp = {**env, "CARETZ_CONFIG": str(mcp_config(scratch))}
        with_file = {**env, "CARETZ_CONFIG": str(mcp_config(scratch, servers=0))}
        results = medians(
            {
                FLOOR: lambda: timed(floor_case, env, workspace),
                "caretz --help": lambda: timed([*caretz, "--help"], env, workspace),
                "caretz --version": lambda: timed([*caretz, "--version"], env, workspace),
                FIRST_REQUEST: lambda: first_request_time(env, workspace, arrived),
                # Interleaved with the cases without a server, so load hits them alike.
                WITH_FILE: lambda: first_request_time(with_file, workspace, arrived),
                WITH_MCP: lambda: first_request_time(with_mcp, workspace, arrived),
            },
            options.runs,
        )
        with ModelServer() as alone:  # a server whose one reply is the end of the run
            budget_env = {**env, "ANTHROPIC_BASE_URL": alone.url}
            within_budget = check_budget(budget_env, workspace, alone, options.write_budget)
    print(f"after: {load()}\n")
    report(results, options.runs)
    if not within_budget:
        sys.exit(1)


def compare(copies: dict[str, str], runs: int) -> None:
    """`-p` to its first request, this tree's against each copy's, interleaved."""
    scratch = Path(tempfile.mkdtemp(prefix="caretz-startup-"))
    workspace = project(scratch)
    arrived: list[float] = []
    print(f"before: {load()}")
    with ModelServer() as server:

        def answer(request: RecordedRequest) -> Reply:
            arrived.append(time.perf_counter())
            return Reply(text="hi")

        server.on(answer)
        env = {
            **os.environ,
            "CARETZ_DATA_DIR": str(scratch / "data"),
            "CARETZ_CONFIG": str(scratch / "profiles.json"),
            "ANTHROPIC_API_KEY": "bench",
            "ANTHROPIC_BASE_URL": server.url,
        }
        envs = {"this tree": env}
        for name, folder in copies.items():
            envs[name] = {**env, "PYTHONPATH": str(Path(folder).resolve())}
        cpu: dict[str, list[float]] = {name: [] for name in envs}
        results = medians(
            {
                name: lambda name=name, each=each: first_request_time(
                    each, workspace, arrived, cpu[name]
                )
                for name, each in envs.items()
            },
            runs,
        )
    print(f"after: {load()}\n")
    mine, my_cpu = results["this tree"], statistics.median(cpu["this tree"])
    print(f"{'':<20} {'-p to its 1st request':>20} {'CPU time of the run':>26}   ({runs} runs)")
    for name, median in results.items():
        used = statistics.median(cpu[name])
        print(
            f"{name:<20} {median * 1000:10.0f}ms {median / mine:7.2f}x"
            f" {used * 1000:16.0f}ms {used / my_cpu:7.2f}x"
        )


def report(results: dict[str, float], runs: int) -> None:
    floor = results[FLOOR]
    print(f"{'case':<44} {'median':>9} {'vs floor':>9}   ({runs} runs each, bytecode compiled)")
    for name, median in results.items():
        print(f"{name:<44} {median * 1000:8.0f}ms {median / floor:8.2f}x")
    print()
    first, mcp = results[FIRST_REQUEST], results[WITH_MCP]
    for name in ("caretz --help", "caretz --version"):
        ratio = results[name] / floor
        print(f"{name[7:]} within 1.5x the floor: {'yes' if ratio <= 1.5 else 'NO'} ({ratio:.2f}x)")
    ratio = first / floor
    within = "yes" if ratio <= TARGET_RATIO else "NO"
    print(f"-p first request within {TARGET_RATIO}x the floor: {within} ({ratio:.2f}x)")
    print(
        f"-p first request within {TARGET_S} s: {'yes' if first <= TARGET_S else 'NO'} ({first:.3f}s)"
    )
    added = mcp - results[WITH_FILE]
    within = "yes" if added <= TARGET_MCP_S else "NO"
    print(
        f"one stdio MCP server adds at most {TARGET_MCP_S} s before the first request: "
        f"{within} ({added:.3f}s; {mcp - first:.3f}s with reading a settings file)"
    )


if __name__ == "__main__":
    main()
