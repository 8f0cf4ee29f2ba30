"""The bash tool: run a shell command in the workspace, with a timeout and Ctrl-C.

The command runs in its own process group (its own session, so it has no
controlling terminal and cannot prompt), and a timeout or a cancel kills the
whole group, so children started in the background die with it.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

from caretz.messages import ToolSpec
from caretz.tools.base import Param, ToolArgumentError, ToolContext, ToolResult, object_schema

MAX_TIMEOUT_S = 600.0
POLL_INTERVAL_S = 0.05
# Test summaries and errors sit at the end of output, so the tail gets the larger share.
HEAD_SHARE = 0.4
# How far a cut may move to land on a line boundary.
LINE_SNAP_CHARS = 200


class HeadTailBuffer:
    """Keeps the first and last characters of a stream within `limit`, counting the rest."""

    def __init__(self, limit: int):
        self.limit = max(limit, 0)
        self.head_cap = int(self.limit * HEAD_SHARE)
        self.tail_cap = self.limit - self.head_cap
        self.total = 0
        self._head = ""
        self._tail_parts: list[str] = []
        self._tail_len = 0

    def add(self, text: str) -> None:
        self.total += len(text)
        if len(self._head) < self.head_cap:
            room = self.head_cap - len(self._head)
            self._head += text[:room]
            text = text[room:]
        if not text:
            return
        self._tail_parts.append(text)
        self._tail_len += len(text)
        if self._tail_len > 2 * self.tail_cap + 4096:
            kept = "".join(self._tail_parts)[-self.tail_cap :] if self.tail_cap else ""
            self._tail_parts, self._tail_len = [kept], len(kept)

    def render(self) -> str:
        tail = "".join(self._tail_parts)
        tail = tail[-self.tail_cap :] if self.tail_cap else ""
        if self.total == len(self._head) + len(tail):
            return self._head + tail
        return self._render_cut(self._head, tail)

    def _render_cut(self, head: str, tail: str) -> str:
        newline = head.rfind("\n")
        if newline >= len(head) - LINE_SNAP_CHARS:
            head = head[: newline + 1]
        marker_room = len(f"[... {self.total} characters omitted ...]\n\n")
        room = max(self.limit - len(head) - marker_room, 0)
        tail = tail[len(tail) - room :] if room else ""
        newline = tail.find("\n")
        if 0 <= newline < LINE_SNAP_CHARS:
            tail = tail[newline + 1 :]
        omitted = self.total - len(head) - len(tail)
        separator = "" if not head or head.endswith("\n") else "\n"
        return f"{head}{separator}[... {omitted} characters omitted ...]\n{tail}"


def keep_head_and_tail(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, keeping its start and end around a marker line."""
    buffer = HeadTailBuffer(limit)
    buffer.add(text)
    return buffer.render()


class _PipeReader(threading.Thread):
    """Drains the command's output pipe into a HeadTailBuffer.

    A daemon: if a background process keeps the pipe open after the command
    exits, the reader goes on draining it (so that process never blocks on a
    full pipe) while the tool returns.
    """

    def __init__(self, stream: IO[bytes], limit: int):
        super().__init__(name="caretz-bash-output", daemon=True)
        self._stream = stream
        self._buffer = HeadTailBuffer(limit)
        self._lock = threading.Lock()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def run(self) -> None:
        read = getattr(self._stream, "read1", self._stream.read)
        try:
            while chunk := read(65536):
                self._add(self._decoder.decode(chunk))
            self._add(self._decoder.decode(b"", final=True))
        finally:
            self._stream.close()

    def _add(self, text: str) -> None:
        with self._lock:
            self._buffer.add(text)

    def text(self) -> str:
        with self._lock:
            return self._buffer.render()


