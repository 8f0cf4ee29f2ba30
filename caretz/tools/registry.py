"""The tools a session offers, and the one place a tool call is run.

`ToolRegistry.run` turns every bad call (unknown tool, unreadable or
ill-typed arguments, a path the sandbox does not allow) into a failed result the
model can read and correct. Only a bug inside a tool escapes, as ToolCrash.

Every call's arguments, whoever made them (a provider's parser, a hook's updatedInput,
the Python API, an editor), are taken as caretz/inbound.py takes data from outside, and
every result leaves as valid Unicode (an MCP server's text, a file name's undecodable
bytes): no call or result reaches the turn another way.

A call that can run (a known tool, arguments that fit its schema) then passes the
registry's before-call checks (PreToolUse hooks, the permission check) and the per-run
ones (the loop guard's), in order (see tools/policy.py): a check may refuse the call
(`CancelToolCall(reason)`, the failed result the model reads), put another call in
its place, or grant this one call a run outside the sandbox (a copy of the
ToolContext with `escalated=True`). Nobody is asked about a call that could not run.
After a call ran, the after-call hooks see it with its result.
"""

from __future__ import annotations

import dataclasses
import errno
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from caretz import inbound
from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import ToolCall, ToolSpec
from caretz.permissions.modes import READ_ONLY_MODES, Effect
from caretz.private_data import DataWriteFailed
from caretz.sandbox.paths import PathRefused
from caretz.tools.arguments import validate_arguments
from caretz.tools.base import Tool, ToolArgumentError, ToolContext, ToolResult
from caretz.tools.bash import BashTool
from caretz.tools.edit_tool import EditTool, MultiEditTool
from caretz.tools.file_access import FileProblem
from caretz.tools.file_reads import FileReads
from caretz.tools.files import ReadTool, WriteTool
from caretz.tools.jobs import JobOutputTool, JobStopTool
from caretz.tools.policy import BeforeCall, CancelToolCall, EndTurn
from caretz.tools.result_cap import fit
from caretz.tools.search import GlobTool, GrepTool
from caretz.tools.todo import TodoTool

if TYPE_CHECKING:
    from caretz.tools.narrowing import ToolLimit


class ToolCrash(Exception):
    """An unexpected exception inside a tool's own code."""

    def __init__(self, tool_name: str, error: BaseException):
        super().__init__(f"tool {tool_name!r} crashed: {type(error).__name__}: {error}")
        self.tool_name = tool_name
        self.error = error


@lazy_dataclass(frozen=True)
class ReadyCall:
    """A call that passed every check: the call, context and arguments the checks left."""

    call: ToolCall
    ctx: ToolContext
    args: dict[str, Any]


# Runs after a call that was not refused, with its result.
AfterCall = Callable[[ToolCall, ToolResult, ToolContext], None]


class LateTools(Protocol):
    """Tools that join a registry after it was made: those of MCP servers that start
    behind the interactive prompt."""

    def joined(self) -> Sequence[Tool]:
        """Every such tool ready now."""
        ...

    def wait_for(self, name: str, cancel: threading.Event) -> str | None:
        """For a call of `name` no registry has: wait for the tool when it is still on
        its way. None: nothing to wait for, or it has joined; else why it is not there."""
        ...


def default_tools(*, sandboxed: bool = True) -> list[Tool]:
    """The built-in tools of one agent; its file tools share what it has read. `sandboxed`:
    whether commands run in a sandbox (bash says so)."""
    reads = FileReads()
    return [
        BashTool(sandboxed=sandboxed),
        ReadTool(reads),
        WriteTool(reads),
        EditTool(reads),
        MultiEditTool(reads),
        GlobTool(),
        GrepTool(),
        TodoTool(),
        JobOutputTool(),
        JobStopTool(),
    ]


def withheld_effects(mode: str) -> frozenset[Effect]:
    """What a permission mode never lets run, so its tools are not offered: read-only
    and plan mode refuse every file change and everything outside the sandbox; only plan
    mode offers the tool that ends it."""
    if mode in READ_ONLY_MODES:
        never: set[Effect] = (
            {"edit", "external"} if mode == "plan" else {"edit", "external", "plan"}
        )
        return frozenset(never)
    return frozenset({"plan"})


