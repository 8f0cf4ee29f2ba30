"""The bash commands' working directory, carried from one command to the next.

As in Claude Code: a `cd` in one command holds for the next; variables, aliases and
other shell state do not (each command is a new `bash -c`). The command reports where
it ended through an EXIT trap that writes `pwd -P` to a file in the session's /tmp
(sandbox/runtime.py). The command could write anything there, so what it reports is
only taken when it names an existing directory inside the sandbox's roots (the working
directory and the `--add-dir` dirs); anything else, and a directory that has gone
since, puts the next command back in the working directory, and the model is told.
A command that is killed, or replaces the trap, reports nothing: the directory stays.
The report is read through the door for that folder (sandbox/beneath.py): a report the
command swapped for a symlink (to a key) or a FIFO is not followed, nor waited on.
Background jobs start in the current directory and do not move it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from pathlib import Path

from caretz.sandbox.beneath import Beneath
from caretz.tools.base import ToolContext

MAX_REPORT_BYTES = 4096


def start_dir(ctx: ToolContext) -> tuple[Path, str | None]:
    """Where the next command starts, and a note when it is back at the working directory."""
    if ctx.sandbox is None:
        return Path(ctx.workspace), None
    runtime = ctx.sandbox.runtime
    current = runtime.workdir
    if current is None or _acceptable(ctx, current):
        return current or Path(ctx.workspace), None
    runtime.workdir = None
    return Path(ctx.workspace), _reset_note(current, ctx)


def with_report(command: str, report: str) -> str:
    """`command` with a trap that writes its final cwd to `report` (on one line, so
    line numbers in bash's messages stay the command's own)."""
    body = f"builtin pwd -P >| {shlex.quote(report)} 2>/dev/null"
    return f"trap {shlex.quote(body)} EXIT; {command}"


def take_report(ctx: ToolContext, host_file: Path) -> str | None:
    """Read what the command reported; a note when its cwd was not kept."""
    if ctx.sandbox is None:
        return None
    folder = Beneath(host_file.parent)
    try:
        data = folder.read(host_file.name, MAX_REPORT_BYTES)
    except OSError:
        data = None
    finally:
        with contextlib.suppress(OSError):
            folder.remove_file(host_file.name)
    text = (data or b"").decode(errors="replace").strip()
    if not text:
        return None  # killed, or the trap replaced: the directory stays
    path = Path(text)
    runtime = ctx.sandbox.runtime
    if "\n" not in text and path.is_absolute() and _acceptable(ctx, path):
        resolved = Path(os.path.realpath(path))
        runtime.workdir = None if resolved == Path(ctx.workspace).resolve() else resolved
        return None
    runtime.workdir = None
    return _reset_note(text, ctx)


def _acceptable(ctx: ToolContext, path: Path) -> bool:
    assert ctx.sandbox is not None
    resolved = Path(os.path.realpath(path))
    roots = ctx.sandbox.policy.roots
    return resolved.is_dir() and any(resolved == r or r in resolved.parents for r in roots)


def _reset_note(left: object, ctx: ToolContext) -> str:
    where = str(left).splitlines()[0][:200] if str(left) else "?"
    return (
        f"[the working directory {where} is outside the project or gone; "
        f"the next command starts in {ctx.workspace}]"
    )
