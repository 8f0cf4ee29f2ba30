"""`caretz schedule ...`: scheduled headless runs through the user's crontab.

Every caretz command loads this module (the CLI mounts `schedule_app`), so what the
commands run is declared lazy below: `caretz --help` loads none of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from caretz.lazy import lazy_module

if TYPE_CHECKING:
    from caretz.schedule import commands as schedule_commands
else:
    # The jobs' work (crontab, the settings): loaded when a schedule command runs.
    schedule_commands = lazy_module("caretz.schedule.commands")

schedule_app = typer.Typer(
    help="Run caretz on a schedule, through your crontab (docs/scheduling.md).",
    no_args_is_help=True,
)


@schedule_app.command("add")
def schedule_add(
    ctx: typer.Context,
    schedule: Annotated[
        str, typer.Argument(help='Five cron fields, e.g. "*/10 * * * *", or a macro (@daily).')
    ],
    prompt: Annotated[str, typer.Option("-p", "--prompt", help="What the run is asked.")],
    goal: Annotated[
        str | None, typer.Option(help="Work until this holds, as with caretz --goal.")
    ] = None,
    profile: Annotated[str | None, typer.Option(help="The profile the run uses.")] = None,
    directory: Annotated[
        Path | None, typer.Option("--dir", help="Run in this folder (default: this one).")
    ] = None,
    env_file: Annotated[
        Path | None,
        typer.Option(
            help="Where the run reads its API keys (default: schedule.env by profiles.json)."
        ),
    ] = None,
) -> None:
    """Install a scheduled headless run, guarded as this command's settings say."""
    flags = {**(ctx.obj or {}), **({"profile": profile} if profile else {})}
    code = schedule_commands.add_job(
        flags, schedule, prompt, goal=goal, workdir=directory, env_file=env_file
    )
    raise typer.Exit(code)


@schedule_app.command("list")
def schedule_list(ctx: typer.Context) -> None:
    """Your scheduled jobs, with each one's last run."""
    raise typer.Exit(schedule_commands.list_jobs(ctx.obj or {}))


@schedule_app.command("remove")
def schedule_remove(ctx: typer.Context, job_id: str) -> None:
    """Remove a job's line from your crontab (every other line stays)."""
    raise typer.Exit(schedule_commands.remove_job(ctx.obj or {}, job_id))


@schedule_app.command("run")
def schedule_run(ctx: typer.Context, job_id: str) -> None:
    """Run a job's installed command now, as cron would."""
    raise typer.Exit(schedule_commands.run_job(ctx.obj or {}, job_id))