class ToolRegistry:
    def __init__(
        self,
        tools: Iterable[Tool],
        *,
        before_call: Sequence[BeforeCall] = (),
        after_call: Sequence[AfterCall] = (),
        withheld: frozenset[Effect] = frozenset(),
        sandboxed: bool = True,
    ):
        self._tools: dict[str, Tool] = {}
        self.before_call = tuple(before_call)
        self.after_call = tuple(after_call)
        # Tools whose effect is withheld are not offered to the model (specs()); a call
        # that names one anyway still meets the permission check, which refuses it.
        self.withheld = withheld
        self.sandboxed = sandboxed  # what the default tools say of commands (fresh())
        self.late: LateTools | None = None  # tools that join once ready (MCP servers')
        # A named subagent's limits (tools/narrowing.py): no tool they refuse is added.
        self.limits: tuple[ToolLimit, ...] = ()
        for tool in tools:
            self.add(tool)

    def fresh(
        self, limit: ToolLimit | None = None, withheld: frozenset[Effect] = frozenset()
    ) -> ToolRegistry:
        """The default tools and those added (MCP servers') under the same checks, limits and
        hooks (a subagent's; each adds its own `task`). `limit`: one more, a named subagent's,
        checked before the session's checks and after them (a hook may put another call in
        place); `withheld`: effects not offered besides."""
        tools = default_tools(sandboxed=self.sandboxed)
        own = {tool.spec.name for tool in tools} | {"task", "exit_plan_mode"}
        added = [_for_subagent(tool) for name, tool in self._tools.items() if name not in own]
        checks: tuple[BeforeCall, ...] = self.before_call
        if limit is not None:
            checks = (limit, *checks, limit)
        registry = ToolRegistry(
            (),
            before_call=checks,
            after_call=self.after_call,
            withheld=self.withheld | withheld,
            sandboxed=self.sandboxed,
        )
        registry.limits = self.limits if limit is None else (*self.limits, limit)
        for tool in (*tools, *added):
            registry.add(tool)
        registry.late = self.late
        return registry

    def permits(self, name: str) -> bool:  # whether the limits let a tool `name` join
        return all(limit.permits(name) for limit in self.limits)

    def specs(self) -> list[ToolSpec]:
        """The tools offered to the model: all but those whose effect is withheld (late
        tools that are ready join first)."""
        self._join()
        return [
            tool.spec
            for name, tool in self._tools.items()
            if self.effect_of(name) not in self.withheld
        ]

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def add(self, tool: Tool) -> None:
        name = tool.spec.name
        if not self.permits(name):
            return  # a named subagent's limits leave it out
        if name in self._tools:
            raise ValueError(f"a tool named {name!r} is already registered")
        # A new dict, not an insert: another thread may be going through the old one.
        self._tools = {**self._tools, name: tool}

    def _join(self) -> None:
        if self.late is not None:
            for tool in self.late.joined():
                if tool.spec.name not in self._tools and self.permits(tool.spec.name):
                    self.add(tool)

    def _on_its_way(self, call: ToolCall, ctx: ToolContext) -> ToolResult | None:
        """A call of a tool that has not joined yet: wait for it; its failed result when
        it does not come."""
        if self.late is None or call.name in self._tools:
            return None
        problem = self.late.wait_for(call.name, ctx.cancel)
        self._join()
        return _failed(problem) if problem and call.name not in self._tools else None

    def effect_of(self, name: str) -> Effect | None:
        """What the tool named `name` does (tools/base.py's `effect`); None: no such tool."""
        tool = self._tools.get(name)
        return None if tool is None else cast(Effect, getattr(tool, "effect", "external"))

    def rule_names(self, call: ToolCall) -> tuple[str, ...]:
        """The names besides its own that `call` answers to in permission rules (a tool's
        `rule_names(args)`, as the MCP resource tools have)."""
        named = getattr(self._tools.get(call.name), "rule_names", None)
        if named is None or not isinstance(call.arguments, dict):
            return ()
        return tuple(named(call.arguments))

    def run(
        self, call: ToolCall, ctx: ToolContext, before_call: Sequence[BeforeCall] = ()
    ) -> ToolResult:
        """Run one call, after the registry's checks and then `before_call`'s.

        Raises ToolCrash only for a bug inside the tool.
        """
        started = self.start(call, ctx, before_call)
        if isinstance(started, ToolResult):
            return started
        return self.finish(started, self.invoke(started))

    def start(
        self, call: ToolCall, ctx: ToolContext, before_call: Sequence[BeforeCall] = ()
    ) -> ReadyCall | ToolResult:
        """A call's checks (which may ask the user): the call ready to run, or its failed
        result. `run` is `start`, `invoke`, `finish`; a caller that runs several calls at
        once starts them one by one, invokes them together and finishes them in order."""
        missing = self._on_its_way(call, ctx)
        if missing is not None:
            return fit(missing, ctx.output_limit_chars)
        prepared = self._prepare(call)
        if isinstance(prepared, ToolResult):
            return fit(prepared, ctx.output_limit_chars)
        ctx = dataclasses.replace(
            ctx, effect=self.effect_of(call.name), rule_names=self.rule_names(call)
        )
        try:
            call, ctx, args = self._checked(call, ctx, prepared, before_call)
        except CancelToolCall as refusal:
            return fit(_failed(refusal.reason), ctx.output_limit_chars)  # a hook's reason too
        return ReadyCall(call, ctx, args)

    def invoke(self, ready: ReadyCall) -> ToolResult:
        """The tool's run (safe in a worker thread for a call `runs_in_parallel` allows)."""
        started = time.monotonic()
        result = self._invoke(ready.call, ready.args, ready.ctx)
        if result.duration_s == 0:
            result.duration_s = time.monotonic() - started
        return result

    def finish(self, ready: ReadyCall, result: ToolResult) -> ToolResult:
        """The after-call hooks, in the caller's thread; then the result as valid Unicode,
        fitted to the call's cap (tools/result_cap.py), whatever the tool or a hook made of it."""
        for hook in self.after_call:
            hook(ready.call, result, ready.ctx)
        return fit(valid_text(result), ready.ctx.output_limit_chars)

    def runs_in_parallel(self, call: ToolCall) -> bool:
        """Whether `call` may run beside other such calls of one reply: the built-in read-only
        tools (effect "read"), MCP tools marked read-only (`readOnlyHint`), a tool that says
        so of this call's arguments (`reads_only(args)`: a read-only subagent's task)."""
        tool = self._tools.get(call.name)
        if tool is None:
            return False
        reads_only = getattr(tool, "reads_only", None)
        if callable(reads_only):
            return isinstance(call.arguments, dict) and reads_only(call.arguments) is True
        return self.reads_only(call.name)

    def reads_only(self, name: str) -> bool:  # its effect "read", or marked read-only
        tool = self._tools.get(name)
        read = getattr(tool, "effect", None) == "read"
        return tool is not None and (read or getattr(tool, "read_only", False) is True)

    def _checked(
        self,
        call: ToolCall,
        ctx: ToolContext,
        args: dict[str, Any],
        before_call: Sequence[BeforeCall],
    ) -> tuple[ToolCall, ToolContext, dict[str, Any]]:
        """The call, context and arguments the checks let through; raises CancelToolCall."""
        for check in (*self.before_call, *before_call):
            outcome = check(call, ctx)
            if outcome is None:
                continue
            if outcome.call is not None and outcome.call != call:
                prepared = self._prepare(outcome.call)
                if isinstance(prepared, ToolResult):
                    raise CancelToolCall(prepared.output)
                call, args = outcome.call, prepared
                # A grant (or a hook's word) was given for the call as it was; it does not
                # carry over.
                ctx = dataclasses.replace(
                    ctx,
                    escalated=False,
                    permission_hint=None,
                    effect=self.effect_of(call.name),
                    rule_names=self.rule_names(call),
                )
            if outcome.escalated and not ctx.escalated:
                ctx = dataclasses.replace(ctx, escalated=True)
            if outcome.hint is not None:
                ctx = dataclasses.replace(ctx, permission_hint=outcome.hint)
        return call, ctx, args

    def _prepare(self, call: ToolCall) -> dict[str, Any] | ToolResult:
        """The call's arguments, checked against its tool's schema, or the failed result."""
        tool = self._tools.get(call.name)
        refusing = [limit for limit in self.limits if not limit.permits(call.name)]
        if refusing:  # a named subagent's tools leave it out: say so, not "unknown"
            return _failed(refusing[0].refusal(call.name))
        if tool is None:
            available = ", ".join(self._tools) or "none"
            return _failed(f"Unknown tool {call.name!r}. Available tools: {available}.")
        if call.arguments_error:
            # arguments_error says what was wrong and quotes what was sent.
            return _failed(
                f"Not run: {call.arguments_error}. "
                f"Send one JSON object that fits the {call.name} tool's schema."
            )
        if not isinstance(call.arguments, dict):
            return _failed(f"The arguments for {call.name} must be a JSON object.")
        try:
            arguments = inbound.checked(call.arguments, "the arguments", surrogates="refuse")
        except inbound.BadInput as problem:
            return _failed(
                f"Not run: {problem}. Send one JSON object that fits the {call.name} tool's schema."
            )
        # A null optional argument means "not given", as models often send it.
        args = {key: value for key, value in arguments.items() if value is not None}
        problems = validate_arguments(tool.spec.parameters, args)
        if problems:
            return _failed(f"Invalid arguments for {call.name}: {'; '.join(problems)}.")
        return args

    def _invoke(self, call: ToolCall, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        tool = self._tools[call.name]
        try:
            return tool.run(args, ctx)
        except ToolArgumentError as error:
            return _failed(f"Invalid arguments for {call.name}: {error}")
        except EndTurn:  # the tool ends the turn (exit_plan_mode's headless plan)
            raise
        except (PathRefused, FileProblem) as refusal:
            # A path outside what the sandbox allows, or a file the tool cannot use as
            # asked: one line, the call did nothing.
            return _failed(str(refusal))
        except DataWriteFailed:
            raise  # caretz's own data folder, not the model's call: the turn ends on it
        except OSError as error:
            # The system refused what the arguments asked (a path that changed under the
            # call, EINVAL, a name too long): the model's to fix, not a bug in the tool.
            return _failed(_os_error_text(call.name, error))
        except ValueError as error:
            if "null byte" not in str(error):
                raise ToolCrash(call.name, error) from error
            return _failed(
                f"Not run: an argument of {call.name} holds a NUL byte, which no path, "
                "command or file name can hold; send it without the NUL byte"
            )
        except Exception as error:
            raise ToolCrash(call.name, error) from error


def _failed(output: str) -> ToolResult:
    return valid_text(ToolResult(ok=False, output=output))


def valid_text(result: ToolResult) -> ToolResult:
    """`result` with its output and diff as valid Unicode (caretz/inbound.py)."""
    texts = (result.output, result.diff or "")
    if not any(inbound.has_surrogate(text) for text in texts):
        return result
    diff = inbound.clean_text(result.diff) if result.diff is not None else None
    return dataclasses.replace(result, output=inbound.clean_text(result.output), diff=diff)


def _os_error_text(name: str, error: OSError) -> str:
    code = errno.errorcode.get(error.errno or 0, "")
    reason = error.strerror or str(error) or type(error).__name__
    where = f" ({error.filename})" if error.filename else ""
    return f"{name} failed: {reason}{f' [{code}]' if code else ''}{where}"


def _for_subagent(tool: Tool) -> Tool:
    """A tool that keeps what its agent's conversation holds (the `skill` tool) gives a
    subagent its own copy; the others are shared."""
    own_copy = getattr(tool, "for_subagent", None)
    return own_copy() if callable(own_copy) else tool
