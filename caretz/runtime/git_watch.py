"""Wiring the git watch (sandbox/gitwatch.py): built at session start, checked after
every tool call and once more when the session ends; what it undid goes into the tool
result the model reads and a `Sandbox.GitUndone` event."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.sandbox.detect import SandboxBackend, SandboxCheck
from caretz.sandbox.gitwatch import GitWatch
from caretz.session.records.base import Record
from caretz.session.records.session import SandboxGitUndone

if TYPE_CHECKING:
    from caretz.messages import ToolCall
    from caretz.sandbox.runner import Sandbox
    from caretz.tools.base import ToolContext, ToolResult


class GitWatchHook:
    """The registry's after-call hook around a session's `GitWatch`."""

    def __init__(self, watch: GitWatch, emit: Callable[[Record], Any]):
        self.watch = watch
        self.emit = emit

    def __call__(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> None:
        # A command the user let out of the sandbox may change .git on purpose.
        lines = self.watch.check(accept=ctx.escalated)
        if lines:
            result.output = "\n".join([result.output, *(f"[caretz] {line}" for line in lines)])
            self.emit(SandboxGitUndone(tool=call.name, call_id=call.id, undone=lines))

    def close(self) -> None:
        """The last check, once the session's background jobs have stopped."""
        lines = self.watch.check()
        if lines:
            self.emit(SandboxGitUndone(tool=None, call_id=None, undone=lines))


def open_git_watch(
    sandbox: Sandbox | None,
    check: SandboxCheck | None,
    data_dir: Path,
    emit: Callable[[Record], Any],
) -> GitWatchHook | None:
    """None where commands cannot write a root (read-only) or run as the user (off)."""
    if sandbox is None or not sandbox.enforced or not sandbox.policy.writable_roots:
        return None
    programs = check.programs if check is not None else None
    watch = GitWatch(
        sandbox.policy.writable_roots,
        data_dir / "quarantine",
        git=programs.git.path if programs is not None else None,
        full=sandbox.backend is SandboxBackend.LANDLOCK,
    )
    watch.start()
    return GitWatchHook(watch, emit)
