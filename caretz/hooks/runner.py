"""Running one hook command: the event as JSON on stdin, a timeout, its process group.

A hook runs what the project or the model can change (a script in the repository, a
Makefile, package.json), so it starts the way the bash tool starts a command
(tools/process.py's `start_process`): inside the session's sandbox, with its roots,
hidden paths and network policy, in the trusted bash (caretz/trusted.py), from the
project's folder. Its environment is caretz's with the secrets filtered out (the
shell's filter: no provider keys) plus CARETZ_PROJECT_DIR (and CLAUDE_PROJECT_DIR, for
hooks written for Claude Code). A hook the user marked `"sandbox": "off"` in their own
profile runs outside it, as a command let out of the sandbox does, and its PATH keeps
only the entries no sandboxed command can write; with the session's sandbox off every
hook runs that way. It leads a process group of its own: at its timeout, or on Ctrl-C,
the group is ended (tools/process.py's `end_group`), so nothing it started is left
running.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz import inbound
from caretz.tools.process import end_group, shell_program, start_process
from caretz.trusted import trusted_path, untrusted_roots

if TYPE_CHECKING:
    from caretz.sandbox.runner import Sandbox

KILL_GRACE_S = 1.0  # between SIGTERM and SIGKILL for a hook past its timeout
OUTPUT_CAP = 256 * 1024  # characters kept of each of stdout and stderr


@dataclass(frozen=True, kw_only=True)
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
    """Where hooks run, in which sandbox and with which variables."""

    project_dir: Path
    variables: Mapping[str, str]  # already filtered: no secrets
    sandbox: Sandbox  # the session's (its policy says whether it is off)

    def for_command(self, confined: bool = True) -> dict[str, str]:
        project = str(self.project_dir)
        variables = {**self.variables, "CARETZ_PROJECT_DIR": project, "CLAUDE_PROJECT_DIR": project}
        if not (confined and self.sandbox.enforced) and "PATH" in variables:
            roots = untrusted_roots(self.sandbox.policy.roots)
            variables["PATH"] = trusted_path(variables["PATH"], roots)
        return variables


def run_command(
    command: str,
    payload: Mapping[str, Any],
    where: HookEnvironment,
    timeout_s: float,
    clock: Callable[[], float] = time.monotonic,
    started_process: Callable[[subprocess.Popen[bytes]], None] | None = None,
    confined: bool = True,
) -> CommandRun:
    """`bash -c command` with `payload` as JSON on stdin, in the session's sandbox unless
    `confined` is False (the user's `"sandbox": "off"`); waits at most `timeout_s`.
    `started_process` gets the process as soon as it runs (to end it from elsewhere)."""
    started = clock()
    data = inbound.utf8(json.dumps(payload, ensure_ascii=False, default=str))
    sandbox = where.sandbox
    try:
        process = start_process(
            [shell_program(sandbox, confined), "-c", command],
            sandbox,
            cwd=where.project_dir,
            environ=where.for_command(confined),
            confined=confined,
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as error:
        return CommandRun(
            exit_code=None, stdout="", stderr="", duration_s=clock() - started, error=str(error)
        )
    if started_process is not None:
        started_process(process)
    try:
        out, err = process.communicate(data, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        end_group(process, KILL_GRACE_S)
        out, err = _leftovers(process)
        return CommandRun(
            exit_code=None,
            stdout=_text(out),
            stderr=_text(err),
            duration_s=clock() - started,
            timed_out=True,
        )
    except BaseException:  # Ctrl-C, SIGTERM: the hook's group ends with the run
        end_group(process, KILL_GRACE_S)
        _leftovers(process)
        raise
    return CommandRun(
        exit_code=process.returncode,
        stdout=_text(out),
        stderr=_text(err),
        duration_s=clock() - started,
    )


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
