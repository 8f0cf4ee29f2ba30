"""Running one hook command: the event as JSON on stdin, a timeout, its process group.

A hook is the user's own command, so it runs outside the sandbox, as the user, from
the project's folder; its environment is caretz's with the secrets filtered out (the
shell's filter: no provider keys) plus CARETZ_PROJECT_DIR (and CLAUDE_PROJECT_DIR, for
hooks written for Claude Code). It leads a process group of its own: at its timeout,
or on Ctrl-C, the group is ended (tools/process.py's `end_group`), so nothing it
started is left running.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from caretz import inbound
from caretz.tools.process import end_group

KILL_GRACE_S = 1.0  # between SIGTERM and SIGKILL for a hook past its timeout
OUTPUT_CAP = 256 * 1024  # characters kept of each of stdout and stderr


@dataclass(frozen=True)
class CommandRun:
    """How one hook command ran."""

    exit_code: int | None  # None: killed at its timeout, or it could not start
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    error: str | None = None  # why it could not start


@dataclass(frozen=True)
class HookEnvironment:
    """Where hooks run and with which variables."""

    project_dir: Path
    variables: Mapping[str, str]  # already filtered: no secrets

    def for_command(self) -> dict[str, str]:
        project = str(self.project_dir)
        return {**self.variables, "CARETZ_PROJECT_DIR": project, "CLAUDE_PROJECT_DIR": project}


def run_command(
    command: str,
    payload: Mapping[str, Any],
    where: HookEnvironment,
    timeout_s: float,
    clock: Callable[[], float] = time.monotonic,
    started_process: Callable[[subprocess.Popen[bytes]], None] | None = None,
) -> CommandRun:
    """`bash -c command` with `payload` as JSON on stdin; waits at most `timeout_s`.
    `started_process` gets the process as soon as it runs (to end it from elsewhere)."""
    started = clock()
    data = inbound.utf8(json.dumps(payload, ensure_ascii=False, default=str))
    try:
        process = subprocess.Popen(
            ["bash", "-c", command],
            cwd=where.project_dir,
            env=where.for_command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as error:
        return CommandRun(None, "", "", clock() - started, error=str(error))
    if started_process is not None:
        started_process(process)
    try:
        out, err = process.communicate(data, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        end_group(process, KILL_GRACE_S)
        out, err = _leftovers(process)
        return CommandRun(None, _text(out), _text(err), clock() - started, timed_out=True)
    except BaseException:  # Ctrl-C, SIGTERM: the hook's group ends with the run
        end_group(process, KILL_GRACE_S)
        _leftovers(process)
        raise
    return CommandRun(process.returncode, _text(out), _text(err), clock() - started)


def _leftovers(process: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """What a killed hook had written; a process that left its group and still holds
    the pipes open is not waited for."""
    try:
        return process.communicate(timeout=KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        return b"", b""


def _text(data: bytes | None) -> str:
    return (data or b"")[:OUTPUT_CAP].decode("utf-8", errors="replace")
