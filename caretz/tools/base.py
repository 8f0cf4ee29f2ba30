"""The tool seam: a spec the model sees, and a run that returns a ToolResult."""

from __future__ import annotations

import threading
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import Image, Message, ToolSpec
from caretz.tools.jobtable import JobTable

if TYPE_CHECKING:
    from caretz.sandbox.runner import Sandbox

if TYPE_CHECKING:
    from caretz.permissions.policy import RuleSet
    from caretz.tools.policy import PermissionHint, SkillGrants, TurnGrant


@lazy_dataclass(kw_only=True)
class ToolResult:
    ok: bool
    output: str
    exit_code: int | None = None
    duration_s: float = 0.0
    # Files this call wrote or edited (workspace-relative), for the guard's summary and
    # the record of a turn's end (agent/checkpointing.py): an "edit" tool names every one.
    files_changed: list[str] = field(default_factory=list)
    # A unified diff of an edit, for the UI.
    diff: str | None = None
    # What ended a command before it finished: "timeout", "interrupted" or "cancelled".
    ended_by: str | None = None
    # Images the model sees with the output (an image file read, an MCP server's images).
    images: list[Image] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "ok": self.ok,
            "output": self.output,
            "exit_code": self.exit_code,
            "duration_s": round(self.duration_s, 4),
        }
        if self.files_changed:
            data["files_changed"] = self.files_changed
        if self.ended_by:
            data["ended_by"] = self.ended_by
        if self.images:  # the bytes are stored beside the log (EventLog.keep_images)
            data["images"] = [image.ref() for image in self.images]
        return data

    def message(self, call_id: str) -> Message:
        """The conversation's message for this result of the call `call_id`."""
        return Message(
            role="tool",
            content=self.output,
            tool_call_id=call_id,
            is_error=not self.ok,
            images=self.images,
        )


@lazy_dataclass(kw_only=True)
class ToolContext:
    workspace: Path
    # Set by the UI on Ctrl-C; long-running tools poll it and stop.
    cancel: threading.Event = field(default_factory=threading.Event)
    bash_timeout_s: float = 120.0
    output_limit_chars: int = 30_000
    # Set on a per-call copy when the user (or an allow rule) lets this one command run
    # outside the sandbox, as the model asked with the bash tool's `escalate` argument.
    escalated: bool = False
    # The session's permission rules: glob and grep skip files a Read deny rule covers.
    rules: RuleSet | None = None
    # What the tool being called does (its `effect`), set by the registry on the copy
    # its checks see; None outside a registry call.
    effect: str | None = None
    # More names the call answers to in permission rules, set there too from the tool's
    # `rule_names(args)`: reading server S's resources answers to `mcp__S__…`.
    rule_names: tuple[str, ...] = ()
    # The session's sandbox: commands run in it and the file tools check paths against
    # its roots. None runs commands directly and checks no path (tests, embedding).
    sandbox: Sandbox | None = None
    # Background jobs (bash `background: true`), shared with subagents.
    jobs: JobTable = field(default_factory=JobTable)
    # A PreToolUse hook's "allow" or "ask" for this call, set by the registry on the copy
    # the checks after the hook see (tools/policy.py).
    permission_hint: PermissionHint | None = None
    # What a custom command lets its own turn's calls do (tools/policy.py's TurnGrant).
    grant: TurnGrant | None = None
    # A named subagent's permission mode: the permission check applies the stricter of it
    # and the session's (permissions/modes.py `stricter`); None: the session's alone.
    mode_floor: str | None = None
    # The folder a subagent in a worktree of its own works in: the permission rules' `./`
    # paths are read from there, so a rule on `./secrets/**` holds for its copy too.
    rules_root: Path | None = None
    # The skills activated in this piece of work and the rules they grant, shared by the
    # copies made for it (tools/policy.py's SkillGrants); None: no skills.
    skill_grants: SkillGrants | None = None
    # Why the session's model cannot take images ("model X does not take images"), known
    # from caretz's model table; None: it can, or nobody knows (the provider will say).
    no_images: str | None = None


class ToolInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a tool that had started; `result` says what it did until then
    (the time it ran, its partial output), so the model is never told it did not run."""

    def __init__(self, result: ToolResult, cause: KeyboardInterrupt | None = None):
        super().__init__(result.output)
        self.result = result
        # What stopped it: Ctrl-C, or SIGTERM / SIGHUP (whose exit code the run keeps).
        self.cause = cause


def interrupted_result(seconds: float, effect: str, output: str = "") -> ToolResult:
    """The result of a call that Ctrl-C (or SIGTERM / SIGHUP) stopped after it started,
    the one form every tool and the turn loop give it: what it printed until then
    (`output`), then one line with how long it ran and what became of its work
    (`effect`), so the model is never told it did not run."""
    line = f"[interrupted by the user after {seconds:.1f} s; {effect}]"
    return ToolResult(
        ok=False,
        output=f"{output}\n{line}" if output else line,
        duration_s=seconds,
        ended_by="interrupted",
    )


class ToolArgumentError(ValueError):
    """The model's arguments do not fit the tool; goes back to it as a failed result."""


class Tool(Protocol):
    """A tool. It may also say what it does for the permission check, as a class attribute
    `effect` (caretz.permissions.modes.Effect: read, edit, shell, internal, external, fetch);
    a tool that does not say is treated as running outside the sandbox."""

    spec: ToolSpec

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


ParamType = Literal["string", "integer", "number", "boolean"]


@lazy_dataclass(frozen=True)
class Param:
    """One argument of a tool: its JSON type and what the model reads about it."""

    type: ParamType
    description: str
    required: bool = False


def object_schema(**params: Param) -> dict[str, Any]:
    """The JSON schema of a tool's arguments: these, in this order, and no others."""
    return {
        "type": "object",
        "properties": {
            name: {"type": param.type, "description": param.description}
            for name, param in params.items()
        },
        "required": [name for name, param in params.items() if param.required],
        "additionalProperties": False,
    }
