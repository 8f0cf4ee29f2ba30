"""`/jobs` in the interactive session: the background jobs the agent started (bash with
`background: true`), and `/jobs stop ID` to end one with everything it started."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from caretz.inbound import ascii_number
from caretz.text import one_line
from caretz.tools.jobtable import JobError

if TYPE_CHECKING:
    from caretz.ui.session_control import SessionControl

USAGE = "use /jobs to list the jobs, or /jobs stop ID (the ids /jobs lists, e.g. j1)"


def jobs_slash(repl: SessionControl, argument: str) -> None:
    words = argument.split()
    if not words:
        list_jobs(repl)
    elif words[0] == "stop" and len(words) == 2:
        stop_job(repl, words[1])
    else:
        repl.error(f"/jobs {argument}: {USAGE}")


def list_jobs(repl: SessionControl) -> None:
    jobs = repl.session.jobs
    listed = jobs.jobs()
    if not listed:
        repl.info("no background jobs in this session (the agent starts them with bash)")
        return
    table = Table(box=None, show_header=True, padding=(0, 2, 0, 0), header_style="dim")
    for column in ("job", "state", "age", "command"):
        table.add_column(column, no_wrap=column != "command", overflow="ellipsis")
    for job in listed:
        table.add_row(job.id, job.state(), f"{jobs.age_s(job):.0f}s", escape(job.command))
    repl.console.print(table)
    repl.info("jobs stop when the session ends; /jobs stop ID stops one now")


def stop_job(repl: SessionControl, job_id: str) -> None:
    """Stop one job and what it started; its output stays readable to the agent."""
    jobs = repl.session.jobs
    try:
        job = jobs.get(job_id if ascii_number(job_id) is None else f"j{job_id}")  # "3" is j3
    except JobError as error:
        repl.error(str(error))
        return
    command = one_line(job.command, 80)
    if jobs.stop(job):
        repl.info(f"stopped job {job.id}: {command}")
    else:
        repl.info(f"job {job.id} had already ended ({job.state()}): {command}")


def job_choices(repl: SessionControl) -> list[str]:
    """What `/jobs ` completes to: `stop`, then `stop ID` for each running job."""
    running = [job.id for job in repl.session.jobs.jobs() if job.running]
    return ["stop", *(f"stop {job_id}" for job_id in running)]
