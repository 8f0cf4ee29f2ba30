"""`caretz batch TASKS.jsonl`: check everything, run what is left to run, say how it went.

Before anything runs, every task is checked: its line, its folder (in a git repository
with a commit to start a worktree from), and its run's settings (the profile, the model
and its key, the judge): a problem is one line naming the line, and exit 2. The exit code
after a run: 0 when every task of the file has ended done, 130 after Ctrl-C, else 1 with
the counts.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console

from caretz.batch.child import absolute_paths
from caretz.batch.results import INTERRUPTED, ResultsFile, TaskResult
from caretz.batch.runner import Batch, Plan
from caretz.batch.tasks import Task, TaskFileError, read_tasks
from caretz.batch.view import DONE, BatchLiveView, BatchTally, PlainView, closing_table, counts_text
from caretz.config.env_file import apply_env_file
from caretz.config.settings import resolve_judge_model, resolve_settings
from caretz.config_base import ConfigError
from caretz.providers.resolve import api_key_for
from caretz.usage_error import fail
from caretz.worktrees import manage
from caretz.worktrees.git import WorktreeError

MAX_DEFAULT_WORKERS = 8


def run_batch(
    flags: Mapping[str, Any],
    tasks_path: Path,
    workers: int | None = None,
    results_path: Path | None = None,
    env_file: Path | None = None,
) -> int:
    start = Path.cwd()
    try:
        if env_file is not None:
            apply_env_file(env_file, os.environ)
        tasks = read_tasks(tasks_path, start)
        check_folders(tasks, tasks_path)
        settings_of = run_flags(absolute_paths(flags, start), tasks, tasks_path)
    except (TaskFileError, ConfigError) as error:
        return fail(str(error))
    results = ResultsFile(results_path or tasks_path.with_name(tasks_path.stem + ".results.jsonl"))
    previous, unreadable = results.recorded()
    to_run = [t for t in tasks if t.id not in previous or previous[t.id].status == INTERRUPTED]
    count = workers or default_workers()
    say(f"{plural_tasks(len(to_run))} to run, {count} at a time; results in {results.path}")
    if len(to_run) < len(tasks):
        say(f"{len(tasks) - len(to_run)} already in {results.path.name}, skipped")
    if unreadable:
        say(f"{unreadable} line(s) of {results.path.name} could not be read and are ignored")
    flags_for = lambda task: settings_of[(task.model, task.profile)]  # noqa: E731
    plan = Plan(
        tasks=to_run,
        flags_for=flags_for,
        env=dict(os.environ),
        workers=count,
        results=results,
        previous=previous,
    )
    batch, view = _batch(plan)
    try:
        ran = batch.run()
    finally:
        view.close()
    final = {**previous, **ran}
    closing_table(tasks, final, Console(highlight=False))
    if batch.failure is not None:
        say(batch.failure)
    return exit_code(tasks, final, batch.interrupted)


def check_folders(tasks: list[Task], tasks_path: Path) -> None:
    """Each task's folder in a git repository with a commit; ConfigError naming the line."""
    checked: dict[Path, str | None] = {}
    for task in tasks:
        if task.cwd not in checked:
            checked[task.cwd] = _folder_problem(task.cwd)
        problem = checked[task.cwd]
        if problem is not None:
            raise ConfigError(f"{tasks_path} line {task.line}: cwd {task.cwd}: {problem}")


def _folder_problem(folder: Path) -> str | None:
    try:
        repo = manage.open_repository(folder, os.environ)
    except WorktreeError as error:
        return str(error)
    if not manage.has_commit(repo):
        return "its repository has no commit yet: a task's worktree starts from HEAD"
    return None


Setting = tuple[str | None, str | None]  # a task's (model, profile)


def run_flags(
    flags: dict[str, Any], tasks: list[Task], tasks_path: Path
) -> dict[Setting, dict[str, Any]]:
    """The flags each task runs with, by its model and profile, each resolved now (the
    profile, the model, its key, the judge): a problem is a ConfigError naming the first
    line that has it. The loop guard is on: `active` where neither the command line,
    CARETZ_LOOP_GUARD nor the task's profile turns it on in another mode."""
    guard_named = bool(flags.get("loop_guard") or os.environ.get("CARETZ_LOOP_GUARD"))
    found: dict[Setting, dict[str, Any]] = {}
    for task in tasks:
        if (task.model, task.profile) in found:
            continue
        try:
            chosen = task_flags(flags, task)
            settings = resolve_settings(chosen, os.environ)
            api_key_for(settings.model.entry, os.environ)
            if settings.values.guard_mode == "off" and not guard_named:
                chosen["loop_guard"] = "active"
                settings = resolve_settings(chosen, os.environ)
            if settings.values.guard_mode != "off":
                judge = resolve_judge_model(settings)
                api_key_for(judge.entry if judge else settings.model.entry, os.environ)
        except ConfigError as error:
            raise ConfigError(f"{tasks_path} line {task.line}: {error}") from None
        found[(task.model, task.profile)] = chosen
    return found


def task_flags(base: Mapping[str, Any], task: Task) -> dict[str, Any]:
    """The batch's flags with the task's model and profile (a task naming a profile
    runs on that profile's model unless it names a model too)."""
    flags = dict(base)
    if task.profile is not None:
        flags["profile"] = task.profile
        flags.pop("model", None)
    if task.model is not None:
        flags["model"] = task.model
    return flags


def exit_code(tasks: list[Task], results: Mapping[str, TaskResult], interrupted: bool) -> int:
    statuses = [results[t.id].status if t.id in results else "not run" for t in tasks]
    if interrupted:
        say(f"interrupted: {counts_text(statuses)}; run it again to carry on")
        return 130
    if all(status == DONE for status in statuses):
        say(f"every task done ({len(tasks)})")
        return 0
    say(counts_text(statuses))
    return 1


def default_workers() -> int:
    """Half the cores this process may use, 1 to 8: a task waits on its model most of
    the time, and its commands (tests, builds) want the rest."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 2
    return max(1, min(MAX_DEFAULT_WORKERS, cores // 2))


def say(text: str) -> None:
    sys.stderr.write(f"caretz batch: {text}\n")
    sys.stderr.flush()


def plural_tasks(count: int) -> str:
    return f"{count} task{'' if count == 1 else 's'}"


def _batch(plan: Plan) -> tuple[Batch, PlainView]:
    tally = BatchTally(len(plan.tasks))
    view = BatchLiveView(tally) if sys.stderr.isatty() else PlainView(tally)
    return Batch(plan, view), view
