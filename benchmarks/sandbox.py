"""What the command sandbox adds to each command's wall time.

Prints the median wall time of a few commands started directly, under bubblewrap, under
the Landlock launcher and with the sandbox off (`bwrap-ns`: bubblewrap making a network
namespace per command instead of joining the session's) (the launcher without rules, which only
cleans up what a command leaves behind), each with the ratio to the direct run and the
milliseconds added. Each sandboxed run includes building its command line from the policy, as the
bash tool does per command, and, with the network off, joining the session's network
namespace (nsenter) and loading the seccomp filter; the launcher runs on the interpreter a
session picks (the real binary behind caretz's own, caretz/trusted.py). Also printed: what a
session pays once at its start to find the programs it runs, and after every tool call for
the git watch (sandbox/gitwatch.py) in a small repository. Goal: at most 15 ms added.
Last, the bash tool's own `true` (its command started, waited for and read, the way a
session runs it) beside bubblewrap alone running `bash -c true`: goal at most 1.5x.

Then what the sandbox adds to a hook and to a search, which run in it too: a hook
(`hooks/runner.py`'s `run_command`, its event as JSON on stdin, `true` as the command)
against the way hooks ran before, `bash -c` started directly; and a search (ripgrep as
grep runs it, `tools/ripgrep.py`'s `run_rg`, over caretz's own source) started directly
(as with the sandbox off) against inside each sandbox. Goal: at most 15 ms per hook on
bubblewrap.

    .venv/bin/python benchmarks/sandbox.py [--runs 40] [--cwd DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
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

from caretz.hooks.runner import HookEnvironment, run_command  # noqa: E402
from caretz.sandbox.detect import BwrapProbe, SandboxBackend, SandboxCheck, check_sandbox  # noqa: E402
from caretz.sandbox.gitwatch import GitWatch  # noqa: E402
from caretz.sandbox.policy import (  # noqa: E402
    SandboxMode,
    SandboxPolicy,
    build_policy,
    home_from_env,
)
from caretz.sandbox.runner import Launch, Sandbox, open_sandbox  # noqa: E402
from caretz.sandbox.runtime import SessionRuntime, sessions_parent  # noqa: E402
from caretz.tools.base import ToolContext  # noqa: E402
from caretz.tools.bash import BashTool  # noqa: E402
from caretz.tools.ripgrep import rg_path, run_rg  # noqa: E402
from caretz.trusted import launcher_python, resolve_programs, untrusted_roots  # noqa: E402

COMMANDS = {
    "true": ["true"],
    # The interpreter itself: a `python3` on PATH may be a shim script (pyenv) that is slower
    # than the sandbox and varies more.
    "python3 -c pass": [sys.executable, "-c", "pass"],
    "bash -c true": ["bash", "-c", "true"],
}


def timed(start: Callable[[], Launch], cwd: Path) -> float:
    began = time.perf_counter()
    launch = start()
    try:
        subprocess.run(
            launch.argv,
            cwd=cwd,
            env=launch.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            check=True,
            pass_fds=launch.pass_fds,
        )
    finally:
        launch.close()
    return time.perf_counter() - began


DATA_DIR = Path(tempfile.mkdtemp(prefix="caretz-bench-data-", dir="/var/tmp"))


def session_sandbox(policy: SandboxPolicy, check: SandboxCheck) -> Sandbox:
    """As a session opens it: its directory under caretz's (hidden) data dir."""
    return open_sandbox(policy, check, runtime=SessionRuntime(sessions_parent(DATA_DIR)))


def sandboxes(cwd: Path) -> dict[str, Sandbox | None]:
    env = dict(os.environ)
    policy = build_policy(cwd=cwd, home=home_from_env(env), caretz_dirs=[DATA_DIR])
    found: dict[str, Sandbox | None] = {"direct": None}
    python = launcher_python(env.get("PATH", ""), untrusted_roots([cwd])).path
    check = check_sandbox(policy.mode, policy.network)
    if check.backend is SandboxBackend.BWRAP:
        found["bwrap"] = session_sandbox(policy, check)
        # The same without joining the session's namespace: a namespace per command.
        found["bwrap-ns"] = dataclasses.replace(found["bwrap"], nsenter_path=None)
    fallback = check_sandbox(policy.mode, bwrap=BwrapProbe(None, False, "skipped"))
    if fallback.backend is SandboxBackend.LANDLOCK:
        found["landlock"] = dataclasses.replace(session_sandbox(policy, fallback), python=python)
    off = build_policy(cwd=cwd, home=home_from_env(env), mode=SandboxMode.OFF)
    found["off"] = dataclasses.replace(open_sandbox(off, check_sandbox(off.mode)), python=python)
    return found


