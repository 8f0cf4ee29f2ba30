"""The background-job tools: bash `background: true` starts one, `job_output` reads what it
printed (from an offset, a bounded slice at a time), `job_stop` ends it.

They are ordinary tools in the registry, so its checks (the permission policy, the
user's rules, the loop guard) apply to them as to any call; a job starts under the
same sandbox as any command.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from caretz.messages import ToolSpec
from caretz.text import one_line
from caretz.tools.base import Param, ToolArgumentError, ToolContext, ToolResult, object_schema
from caretz.tools.jobtable import BackgroundJob, JobError, JobTable
from caretz.tools.output import model_text

MAX_WAIT_S = 30.0
_STARTED = re.compile(r"Started background job (\S+): ")  # the first line start_background writes


def start_background(
    command: str, ctx: ToolContext, *, confined: bool = True, cwd: Path | None = None
) -> ToolResult:
    """Start `command` as a job in `cwd` (the workspace by default)."""
    try:
        job = ctx.jobs.start(command, Path(ctx.workspace), ctx.sandbox, confined=confined, cwd=cwd)
    except JobError as error:
        return ToolResult(ok=False, output=str(error))
    except OSError as error:
        return ToolResult(ok=False, output=f"Could not start bash: {error}")
    return ToolResult(
        ok=True,
        output=(
            f"Started background job {job.id}: {one_line(command, 200)}\n"
            f'Read its output with job_output (job_id "{job.id}") and stop it with job_stop; '
            "it is stopped when the session ends."
        ),
    )


def started_job_id(output: str) -> str | None:
    """The id of the job a bash call with `background: true` started, read from the result
    start_background wrote (None when it started none)."""
    match = _STARTED.match(output)
    return match.group(1) if match else None


JOB_ID = Param("string", 'The job\'s id, e.g. "j1".', required=True)


def heading(jobs: JobTable, job: BackgroundJob) -> str:
    return f"job {job.id} · {job.state()} · {jobs.age_s(job):.0f} s · {one_line(job.command, 120)}"


class JobOutputTool:
    effect = "internal"  # reads a job caretz started (tools/base.py)
    spec = ToolSpec(
        name="job_output",
        description=(
            "Read what a background job (started with bash background: true) has printed. "
            "Without offset it carries on where the previous read of that job stopped; the "
            "first line says whether the job is still running. wait: seconds to wait for new "
            f"output or the job's end (at most {MAX_WAIT_S:g}), e.g. for a server to start."
        ),
        parameters=object_schema(
            job_id=JOB_ID,
            offset=Param("integer", "Character offset to read from (0: from the start)."),
            wait=Param("number", "Seconds to wait for new output (default 0)."),
        ),
    )

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            job = ctx.jobs.get(args["job_id"])
        except JobError as error:
            return ToolResult(ok=False, output=str(error))
        offset = args.get("offset", job.read_offset)
        wait = float(args.get("wait", 0))
        if offset < 0 or wait < 0:
            raise ToolArgumentError("offset and wait must be 0 or more")
        if wait:
            job.log.wait_past(offset, min(wait, MAX_WAIT_S))
        piece = job.log.read(offset, ctx.output_limit_chars)
        job.read_offset = piece.next_offset
        lines = [heading(ctx.jobs, job)]
        if piece.dropped:
            lines.append(f"[{piece.dropped} earlier characters are no longer kept]")
        # Offsets count the job's raw output; the text is what a model reads (tools/output.py).
        lines.append(model_text(piece.text).rstrip("\n") if piece.text else "(no new output)")
        if piece.next_offset < piece.end:
            lines.append(
                f"[{piece.end - piece.next_offset} more characters; "
                f"read on with offset={piece.next_offset}]"
            )
        return ToolResult(ok=True, output="\n".join(lines))


class JobStopTool:
    effect = "internal"  # stops a job caretz started (tools/base.py)
    spec = ToolSpec(
        name="job_stop",
        description=(
            "Stop a background job and every process it started. Its output stays readable "
            "with job_output."
        ),
        parameters=object_schema(
            job_id=JOB_ID,
        ),
    )

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            job = ctx.jobs.get(args["job_id"])
        except JobError as error:
            return ToolResult(ok=False, output=str(error))
        stopped = ctx.jobs.stop(job)
        unread = job.log.end - job.read_offset
        lines = [
            f"Stopped job {job.id}." if stopped else f"Job {job.id} had already ended.",
            heading(ctx.jobs, job),
        ]
        if unread > 0:
            lines.append(f"[{unread} characters of output not read yet; job_output reads them]")
        return ToolResult(ok=True, output="\n".join(lines))
