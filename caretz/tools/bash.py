"""The bash tool: run a shell command in the workspace, in the sandbox, with a timeout.

The command starts the way every caretz command does (caretz.tools.process): in the
session's sandbox, with the filtered environment, in its own process group. A timeout,
a cancel or Ctrl-C ends the group, and with it everything the command started. What
ended a command is said in words with the time it ran and its partial output: "timed
out after 5 s", "interrupted by the user after 2.1 s", never an exit code such as -15.
With `background: true` the command becomes a job (caretz.tools.jobs) and the call
returns at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from caretz.messages import ToolSpec
from caretz.tools.base import (
    Param,
    ToolArgumentError,
    ToolContext,
    ToolInterrupted,
    ToolResult,
    interrupted_result,
    object_schema,
)
from caretz.tools.jobs import start_background
from caretz.tools.output import (
    FullOutput,
    HeadTailBuffer,
    ModelTextStream,
    PipeReader,
    keep_head_and_tail,
)
from caretz.tools.process import Process, end_group, start_shell
from caretz.tools.workdir import start_dir, take_report, with_report

__all__ = ["BashTool", "HeadTailBuffer", "keep_head_and_tail"]

MAX_TIMEOUT_S = 600.0
# The wait wakes at the command's exit; between exits it also wakes this often, for a
# cancel and for an interrupt raised in a worker thread (app/cancel.py), which lands
# only when the thread runs Python code.
WAKE_S = 0.05


def escalated(ctx: ToolContext) -> bool:
    """Whether the user let this one call run outside the sandbox (the permission
    policy sets `escalated` on the call's context when it approves an escalation)."""
    return ctx.escalated


_RUNS_SANDBOXED = (
    "Commands run in a sandbox: writes outside the workspace fail, the network may be off, "
    "and API keys are not in the environment. "
)
_RUNS_UNSANDBOXED = "Commands run without a sandbox, with the user's rights and network. "


def bash_spec(sandboxed: bool = True) -> ToolSpec:
    """The bash tool as the model sees it; without a sandbox (yolo, or `sandbox.mode` off)
    nothing in it promises one, and there is no `escalate` to ask out of it."""
    params = {
        "command": Param("string", "The command to run.", required=True),
        "timeout": Param("number", "Seconds before the command is killed (at most 600)."),
        "description": Param("string", "A few words on what the command does, shown to the user."),
        "background": Param(
            "boolean", "Run it as a background job and return its id at once (default false)."
        ),
    }
    if sandboxed:
        params["escalate"] = Param(
            "string",
            "Only when the command cannot work inside the sandbox (it needs the network, "
            "or to write outside the working directory): say why, in a few words. The "
            "user is asked to approve running this one command outside the sandbox.",
        )
    return ToolSpec(
        name="bash",
        description=(
            "Run a shell command with `bash -c` in the workspace directory and return its "
            "combined stdout and stderr. A non-zero exit fails the call and ends the output "
            "with `[exit code N]`. There is no stdin and no terminal: use non-interactive "
            "flags. The working directory carries over to the next command (a `cd` holds); "
            "variables and other shell state do not. The command is killed, with all its child processes, after `timeout` "
            "seconds (default 120, at most 600); nothing it starts outlives it. "
            f"{_RUNS_SANDBOXED if sandboxed else _RUNS_UNSANDBOXED}"
            "For a process that must keep running (a "
            "dev server, a watcher), set background: the call returns a job id at once; "
            "read its output with job_output and stop it with job_stop. "
            "Long output keeps its start and end, and names a file that keeps all of it. "
            "Use read, edit, grep and glob for files rather than cat, sed, grep or find."
        ),
        parameters=object_schema(**params),
    )


class BashTool:
    effect = "shell"  # for the permission check (tools/base.py)
    spec = bash_spec()

    def __init__(
        self,
        kill_grace_s: float = 1.0,
        output_drain_s: float = 0.5,
        *,
        sandboxed: bool = True,
        wake_s: float = WAKE_S,
    ):
        # kill_grace_s: time between SIGTERM and SIGKILL for the process group.
        # output_drain_s: after the command exits, how long to wait for output still in flight.
        # sandboxed: whether the session runs commands in a sandbox (what the spec says).
        # wake_s: how often the wait for a command wakes besides at its exit.
        if not sandboxed:
            self.spec = bash_spec(sandboxed=False)
        self.kill_grace_s = kill_grace_s
        self.output_drain_s = output_drain_s
        self.wake_s = wake_s

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command: str = args["command"]
        if not command.strip():
            raise ToolArgumentError("command is empty")
        timeout = _timeout(args, ctx)
        if ctx.cancel.is_set():
            return ToolResult(ok=False, output="[cancelled before the command started]")
        if not Path(ctx.workspace).is_dir():
            return ToolResult(ok=False, output=f"The workspace {ctx.workspace} is not a directory")
        confined = not escalated(ctx)
        cwd, reset = start_dir(ctx)
        if args.get("background"):
            return start_background(command, ctx, confined=confined, cwd=cwd)
        report = ctx.sandbox.cwd_report(confined) if ctx.sandbox is not None else None
        script = with_report(command, report[0]) if report else command
        started = time.monotonic()
        try:
            process = start_shell(script, ctx.workspace, ctx.sandbox, confined=confined, cwd=cwd)
        except OSError as error:
            return ToolResult(ok=False, output=f"Could not start bash: {error}")
        assert process.stdout is not None
        output = HeadTailBuffer(ctx.output_limit_chars)
        full = FullOutput(ctx.output_limit_chars)  # the whole of a long output, in a file
        if reset:
            output.add(reset + "\n")
        shaped = ModelTextStream(lambda text: _to_both(text, output, full))
        reader = PipeReader(process.stdout, shaped.feed)
        finish = _Finish(process, reader, output, started, self.output_drain_s, (shaped, full))
        finish.report = (ctx, report[1]) if report else None
        if ctx.sandbox is not None and confined:
            finish.network = ctx.sandbox.network_lines
        try:
            # Inside the try: an interrupt while the reader starts still ends the group.
            reader.start()
            ending = _wait(process, started + timeout, ctx.cancel, self.wake_s)
        except KeyboardInterrupt as interrupt:
            # Ctrl-C, SIGTERM or SIGHUP: the command's group must not outlive it, and the
            # model must learn that the command ran, for how long, and what it printed.
            end_group(process, self.kill_grace_s)
            raise ToolInterrupted(finish.result("interrupted", timeout), interrupt) from None
        except BaseException:
            end_group(process, self.kill_grace_s)
            raise
        if ending is not None:
            end_group(process, self.kill_grace_s)
        return finish.result(ending, timeout)


class _Finish:
    """Turns a command that ended (by itself or not) into its ToolResult."""

    def __init__(
        self,
        process: Process,
        reader: PipeReader,
        output: HeadTailBuffer,
        started: float,
        drain_s: float,
        shaped: tuple[ModelTextStream, FullOutput] | None = None,
    ):
        self.process, self.reader, self.output = process, reader, output
        self.started, self.drain_s, self.shaped = started, drain_s, shaped
        self.report: tuple[ToolContext, Path] | None = None  # where the cwd is reported
        # The network allowlist's refusals while it ran, and the user's answer (asked
        # unless Ctrl-C ended it); sandbox/netgate.py.
        self.network: Callable[[bool], list[str]] | None = None

    def result(self, ending: str | None, timeout: float) -> ToolResult:
        self.reader.join(self.drain_s)
        duration = time.monotonic() - self.started
        code = self.process.returncode if ending is None else None
        notes = _notes(code, ending, timeout, duration, self.reader.is_alive())
        if self.network is not None:
            notes = [*self.network(ending != "interrupted"), *notes]
        if self.report is not None:
            moved = take_report(*self.report)
            notes += [moved] if moved else []
        kept = None
        if self.shaped is not None:
            stream, full = self.shaped
            stream.flush()
            kept = full.notice()
        shown = self.output.render(kept).rstrip("\n")
        text = "\n".join(part for part in [shown, *notes] if part)
        if ending == "interrupted":
            return interrupted_result(duration, KILLED, text)
        return ToolResult(
            ok=ending is None and code == 0,
            output=text or "(no output)",
            exit_code=code,
            duration_s=duration,
            ended_by=ending,
        )


def _to_both(text: str, output: HeadTailBuffer, full: FullOutput) -> None:
    """What the model reads (no terminal escapes, progress lines collapsed), to the result
    and to the file that keeps a long output whole (tools/output.py)."""
    output.add(text)
    full.add(text)


def _timeout(args: dict[str, Any], ctx: ToolContext) -> float:
    timeout = float(args.get("timeout", ctx.bash_timeout_s))
    if timeout <= 0:
        raise ToolArgumentError(f"timeout must be more than 0 seconds, got {timeout:g}")
    return min(timeout, MAX_TIMEOUT_S)


def _wait(process: Process, deadline: float, cancel: threading.Event, wake_s: float) -> str | None:
    """None when the command exits by itself, else "timeout" or "cancelled"."""
    while process.poll() is None:
        if cancel.is_set():
            return "cancelled"
        left = deadline - time.monotonic()
        if left <= 0:
            return "timeout"
        if process.wait_exit(min(wake_s, left)):
            return None
    return None


KILLED = "the command and everything it started were killed"


def _notes(
    code: int | None, ending: str | None, timeout: float, duration: float, still_writing: bool
) -> list[str]:
    if ending == "timeout":
        return [f"[timed out after {timeout:g} s; {KILLED}]"]
    if ending == "cancelled":
        return [f"[cancelled after {duration:.1f} s; {KILLED}]"]
    if ending == "interrupted":
        return []  # its line is interrupted_result's
    notes = []
    if still_writing:
        notes.append("[background processes still hold the output; later output is not shown]")
    if code != 0:
        notes.append(f"[exit code {code}]")
    return notes