def measure(runs: int, cwd: Path) -> dict[str, dict[str, float]]:
    env = dict(os.environ)
    chosen = sandboxes(cwd)
    medians: dict[str, dict[str, float]] = {}
    for label, argv in COMMANDS.items():
        samples: dict[str, list[float]] = {name: [] for name in chosen}
        for _ in range(runs):  # interleaved, so drift in machine load hits all alike
            for name, sandbox in chosen.items():
                if sandbox is None:
                    direct = Launch(argv=list(argv), env=env, cwd=cwd)
                    samples[name].append(timed(lambda launch=direct: launch, cwd))
                    continue
                samples[name].append(
                    timed(lambda s=sandbox, a=argv: s.launch(a, env), sandbox.policy.cwd)
                )
        medians[label] = {name: statistics.median(values) for name, values in samples.items()}
    return medians


def build_times(cwd: Path, repeats: int = 200) -> dict[str, float]:
    """Milliseconds to build one command line from the policy (part of the figures above)."""
    times: dict[str, float] = {}
    for name, sandbox in sandboxes(cwd).items():
        if sandbox is None:
            continue
        began = time.perf_counter()
        for _ in range(repeats):
            sandbox.command(["true"])
        times[name] = (time.perf_counter() - began) / repeats * 1000
    return times


def per_session_ms(cwd: Path, repeats: int = 20) -> float:
    """Finding bwrap, git and the launcher's interpreter, once at a session's start."""
    began = time.perf_counter()
    for _ in range(repeats):
        resolve_programs(os.environ.get("PATH", ""), [cwd])
    return (time.perf_counter() - began) / repeats * 1000


def git_watch_ms(repeats: int = 200) -> dict[str, float]:
    """The git watch's check after a tool call that changed nothing, in a fresh repository."""
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "repo"
        root.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        git = resolve_programs(os.environ.get("PATH", ""), [root]).git.path
        for name, full in (("bwrap", False), ("landlock", True)):
            watch = GitWatch([root], Path(folder) / "quarantine", git=git, full=full)
            watch.start()
            began = time.perf_counter()
            for _ in range(repeats):
                watch.check()
            times[name] = (time.perf_counter() - began) / repeats * 1000
    return times


def bash_tool_ms(runs: int, cwd: Path) -> dict[str, tuple[float, float]]:
    """Median ms of the bash tool running `true`, beside its sandbox's launch of `bash -c
    true` alone, per sandbox (interleaved)."""
    env = dict(os.environ)
    found: dict[str, tuple[float, float]] = {}
    tool = BashTool()
    for name, sandbox in sandboxes(cwd).items():
        if name == "bwrap-ns":
            continue
        ctx = ToolContext(workspace=cwd, sandbox=sandbox)
        through_tool: list[float] = []
        alone: list[float] = []
        for _ in range(runs):
            began = time.perf_counter()
            result = tool.run({"command": "true"}, ctx)
            through_tool.append(time.perf_counter() - began)
            assert result.ok, result.output
            if sandbox is None:  # no sandbox at all: `bash -c true` itself
                direct = Launch(argv=["bash", "-c", "true"], env=env, cwd=cwd)
                alone.append(timed(lambda launch=direct: launch, cwd))
                continue
            launch = lambda s=sandbox: s.launch(["bash", "-c", "true"], env)  # noqa: E731
            alone.append(timed(launch, sandbox.policy.cwd))
        found[name] = (statistics.median(through_tool) * 1000, statistics.median(alone) * 1000)
    return found


HOOK_PAYLOAD = {"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_input": {}}
RG_ARGS = ["--line-number", "--no-heading", "-e", "def run"]


