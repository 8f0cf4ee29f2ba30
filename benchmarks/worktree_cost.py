"""What a worktree costs to make on a large repository: `caretz -w NAME`'s and each batch
task's first step.

The repository is a clone (objects shared, read-only, with the source) made under a temp
folder of /work/cache/linux-git when it is there (the Linux 6.1 tree, ~78,000 files),
else of a generated repository of --files files. Prints the median of --runs wall and
CPU times (git's CPU counted: a busy machine inflates wall time, not CPU) for making the
worktree (a checkout of every file), listing the worktrees, and removing one (clean, and
with a changed file through --force), the status `caretz worktree list` asks of each, and
the disk a worktree takes.

    .venv/bin/python benchmarks/worktree_cost.py [--runs 3] [--files 20000] [--source PATH]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from caretz.worktrees import manage  # noqa: E402

KERNEL = Path("/work/cache/linux-git")
GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b"}
GIT_ENV["GIT_COMMITTER_EMAIL"] = "b@b"


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(action: Callable[[], object], wall: list[float], cpu: list[float]) -> None:
    started, cpu_started = time.perf_counter(), cpu_seconds()
    action()
    wall.append(time.perf_counter() - started)
    cpu.append(cpu_seconds() - cpu_started)


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, env={**os.environ, **GIT_ENV}, check=True)


def generated(folder: Path, files: int) -> Path:
    for number in range(files):
        path = folder / "src" / f"pkg{number // 1000}" / f"mod{number // 20}" / f"f{number}.c"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"int value_{number} = {number};\n" * 40)
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "first")
    return folder


def source_clone(scratch: Path, source: Path | None, files: int) -> tuple[Path, str]:
    """A clone of the large repository under `scratch` (its main checkout left out: only
    the worktrees are measured), and what it is."""
    if source is None and KERNEL.is_dir():
        source = KERNEL
    if source is None:
        source = generated(scratch / "source", files)
    clone = scratch / "clone"
    git(scratch, "clone", "-q", "--shared", "--no-checkout", str(source), str(clone))
    return clone, str(source)


def disk_usage(folder: Path) -> int:
    total = 0
    for root, _dirs, names in os.walk(folder):
        for name in names:
            total += os.lstat(os.path.join(root, name)).st_blocks * 512
    return total


def row(name: str, wall: list[float], cpu: list[float]) -> None:
    print(f"{name:<34}{statistics.median(wall):8.2f} s {statistics.median(cpu):8.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--source", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="caretz-worktree-bench-") as folder:
        scratch = Path(folder)
        clone, source = source_clone(scratch, args.source, args.files)
        repo = manage.open_repository(clone, os.environ)
        files = subprocess.run(
            ["git", "ls-files", "--with-tree=HEAD"], cwd=clone, capture_output=True, check=True
        ).stdout.count(b"\n")
        print(f"{source}: {files:,} files; load average {os.getloadavg()[0]:.1f}")
        print(f"{'':<34}{'wall':>10} {'CPU':>10}")
        figures: dict[str, tuple[list[float], list[float]]] = {}
        names = ["make a worktree (checkout)", "list the worktrees", "its changes (git status)"]
        names.append("remove a clean one")
        names.append("remove a changed one (--force)")
        for name in names:
            figures[name] = ([], [])
        disk = 0
        for run in range(args.runs):
            made = f"bench-{run}"
            timed(lambda m=made: manage.enter(repo, m), *figures[names[0]])
            disk = disk_usage(repo.folder / made)
            timed(lambda: manage.listed(repo), *figures[names[1]])
            worktree = manage.Worktree(name=made, path=repo.folder / made, branch="caretz/" + made)
            timed(lambda w=worktree: manage.changes(repo, w), *figures[names[2]])
            if run % 2 == 0:
                timed(lambda m=made: manage.remove(repo, m), *figures[names[3]])
            else:
                (repo.folder / made / "README").write_text("changed\n")
                timed(lambda m=made: manage.remove(repo, m, force=True), *figures[names[4]])
        for name in names:
            if figures[name][0]:
                row(name, *figures[name])
        print(f"{'disk a worktree takes':<34}{disk / 1024 / 1024:8.0f} MB")
        shutil.rmtree(clone, ignore_errors=True)


if __name__ == "__main__":
    main()
