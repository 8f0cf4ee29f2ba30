"""One task's process: `caretz -p PROMPT --output json` in its worktree, in a process
group of its own (Ctrl-C at the terminal reaches the batch, which decides), read line by
line: the events as they come (what it has used so far), then its result object.

Interrupting it is Ctrl-C's own path in the child (SIGINT to its group): it stops its
command, answers the open calls, writes its result with status "interrupted" and exits
130. A child still there after the grace is ended with SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from caretz import inbound
from caretz.session.records.guard import LoopGuardJudged
from caretz.session.records.loop import ModelReplied
from caretz.session.records.session import ModelSummary

# The flags a task's run may not take from the batch's command line: the batch sets them.
_SET_BY_BATCH = ("output",)
_PATH_FLAGS = ("config", "add_dir", "image")
STDERR_LINES = 20
# The events that carry a model call's usage: the agent's replies, compaction's summaries,
# the loop guard's judge.
_SPENDING = (ModelReplied.TYPE, ModelSummary.TYPE, LoopGuardJudged.TYPE)


@dataclass
class Spent:
    """What a running task has used so far, from its events (the judge's cost comes
    with its result)."""

    tokens: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True)
class Ended:
    """How the process ended: its result object (None when it printed none), its exit
    code, and the end of its stderr."""

    result: Mapping[str, Any] | None
    exit_code: int
    stderr: tuple[str, ...]

    def last_words(self) -> str:
        return next((line for line in reversed(self.stderr) if line.strip()), "")


def run_argv(flags: Mapping[str, Any], prompt: str, resume: str | None = None) -> list[str]:
    """The command line of a task's headless run: the batch's flags, JSON output, -p."""
    argv: list[str] = []
    for name, value in flags.items():
        if name in _SET_BY_BATCH or value is None:
            continue
        option = "--" + name.replace("_", "-")
        for item in value if isinstance(value, list | tuple) else [value]:
            argv += [option, str(item)]
    if resume is not None:
        argv += ["--resume", resume]
    return [*argv, "--output", "json", "-p", prompt]


def absolute_paths(flags: Mapping[str, Any], start: Path) -> dict[str, Any]:
    """`flags` with the files they name taken from `start`: a task runs in its worktree."""

    def absolute(value: Any) -> Any:
        if isinstance(value, list | tuple):
            return [absolute(item) for item in value]
        path = Path(value).expanduser()
        return str(path if path.is_absolute() else start / path)

    return {k: absolute(v) if k in _PATH_FLAGS and v else v for k, v in flags.items()}


class TaskProcess:
    """A task's caretz, started at once; `wait` reads it to its end."""

    def __init__(
        self,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str],
        on_spent: Callable[[Spent], None] | None = None,
    ):
        launcher = [sys.executable, "-m", "caretz.batch.launch", str(os.getpid())]
        self.process = subprocess.Popen(
            [*launcher, *argv],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own group: the batch interrupts or ends it whole
        )
        self.spent = Spent()
        self._on_spent = on_spent
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._errors = threading.Thread(target=self._read_stderr, daemon=True)
        self._errors.start()

    def wait(self) -> Ended:
        """Read the events and the result object until the process ends."""
        assert self.process.stdout is not None
        result: dict[str, Any] | None = None
        for raw in self.process.stdout:
            event = _json(raw)
            if event is None:
                continue
            if event.get("type") == "result":
                result = event
            else:
                self._count(event)
        code = self.process.wait()
        self._errors.join()
        return Ended(result, code if code >= 0 else 128 - code, tuple(self._stderr))

    def signal(self, number: int) -> None:
        """`number` to the task's process group (nothing when it has ended)."""
        if self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, number)

    def interrupt(self) -> None:
        self.signal(signal.SIGINT)

    def _count(self, event: Mapping[str, Any]) -> None:
        usage = event.get("usage")
        if event.get("type") not in _SPENDING:
            return
        if isinstance(usage, Mapping):
            self.spent.tokens += sum(
                int(v or 0) for k, v in usage.items() if k != "reasoning_tokens"
            )
        cost = event.get("cost_usd")
        if isinstance(cost, int | float):
            self.spent.cost_usd += cost
        if self._on_spent is not None:
            self._on_spent(self.spent)

    def _read_stderr(self) -> None:
        stream: IO[bytes] | None = self.process.stderr
        assert stream is not None
        for raw in stream:
            self._stderr.append(raw.decode("utf-8", "replace").rstrip("\n"))


def _json(raw: bytes) -> dict[str, Any] | None:
    try:
        data = inbound.load_json(raw, "a task's line")
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
