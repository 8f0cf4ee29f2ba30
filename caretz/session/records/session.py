"""The session's own records: its start, switches and compactions, and what its parts
report outside a turn (background jobs, the git watch, a custom command's calls, a
scheduled run)."""

from __future__ import annotations

from dataclasses import field
from typing import Any, ClassVar

from caretz.session.records.base import Record, optional, record

JsonDict = dict[str, Any]


@record
class SessionOpened(Record):
    """What `Session.Started` and `Session.Resumed` both record."""

    session_id: str = ""
    model: str = ""
    profile: str | None = None
    cwd: str = ""
    project: str = ""
    other_project: str | None = optional()  # a resumed session of another project
    version: str = ""
    loop_guard: str = ""
    permission_mode: str = ""
    sandbox: JsonDict = field(default_factory=dict)
    # The project's configuration (runtime/project_trust.py), when it brings any: its
    # digest, whether approved, what was left out and the line that says so.
    project_config: JsonDict | None = optional()


@record
class SessionStarted(SessionOpened):
    TYPE: ClassVar[str] = "Session.Started"


@record
class SessionResumed(SessionOpened):
    TYPE: ClassVar[str] = "Session.Resumed"


@record
class SessionChanged(Record):
    """A switch between turns: `/model`, `/profile`, `/loop-guard`, `/permissions`."""

    TYPE: ClassVar[str] = "Session.Changed"
    change: str = ""
    model: str = ""
    profile: str | None = None
    loop_guard: str = ""
    permission_mode: str = ""


@record
class SessionCompacted(Record):
    TYPE: ClassVar[str] = "Session.Compacted"
    agent: str = "main"
    reason: str = ""
    trimmed: int = 0
    summarized: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    summary_error: str | None = None
    conversation: list[JsonDict] = field(default_factory=list)  # Message.to_dict() each
    # The newest step's tool results cut to fit the window (only when nothing else did).
    shortened: int | None = optional()


@record
class ModelSummary(Record):
    """The model summarized older steps for a compaction."""

    TYPE: ClassVar[str] = "Model.Summary"
    agent: str = "main"
    model: str = ""
    usage: JsonDict = field(default_factory=dict)
    messages: int = 0


@record
class JobsStopped(Record):
    TYPE: ClassVar[str] = "Jobs.Stopped"
    jobs: list[str] = field(default_factory=list)


@record
class ScheduleRun(Record):
    TYPE: ClassVar[str] = "Schedule.Run"
    job: str = ""


@record
class SandboxGitUndone(Record):
    """The git watch put back what a command changed in .git; `tool` is None for the
    session's last check."""

    TYPE: ClassVar[str] = "Sandbox.GitUndone"
    tool: str | None = None
    call_id: str | None = None
    undone: list[str] = field(default_factory=list)


@record
class SandboxNetworkRefused(Record):
    """caretz's network proxy refused a command's connection: the host, its port, why."""

    TYPE: ClassVar[str] = "Sandbox.NetworkRefused"
    host: str = ""
    port: int = 0
    reason: str = ""


@record
class SandboxNetworkAllowed(Record):
    """The user let commands reach a refused host for the rest of the session."""

    TYPE: ClassVar[str] = "Sandbox.NetworkAllowed"
    host: str = ""
    scope: str = "session"


@record
class ShellRan(Record):
    """A `!command` the user ran at the interactive prompt; the next prompt carries it."""

    TYPE: ClassVar[str] = "Shell.Ran"
    command: str = ""
    exit_code: int | None = None
    output: str = ""
    duration_s: float = 0.0
    ended_by: str | None = None


@record
class CommandRan(Record):
    """A custom command's `` !`command` `` line or `@path` file, run before its prompt:
    the call, then the fields of `tools.base.ToolResult.to_dict()`."""

    TYPE: ClassVar[str] = "Command.Ran"
    command: str = ""
    file: str = ""
    call_id: str = ""
    tool: str = ""
    input: str = ""
    refused: str | None = None
    ok: bool = False
    output: str = ""
    exit_code: int | None = None
    duration_s: float = 0.0
    files_changed: list[str] | None = optional()
    ended_by: str | None = optional()
    images: list[dict[str, Any]] | None = optional()  # by digest (EventLog.keep_images)
