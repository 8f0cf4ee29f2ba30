"""Running a batch: N workers, each taking the next task, making its worktree, running its
caretz and writing its result line as it ends.

Ctrl-C (or SIGTERM, SIGHUP) reaches the batch alone (each task has a process group of its
own): no task starts after it, and every running one is interrupted the way Ctrl-C
interrupts caretz, so it ends as "interrupted" with its result written. A task still
running after the grace is ended with SIGTERM, then SIGKILL; a second Ctrl-C does that
at once.
"""

from __future__ import annotations

import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from caretz.agent.signals import is_ignored
from caretz.batch.child import Ended, Spent, TaskProcess, run_argv
from caretz.batch.results import INTERRUPTED, ResultsFile, TaskResult
from caretz.batch.tasks import Task
from caretz.worktrees import manage
from caretz.worktrees.git import WorktreeError

GRACE_S = 30.0  # after an interrupt, before SIGTERM; as long again before SIGKILL
_STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class BatchView(Protocol):
    def started(self, task: Task, worktree: Path) -> None: ...
    def spent(self, task_id: str, spent: Spent) -> None: ...
    def finished(self, result: TaskResult) -> None: ...
    def stopping(self) -> None: ...


@dataclass(frozen=True, kw_only=True)
class Plan:
    tasks: list[Task]  # those to run now
    flags_for: Callable[[Task], Mapping[str, Any]]  # a task's run's flags
    env: Mapping[str, str]
    workers: int
    results: ResultsFile
    previous: Mapping[str, TaskResult] = field(default_factory=dict)
    grace_s: float = GRACE_S


class Batch:
    def __init__(self, plan: Plan, view: BatchView, clock: Callable[[], float] = time.monotonic):
        self.plan = plan
        self.view = view
        self.clock = clock
        self.results: dict[str, TaskResult] = {}
        self.stopping = threading.Event()
        self._queue: queue.Queue[Task] = queue.Queue()
        self._running: dict[str, TaskProcess] = {}
        self._lock = threading.RLock()
        self._stopped_at: float | None = None
        self._signals = 0
        self._escalated = 0  # 1: SIGTERM sent past the grace, 2: SIGKILL
        self.failure: str | None = None  # what stopped the batch other than a signal

    @property
    def interrupted(self) -> bool:
        """Stopped by a signal (Ctrl-C, SIGTERM, SIGHUP)."""
        return self.stopping.is_set() and self.failure is None

    def run(self) -> dict[str, TaskResult]:
        """Every task run (or, after Ctrl-C, those that started); their results."""
        for task in self.plan.tasks:
            self._queue.put(task)
        count = max(1, min(self.plan.workers, len(self.plan.tasks)))
        workers = [
            threading.Thread(target=self._work, name=f"caretz-batch-{n}", daemon=True)
            for n in range(count)
        ]
        with self._signals_stop():
            for worker in workers:
                worker.start()
            while any(worker.is_alive() for worker in workers):
                for worker in workers:
                    worker.join(timeout=0.2)
                self._end_the_stragglers()
        return self.results

    def stop(self) -> None:
        """No task starts any more; the running ones are interrupted (a second call:
        ended at once)."""
        self._signals += 1
        if self._signals > 1:
            self._signal_all(signal.SIGKILL)
            return
        self.stopping.set()
        self._stopped_at = self.clock()
        self.view.stopping()
        self._signal_all(signal.SIGINT)

    # -- a worker --------------------------------------------------------------------------
    def _work(self) -> None:
        while not self.stopping.is_set():
            try:
                task = self._queue.get_nowait()
            except queue.Empty:
                return
            try:
                result = self._run(task)
            except OSError as error:  # its process could not start: the batch carries on
                result = TaskResult(
                    id=task.id, status="error", exit_code=1, message=f"could not start: {error}"
                )
            if result is None:
                continue
            self.results[task.id] = result
            try:
                self.plan.results.append(result)
            except OSError as error:  # no task starts whose result could not be kept
                self.failure = f"cannot write {self.plan.results.path}: {error.strerror}"
                self.stop()
            self.view.finished(result)

    def _run(self, task: Task) -> TaskResult | None:
        started = self.clock()
        try:
            repo = manage.open_repository(task.cwd, self.plan.env)
            worktree = manage.enter(repo, task.worktree_name)
        except WorktreeError as error:
            return TaskResult(
                id=task.id,
                status="error",
                exit_code=1,
                message=f"worktree: {error}",
                duration_s=0.0,
            )
        inside = worktree.path / task.cwd.relative_to(repo.top)
        argv = run_argv(self.plan.flags_for(task), task.prompt, self._resumed(task, worktree))
        with self._lock:
            if self.stopping.is_set():
                return None  # not started: the next run runs it
            process = TaskProcess(
                argv,
                inside if inside.is_dir() else worktree.path,
                self.plan.env,
                on_spent=lambda spent: self.view.spent(task.id, spent),
            )
            self._running[task.id] = process
        self.view.started(task, worktree.path)
        try:
            ended = process.wait()
        finally:
            with self._lock:
                del self._running[task.id]
        return self._result(task, worktree, ended, self.clock() - started)

    def _resumed(self, task: Task, worktree: manage.Worktree) -> str | None:
        """An interrupted task's session, carried on in the worktree it left."""
        before = self.plan.previous.get(task.id)
        if before is None or before.status != INTERRUPTED or worktree.created:
            return None
        return before.session_id

    def _result(
        self, task: Task, worktree: manage.Worktree, ended: Ended, duration_s: float
    ) -> TaskResult:
        where: dict[str, Any] = {"worktree": str(worktree.path), "branch": worktree.branch}
        if ended.result is not None:
            return TaskResult.from_run(task.id, ended.result, duration_s=duration_s, **where)
        if self.stopping.is_set():
            message = "interrupted before it wrote a result"
            return TaskResult(
                id=task.id, status=INTERRUPTED, exit_code=ended.exit_code, message=message, **where
            )
        message = ended.last_words() or f"caretz ended without a result (exit {ended.exit_code})"
        code = ended.exit_code or 1
        return TaskResult(
            id=task.id,
            status="error",
            exit_code=code,
            message=message,
            duration_s=duration_s,
            **where,
        )

    # -- stopping --------------------------------------------------------------------------
    @contextmanager
    def _signals_stop(self) -> Iterator[None]:
        """Ctrl-C, SIGTERM and SIGHUP stop the batch while it runs (main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        # A signal inherited as ignored (nohup caretz batch …) stays ignored.
        caught = [number for number in _STOPPING_SIGNALS if not is_ignored(number)]
        before = {number: signal.getsignal(number) for number in caught}
        for number in caught:
            signal.signal(number, lambda *_: self.stop())
        try:
            yield
        finally:
            for number, handler in before.items():
                signal.signal(number, handler)

    def _signal_all(self, number: int) -> None:
        with self._lock:
            running = list(self._running.values())
        for process in running:
            process.signal(number)

    def _end_the_stragglers(self) -> None:
        """Past the grace after an interrupt: SIGTERM; past twice the grace: SIGKILL."""
        if self._stopped_at is None:
            return
        waited = self.clock() - self._stopped_at
        due = 2 if waited > 2 * self.plan.grace_s else 1 if waited > self.plan.grace_s else 0
        if due > self._escalated:
            self._escalated = due
            self._signal_all(signal.SIGKILL if due == 2 else signal.SIGTERM)