def hook_before(env: dict[str, str], cwd: Path) -> float:
    """A hook as it ran before: `bash -c` started directly, the event on stdin."""
    began = time.perf_counter()
    process = subprocess.Popen(
        ["bash", "-c", "true"],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    process.communicate(json.dumps(HOOK_PAYLOAD).encode(), timeout=30)
    return time.perf_counter() - began


def hook_now(sandbox: Sandbox, env: dict[str, str], cwd: Path) -> float:
    began = time.perf_counter()
    ran = run_command("true", HOOK_PAYLOAD, HookEnvironment(cwd, env, sandbox), 30)
    assert ran.exit_code == 0, ran.stderr
    return time.perf_counter() - began


def search(sandbox: Sandbox | None, tree: Path) -> float:
    began = time.perf_counter()
    ran = run_rg(
        [*RG_ARGS, "--", "."], tree, timeout_s=30, cancel=threading.Event(), sandbox=sandbox
    )
    assert ran.returncode == 0 and ran.stdout, ran.stderr
    return time.perf_counter() - began


def hooks_and_searches(runs: int, cwd: Path) -> dict[str, dict[str, float]]:
    """Median seconds of a hook and of a search, directly and in each sandbox."""
    env = dict(os.environ)
    bash = resolve_programs(env.get("PATH", ""), [cwd]).bash.path
    chosen = {
        name: dataclasses.replace(sandbox, bash_path=bash)
        for name, sandbox in sandboxes(cwd).items()
        if sandbox is not None and name != "bwrap-ns"
    }
    tree = ROOT / "caretz"
    rg_path()  # found once, as a session finds it at its first search
    samples: dict[str, dict[str, list[float]]] = {
        "hook": {name: [] for name in ["direct", *chosen]},
        "search (rg)": {name: [] for name in ["direct", *chosen]},
    }
    for _ in range(runs):
        samples["hook"]["direct"].append(hook_before(env, cwd))
        samples["search (rg)"]["direct"].append(search(None, tree))
        for name, sandbox in chosen.items():
            samples["hook"][name].append(hook_now(sandbox, env, cwd))
            # With the sandbox off a search runs directly: "off" is the same as "direct".
            searched = sandbox if sandbox.enforced else None
            samples["search (rg)"][name].append(search(searched, tree))
    return {
        label: {name: statistics.median(values) for name, values in by_way.items()}
        for label, by_way in samples.items()
    }


def report(medians: dict[str, dict[str, float]], first: str = "command") -> str:
    lines = [f"{first:<18}{'backend':<10}{'median ms':>10}{'ratio':>8}{'added ms':>10}"]
    for label, by_backend in medians.items():
        direct = by_backend["direct"]
        for name, value in by_backend.items():
            ratio = value / direct
            added = (value - direct) * 1000
            lines.append(f"{label:<18}{name:<10}{value * 1000:>10.1f}{ratio:>8.2f}{added:>10.1f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--cwd", type=Path, default=ROOT, help="the working directory (a root)")
    args = parser.parse_args()
    cwd = args.cwd.resolve()
    try:
        print(report(measure(args.runs, cwd)))
        built = ", ".join(f"{name} {ms:.2f} ms" for name, ms in build_times(cwd).items())
        print(f"building the command line (included above): {built}")
        print(f"finding the trusted programs, once per session: {per_session_ms(cwd):.2f} ms")
        watched = ", ".join(f"{name} {ms:.2f} ms" for name, ms in git_watch_ms().items())
        print(f"the git watch after each tool call (not included above): {watched}")
        print("goal: at most 15 ms added per command")
        print()
        print(report(hooks_and_searches(args.runs, cwd), "what"))
        print("goal: at most 15 ms added per hook on bubblewrap")
        print()
        for name, (tool_ms, alone_ms) in bash_tool_ms(args.runs, cwd).items():
            ratio = tool_ms / alone_ms
            print(
                f"bash tool `true`, {name}: {tool_ms:.1f} ms; its launch of `bash -c true` "
                f"alone {alone_ms:.1f} ms; ratio {ratio:.2f} (goal at most 1.5)"
            )
    finally:
        shutil.rmtree(DATA_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()
