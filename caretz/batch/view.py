"""What a batch shows: a live view on a terminal (tasks done, running, failed and waiting,
tokens, cost, each running task), plain lines otherwise (one as each task starts and
ends), both on stderr; then the closing table of every task on stdout."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from caretz.batch.child import Spent
from caretz.batch.results import TaskResult
from caretz.batch.tasks import Task
from caretz.text import one_line, plural

DONE = "done"


@dataclass
class Running:
    task: Task
    started: float
    spent: Spent


class BatchTally:
    """The batch as it stands, shared by the views (their calls come from the workers)."""

    def __init__(self, total: int, clock: Callable[[], float] = time.monotonic):
        self.total = total
        self.clock = clock
        self.running: dict[str, Running] = {}
        self.ended: list[TaskResult] = []
        self.stopping = False
        self.lock = threading.Lock()

    def started(self, task: Task) -> None:
        with self.lock:
            self.running[task.id] = Running(task, self.clock(), Spent())

    def spent(self, task_id: str, spent: Spent) -> None:
        with self.lock:
            if task_id in self.running:
                self.running[task_id].spent = Spent(spent.tokens, spent.cost_usd)

    def finished(self, result: TaskResult) -> None:
        with self.lock:
            self.running.pop(result.id, None)
            self.ended.append(result)

    def headline(self) -> str:
        with self.lock:
            done = sum(result.status == DONE for result in self.ended)
            failed = len(self.ended) - done
            running = len(self.running)
            waiting = 0 if self.stopping else self.total - len(self.ended) - running
            tokens = sum(r.tokens for r in self.ended) + sum(
                r.spent.tokens for r in self.running.values()
            )
            costs = [r.cost_usd for r in self.ended]
            costs += [r.spent.cost_usd for r in self.running.values()]
        parts = [f"{done} done", f"{running} running", f"{failed} failed", f"{waiting} waiting"]
        parts += [f"{tokens_text(tokens)} tokens", cost_text(costs)]
        return " · ".join(parts) + (" · stopping" if self.stopping else "")


class PlainView:
    """A line on stderr as each task starts and ends."""

    def __init__(self, tally: BatchTally, out: TextIO = sys.stderr):
        self.tally = tally
        self.out = out

    def started(self, task: Task, worktree: Path) -> None:
        self.tally.started(task)
        self._line(f"{task.id} started in {worktree}")

    def spent(self, task_id: str, spent: Spent) -> None:
        self.tally.spent(task_id, spent)

    def finished(self, result: TaskResult) -> None:
        self.tally.finished(result)
        self._line(f"{result.id} {ended_text(result)} · {self.tally.headline()}")

    def stopping(self) -> None:
        self.tally.stopping = True
        self._line("stopping: the running tasks end as interrupted (Ctrl-C again ends them now)")

    def close(self) -> None:
        pass

    def _line(self, text: str) -> None:
        self.out.write(f"caretz batch: {text}\n")
        self.out.flush()


class BatchLiveView(PlainView):
    """The counts and every running task, redrawn in place on the terminal; a line above
    it as each task ends."""

    def __init__(self, tally: BatchTally, console: Console | None = None):
        super().__init__(tally)
        self.console = console or Console(stderr=True)
        self.live = Live(self, console=self.console, refresh_per_second=4, transient=True)
        self.live.start()

    def __rich__(self) -> Group:
        return Group(Text(f"caretz batch · {self.tally.headline()}", style="bold"), self._table())

    def started(self, task: Task, worktree: Path) -> None:
        self.tally.started(task)

    def _line(self, text: str) -> None:
        self.console.print(f"caretz batch: {text}", highlight=False, markup=False)

    def close(self) -> None:
        self.live.stop()

    def _table(self) -> Table:
        table = Table.grid(padding=(0, 2))
        now = self.tally.clock()
        with self.tally.lock:
            running = list(self.tally.running.values())
        for each in running:
            seconds = now - each.started
            table.add_row(
                f"  {each.task.id}",
                f"{int(seconds // 60)}:{int(seconds % 60):02d}",
                f"{tokens_text(each.spent.tokens)} tokens",
                one_line(each.task.prompt, 60),
            )
        return table


def closing_table(tasks: Iterable[Task], results: dict[str, TaskResult], out: Console) -> None:
    """Every task of the file as it stands now: status, exit code, what it used, where."""
    table = Table(title=None, show_edge=False, pad_edge=False)
    for column in ("task", "status", "exit", "tokens", "cost", "time", "branch"):
        table.add_column(
            column, justify="right" if column in ("exit", "tokens", "cost") else "left"
        )
    tokens, costs = 0, []
    for task in tasks:
        result = results.get(task.id)
        if result is None:
            table.add_row(task.id, "not run", "", "", "", "", "")
            continue
        tokens += result.tokens
        costs.append(result.cost_usd)
        table.add_row(
            task.id,
            result.status,
            str(result.exit_code),
            tokens_text(result.tokens),
            "unknown" if result.cost_usd is None else f"${result.cost_usd:.4f}",
            f"{result.duration_s:.1f}s",
            result.branch,
        )
    table.add_section()
    table.add_row("all", "", "", tokens_text(tokens), cost_text(costs), "", "")
    out.print(table)


def counts_text(statuses: Iterable[str]) -> str:
    """'3 done, 1 loop_guard, 1 not run': how many tasks ended each way, done first."""
    counts: dict[str, int] = {}
    for status in statuses:
        counts[status] = counts.get(status, 0) + 1
    order = sorted(counts, key=lambda status: (status != DONE, status))
    return ", ".join(f"{counts[status]} {status}" for status in order)


def ended_text(result: TaskResult) -> str:
    parts = [f"{result.status} (exit {result.exit_code})", plural(result.tool_calls, "tool call")]
    parts.append(f"{tokens_text(result.tokens)} tokens")
    parts.append("cost unknown" if result.cost_usd is None else f"${result.cost_usd:.4f}")
    parts.append(f"{result.duration_s:.1f}s")
    if result.message:
        parts.append(one_line(result.message, 120))
    return " · ".join(parts)


def cost_text(costs: list[float | None]) -> str:
    """The costs' sum; "+" when some are unknown (a model without a price)."""
    known = [cost for cost in costs if cost is not None]
    if costs and not known:
        return "cost unknown"
    return f"${sum(known):.4f}{'+' if len(known) < len(costs) else ''}"


def tokens_text(tokens: int) -> str:
    if tokens < 10_000:
        return f"{tokens:,}"
    return f"{tokens / 1000:,.1f}k"