class BashTool:
    effect = "shell"  # for the permission check (tools/base.py)
    spec = ToolSpec(
        name="bash",
        description=(
            "Run a shell command with `bash -c` in the workspace directory and return its "
            "combined stdout and stderr. A non-zero exit fails the call and ends the output "
            "with `[exit code N]`. There is no stdin and no terminal: use non-interactive "
            "flags. The command is killed, with all its child processes, after `timeout` "
            "seconds (default 120, at most 600). Long output keeps its start and end. "
            "Use read, edit, grep and glob for files rather than cat, sed, grep or find."
        ),
        parameters=object_schema(
            command=Param("string", "The command to run.", required=True),
            timeout=Param("number", "Seconds before the command is killed (at most 600)."),
            description=Param("string", "A few words on what the command does, shown to the user."),
            escalate=Param(
                "string",
                "Only when the command cannot work inside the sandbox (it needs the network, "
                "or to write outside the working directory): say why, in a few words. The "
                "user is asked to approve running this one command outside the sandbox.",
            ),
        ),
    )

    def __init__(self, kill_grace_s: float = 1.0, output_drain_s: float = 0.5):
        # kill_grace_s: time between SIGTERM and SIGKILL for the process group.
        # output_drain_s: after the command exits, how long to wait for output still in flight.
        self.kill_grace_s = kill_grace_s
        self.output_drain_s = output_drain_s

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command: str = args["command"]
        if not command.strip():
            raise ToolArgumentError("command is empty")
        timeout = _timeout(args, ctx)
        if ctx.cancel.is_set():
            return ToolResult(ok=False, output="[cancelled before the command started]")
        workspace = Path(ctx.workspace)
        if not workspace.is_dir():
            return ToolResult(ok=False, output=f"The workspace {workspace} is not a directory")
        started = time.monotonic()
        try:
            process = subprocess.Popen(
                ["bash", "-c", command],
                cwd=workspace,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as error:
            return ToolResult(ok=False, output=f"Could not start bash: {error}")
        assert process.stdout is not None
        reader = _PipeReader(process.stdout, ctx.output_limit_chars)
        reader.start()
        try:
            ending = _wait(process, started + timeout, ctx.cancel)
        except BaseException:
            # Ctrl-C arrives as KeyboardInterrupt here: the command's group must not outlive it.
            _kill_group(process, self.kill_grace_s)
            raise
        if ending is not None:
            _kill_group(process, self.kill_grace_s)
        reader.join(self.output_drain_s)
        duration = time.monotonic() - started
        notes = _notes(process.returncode, ending, timeout, reader.is_alive())
        output = "\n".join(part for part in [reader.text().rstrip("\n"), *notes] if part)
        return ToolResult(
            ok=ending is None and process.returncode == 0,
            output=output or "(no output)",
            exit_code=process.returncode,
            duration_s=duration,
        )


def _timeout(args: dict[str, Any], ctx: ToolContext) -> float:
    timeout = float(args.get("timeout", ctx.bash_timeout_s))
    if timeout <= 0:
        raise ToolArgumentError(f"timeout must be more than 0 seconds, got {timeout:g}")
    return min(timeout, MAX_TIMEOUT_S)


def _wait(process: subprocess.Popen[bytes], deadline: float, cancel: threading.Event) -> str | None:
    """None when the command exits by itself, else "timeout" or "cancelled"."""
    while process.poll() is None:
        if cancel.is_set():
            return "cancelled"
        left = deadline - time.monotonic()
        if left <= 0:
            return "timeout"
        cancel.wait(min(POLL_INTERVAL_S, left))
    return None


def _notes(code: int | None, ending: str | None, timeout: float, still_writing: bool) -> list[str]:
    if ending == "timeout":
        return [f"[timed out after {timeout:g}s; process group killed]"]
    if ending == "cancelled":
        return ["[cancelled; process group killed]"]
    notes = []
    if still_writing:
        notes.append("[background processes still hold the output; later output is not shown]")
    if code != 0:
        notes.append(f"[exit code {code}]")
    return notes


def _kill_group(process: subprocess.Popen[bytes], grace_s: float) -> None:
    # With start_new_session the leader's pid is the process group id.
    group = process.pid
    _signal_group(group, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        process.poll()  # reap the leader so it does not count as alive
        if not _group_alive(group):
            break
        time.sleep(0.02)
    else:
        _signal_group(group, signal.SIGKILL)
    # A leader still alive after SIGKILL is stuck in the kernel; nothing more to do.
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace_s)


def _signal_group(group: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signum)


def _group_alive(group: int) -> bool:
    """Whether any process of the group is still running (zombies do not count)."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not os.path.isdir("/proc/self"):
        return True
    # killpg(0) also finds zombies, which an init that never reaps leaves behind.
    return any(state not in ("Z", "X") for state in _states_in_group(group))


def _states_in_group(group: int) -> list[str]:
    states = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(os.path.join(entry.path, "stat")) as handle:
                stat = handle.read()
        except OSError:
            continue
        # Fields after the command name (which may hold spaces and parentheses).
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == group:
            states.append(fields[0])
    return states
