"""A batch's results: one JSON line per task (`TaskResult`), appended as each task ends.

Each line goes out in one write on a file opened for appending, so a batch killed at
any moment leaves whole lines (and at worst a torn last one, which reading skips and the
next append starts after). A rerun with the same file skips the tasks it holds, except
those it says were interrupted: they run again, carrying on their session.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from caretz import inbound

INTERRUPTED = "interrupted"
_NO_TOKENS = {
    "input_tokens": 0,
    "output_tokens": 0,
    "cache_read_tokens": 0,
    "cache_write_tokens": 0,
}
EMPTY_USAGE = {**_NO_TOKENS, "judge": dict(_NO_TOKENS)}  # a task that printed no result


@dataclass(frozen=True, kw_only=True)
class TaskResult:
    """How one task ended: caretz's own status and exit code (done 0, error 1, usage_error
    2, loop_guard 3, limit 4, hook 6, interrupted 130…), where it ran, and what it used:
    `usage` and `cost_usd` count every model call, the loop guard's judge's too, and
    `usage["judge"]` and `judge_cost_usd` are the judge's part."""

    id: str
    status: str
    exit_code: int
    message: str = ""  # why it ended, for people ("" when done)
    worktree: str = ""
    branch: str = ""
    session_id: str | None = None
    tool_calls: int = 0
    usage: Mapping[str, Any] = field(default_factory=lambda: dict(EMPTY_USAGE))
    cost_usd: float | None = None
    judge_cost_usd: float | None = None
    guard_verdicts: tuple[Mapping[str, Any], ...] = ()
    duration_s: float = 0.0

    @classmethod
    def from_run(
        cls, task_id: str, run: Mapping[str, Any], *, worktree: str, branch: str, duration_s: float
    ) -> TaskResult:
        """From a headless run's result object (`caretz -p … --output json`'s last line)."""
        return cls(
            id=task_id,
            status=str(run.get("status") or "error"),
            exit_code=int(run.get("exit_code", 1)),
            message=str(run.get("message") or ""),
            worktree=worktree,
            branch=branch,
            session_id=run.get("session_id"),
            tool_calls=int(run.get("tool_calls") or 0),
            usage=dict(run.get("usage") or EMPTY_USAGE),
            cost_usd=run.get("cost_usd"),
            judge_cost_usd=run.get("judge_cost_usd"),
            guard_verdicts=tuple(run.get("guard_verdicts") or ()),
            duration_s=duration_s,
        )

    @property
    def tokens(self) -> int:
        """Every token counted (input, output, cache reads and writes), the judge's in."""
        keys = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
        return sum(int(self.usage.get(key) or 0) for key in keys)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "exit_code": self.exit_code,
            "message": self.message,
            "worktree": self.worktree,
            "branch": self.branch,
            "session_id": self.session_id,
            "tool_calls": self.tool_calls,
            "usage": dict(self.usage),
            "cost_usd": self.cost_usd,
            "judge_cost_usd": self.judge_cost_usd,
            "guard_verdicts": [dict(verdict) for verdict in self.guard_verdicts],
            "duration_s": round(self.duration_s, 3),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaskResult:
        return cls.from_run(
            str(data["id"]),
            data,
            worktree=str(data.get("worktree") or ""),
            branch=str(data.get("branch") or ""),
            duration_s=float(data.get("duration_s") or 0.0),
        )


class ResultsFile:
    def __init__(self, path: Path):
        self.path = path

    def recorded(self) -> tuple[dict[str, TaskResult], int]:
        """The last line of each task id, and how many lines could not be read (a torn
        last line from a batch killed mid-write, a line of something else)."""
        found: dict[str, TaskResult] = {}
        unreadable = 0
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return found, 0
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                data = inbound.load_json(line, "a result line")
                found[str(data["id"])] = TaskResult.from_dict(data)
            except (ValueError, TypeError, KeyError):
                unreadable += 1
        return found, unreadable

    def append(self, result: TaskResult) -> None:
        """One line, written whole at the end of the file (after a newline if a torn line
        ends it)."""
        line = json.dumps(result.to_dict(), ensure_ascii=False) + "\n"
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            if _ends_torn(fd):
                line = "\n" + line
            data = line.encode("utf-8")
            while data:
                written = os.write(fd, data)
                data = data[written:]
            os.fsync(fd)
        finally:
            os.close(fd)


def _ends_torn(fd: int) -> bool:
    size = os.fstat(fd).st_size
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"
