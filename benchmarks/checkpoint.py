"""Time and disk of checkpoints on a generated 10,000-file project.

Prints wall and CPU times (CPU of caretz and its git children, which a busy machine
does not inflate; median of --runs fresh stores for the first checkpoint, median of
five for each later kind) and the shadow repository's disk use:
  first checkpoint         an empty shadow repository, every file hashed
  later, nothing changed   the shadow index's stat data says nothing changed
  later, 10 files edited   a typical turn's worth of edits
  later, 1 file added
  settle                   the state after a turn (same work as a later checkpoint)
  restore 10 files         a rewind of one turn, its own rewind checkpoint included
  a turn, through the hook the session's checkpoint (TurnCheckpoints) before a turn's
                           first change plus its settled state at Turn.Ended, 10 files edited
Targets: first under 2 s, later ones under 200 ms.

    .venv/bin/python benchmarks/checkpoint.py [--files 10000] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from caretz.agent.checkpointing import TurnCheckpoints  # noqa: E402
from caretz.checkpoints import CheckpointMeta, CheckpointStore  # noqa: E402
from caretz.messages import ToolCall  # noqa: E402
from caretz.session.events import EventLog  # noqa: E402
from caretz.session.records.loop import TurnEnded, TurnStarted  # noqa: E402
from caretz.tools.base import ToolContext  # noqa: E402


def generate(project: Path, files: int, seed: int = 7) -> int:
    """A source-like tree: 20 files a folder, 50 folders a package, 0.1-4 KB each."""
    rng = random.Random(seed)
    total = 0
    for number in range(files):
        folder = project / "src" / f"pkg{number // 1000}" / f"mod{number // 20}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = rng.randint(3, 100)
        text = "".join(f"value_{i} = {rng.random()!r}\n" for i in range(lines))
        (folder / f"file{number}.py").write_text(text)
        total += len(text)
    (project / ".gitignore").write_text("*.pyc\n__pycache__/\n")
    return total


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (git), user and system."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(action: Callable[[], object], cpu: list[float] | None = None) -> float:
    """Wall time of `action`; its CPU time is appended to `cpu` (the machine may be busy)."""
    started, cpu_started = time.perf_counter(), cpu_seconds()
    action()
    if cpu is not None:
        cpu.append(cpu_seconds() - cpu_started)
    return time.perf_counter() - started


def edit(project: Path, count: int, round_number: int) -> None:
    paths = sorted((project / "src" / "pkg0").rglob("*.py"))[:count]
    for path in paths:
        path.write_text(path.read_text() + f"edited = {round_number}\n")


def human(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


def row(name: str, wall: list[float], cpu: list[float], goal: str) -> None:
    median_wall, median_cpu = statistics.median(wall) * 1000, statistics.median(cpu) * 1000
    print(f"{name:<26}{median_wall:8.0f} ms {median_cpu:8.0f} ms   ({goal})")


def turn_through_hook(
    store: CheckpointStore, project: Path, scratch: Path, wall: list[float], cpu: list[float]
) -> None:
    """Five turns as a session runs them (the hook on the tool registry and on the log):
    the checkpoint before the first change plus the settled state at the turn's end."""
    log = EventLog(scratch / "session" / "events.jsonl")
    hook = TurnCheckpoints(store)
    hook.attach("bench-hook", log)
    write, ctx = ToolCall("call_1", "write", {"path": "x", "content": ""}), ToolContext(project)
    for turn in range(1, 6):
        log.emit(TurnStarted(turn=turn, agent="main", prompt="p"))
        spent: list[float] = []
        took = timed(lambda: hook.before_call(write, ctx), spent)
        edit(project, 10, 100 + turn)  # the turn's own work, not counted
        took += timed(lambda t=turn: log.emit(TurnEnded(turn=t, agent="main")), spent)
        wall.append(took)
        cpu.append(sum(spent))
    log.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="caretz-ckpt-bench-") as scratch:
        project = Path(scratch) / "project"
        content = generate(project, args.files)
        firsts: list[float] = []
        first_cpu: list[float] = []
        for run in range(args.runs):
            data = Path(scratch) / f"data{run}"
            store = CheckpointStore.open(data, project)
            first = timed(lambda s=store: s.checkpoint(CheckpointMeta("bench", 1, "p")), first_cpu)
            firsts.append(first)
            if run < args.runs - 1:
                shutil.rmtree(data)
        first_disk = store.disk_usage()

        names = ["later, nothing changed", "later, 10 files edited", "later, 1 file added"]
        names += ["settle", "a turn, through the hook"]
        figures: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n in names}

        def measure(name: str, action: Callable[[], object]) -> None:
            wall, cpu = figures[name]
            wall.append(timed(action, cpu))

        for turn in range(2, 2 + 5):
            meta = CheckpointMeta("bench", turn, "p")
            measure("later, nothing changed", lambda m=meta: store.checkpoint(m))
            edit(project, 10, turn)
            measure("later, 10 files edited", lambda m=meta: store.checkpoint(m))
            (project / f"added{turn}.txt").write_text("new\n")
            measure("later, 1 file added", lambda m=meta: store.checkpoint(m))
            measure("settle", lambda m=meta: store.settle(m))
        turn_through_hook(store, project, Path(scratch), *figures["a turn, through the hook"])
        target = store.checkpoint(CheckpointMeta("bench", 10, "p"))
        edit(project, 10, 99)
        store.settle(CheckpointMeta("bench", 10, "p"))
        restore = timed(lambda: store.restore(target, CheckpointMeta("bench", 11, "p")))
        later_disk = store.disk_usage()
        records = int(store.git.text("rev-list", "--count", "refs/caretz/sessions/bench"))
        store.compact()
        compact_disk = store.disk_usage()

    print(f"project: {args.files} files, {human(content)} of content")
    print(f"{'':<26}{'wall':>8}    {'cpu':>8}")
    row("first checkpoint", firsts, first_cpu, "goal < 2000 ms")
    for name, (wall, cpu) in figures.items():
        row(name, wall, cpu, "a checkpoint and a settle" if "hook" in name else "goal < 200 ms")
    print(f"{'restore 10 files':<26}{restore * 1000:8.0f} ms")
    print(f"disk after the first checkpoint {human(first_disk)}")
    print(
        f"disk after {records} records (checkpoints, settled states, a restore) {human(later_disk)}"
    )
    print(f"disk after compact {human(compact_disk)}")
    load = os.getloadavg()[0]
    print(
        f"(cores: {os.cpu_count()}, load {load:.1f}; medians of {args.runs} first, 5 of each later)"
    )


if __name__ == "__main__":
    main()
