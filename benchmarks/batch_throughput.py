"""`caretz batch` throughput: tasks a minute with N workers against the scripted server.

Each task is what a small real task looks like to caretz: a worktree of a generated
repository, a headless caretz (the sandbox, checkpoints, the session log), one sandboxed
command and an answer, the model answering at once (so the figures are caretz's own cost
a task: process start, worktree, session, command, result). For N = 1, 2, 4 it runs
--tasks tasks in a fresh repository and prints the wall time, tasks a minute, the speed-up
over N = 1 and the mean time a task took inside the batch.

    .venv/bin/python benchmarks/batch_throughput.py [--tasks 8] [--workers 1 2 4]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.modelserver import ModelServer, RecordedRequest, Reply, text, tool  # noqa: E402

GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b"}
GIT_ENV["GIT_COMMITTER_EMAIL"] = "b@b"


def answer(request: RecordedRequest) -> Reply:
    """A command first, then the answer once its result is back."""
    if len(request.messages) == 1:
        return tool("bash", command="echo done > result.txt && ls")
    return text("Wrote result.txt.")


def a_repository(folder: Path, files: int = 200) -> None:
    for number in range(files):
        path = folder / "src" / f"mod{number // 20}" / f"file{number}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {number}\n" * 20)
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "first"]):
        subprocess.run(["git", *args], cwd=folder, env=env, check=True)


def children_cpu() -> float:
    """CPU seconds of every finished descendant (the batch, its caretz runs, their commands)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_batch(
    scratch: Path, server: ModelServer, workers: int, tasks: int
) -> tuple[float, float, float]:
    """(wall seconds, mean seconds a task took, CPU seconds a task) of one batch in a
    fresh repository."""
    repo = scratch / f"repo-{workers}"
    repo.mkdir()
    a_repository(repo)
    tasks_path = scratch / f"tasks-{workers}.jsonl"
    lines = [{"id": f"t{n}", "prompt": f"task {n}"} for n in range(tasks)]
    tasks_path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    env = {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-bench",
        "ANTHROPIC_BASE_URL": server.url,
        "CARETZ_MODEL": "anthropic/claude-bench",
        "CARETZ_DATA_DIR": str(scratch / "data"),
        "CARETZ_CONFIG": str(scratch / "profiles.json"),
        "CARETZ_LOOP_GUARD": "active",
    }
    argv = [sys.executable, "-m", "caretz", "batch", str(tasks_path), "--workers", str(workers)]
    started, cpu = time.perf_counter(), children_cpu()
    done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - started, children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"the batch failed (exit {done.returncode}):\n{done.stderr}")
    results = tasks_path.with_name(tasks_path.stem + ".results.jsonl")
    durations = [json.loads(line)["duration_s"] for line in results.read_text().splitlines()]
    return wall, sum(durations) / len(durations), cpu / tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"{args.tasks} tasks a batch, {os.cpu_count()} cores, load average {load:.1f}")
    head = f"{'workers':>8} {'wall':>8} {'tasks/min':>10} {'speed-up':>9} {'a task':>8}"
    print(f"{head} {'CPU a task':>11}")
    with (
        tempfile.TemporaryDirectory(prefix="caretz-batch-bench-") as folder,
        ModelServer() as server,
    ):
        server.on(answer)
        first: float | None = None
        for workers in args.workers:
            wall, per_task, cpu = run_batch(Path(folder), server, workers, args.tasks)
            rate = args.tasks / wall * 60
            first = first or rate
            line = (
                f"{workers:>8} {wall:>7.1f}s {rate:>10.1f} {rate / first:>8.2f}x {per_task:>7.1f}s"
            )
            print(f"{line} {cpu:>10.2f}s")


if __name__ == "__main__":
    main()
