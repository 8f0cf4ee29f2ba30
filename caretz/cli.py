"""The `caretz` command. Thin: options in, plain functions do the work.

Imports stay inside the commands so `caretz --help` and `--version` start fast.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    add_completion=False,
    help="caretz: a terminal coding agent that stops paying for a turn going in circles.",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=(
        "Exit codes: 0 done, 1 runtime failure, 2 usage or config error, "
        "3 the loop guard ended the turn, 4 a limit ended it, 130 interrupted "
        "(143 SIGTERM, 129 SIGHUP)."
    ),
    rich_markup_mode=None,
)
sessions_app = typer.Typer(help="List and inspect past sessions.", no_args_is_help=True)
config_app = typer.Typer(help="Inspect the resolved configuration.", no_args_is_help=True)
app.add_typer(sessions_app, name="sessions")
app.add_typer(config_app, name="config")

GUARD = "Loop guard"


def _version(value: bool) -> None:
    if value:
        from caretz import __version__

        typer.echo(f"caretz {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def main_command(
    ctx: typer.Context,
    prompt: Annotated[
        str | None, typer.Option("-p", "--prompt", help="Run one turn headless and exit.")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="provider/model, or a bare ID with --base-url.")
    ] = None,
    profile: Annotated[
        str | None, typer.Option(help="Profile in profiles.json [env: CARETZ_PROFILE].")
    ] = None,
    config: Annotated[
        Path | None, typer.Option(help="profiles.json to read [env: CARETZ_CONFIG].")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="An OpenAI-compatible endpoint for a bare model ID.")
    ] = None,
    reasoning: Annotated[str | None, typer.Option(help="off, low, medium or high.")] = None,
    max_tool_calls: Annotated[
        int | None, typer.Option(help="End the run after this many tool calls.")
    ] = None,
    max_budget_usd: Annotated[
        float | None, typer.Option(help="End the run once it has cost this much.")
    ] = None,
    output: Annotated[
        str | None, typer.Option(help="text, detailed or json (events as JSONL).")
    ] = None,
    resume: Annotated[
        str | None, typer.Option("--resume", "-r", help="Carry on session ID.")
    ] = None,
    continue_: Annotated[
        bool, typer.Option("--continue", "-c", help="Carry on the latest session.")
    ] = False,
    loop_guard: Annotated[
        str | None,
        typer.Option(help="off, shadow or active [env: CARETZ_LOOP_GUARD].", rich_help_panel=GUARD),
    ] = None,
    loop_guard_model: Annotated[
        str | None,
        typer.Option(help="Judge model (replaces the configured judge).", rich_help_panel=GUARD),
    ] = None,
    loop_guard_reasoning: Annotated[
        str | None,
        typer.Option(help="Judge reasoning: off, low, medium, high.", rich_help_panel=GUARD),
    ] = None,
    loop_guard_check_every: Annotated[
        int | None,
        typer.Option(help="Ask the judge every N tool calls (0 = off).", rich_help_panel=GUARD),
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    # The options above that override settings reach them by name, from ctx.params.
    from caretz.config.overrides import given_flags

    flags = ctx.obj = given_flags(ctx.params)
    if ctx.invoked_subcommand is not None:
        return
    session = "latest" if continue_ else resume
    from caretz.commands import run_cli

    raise typer.Exit(run_cli(flags, prompt, session))


@config_app.command("show")
def config_show(ctx: typer.Context) -> None:
    """Print the resolved settings as JSON (API keys are never shown)."""
    from caretz.commands import show_config

    raise typer.Exit(show_config(ctx.obj))


@sessions_app.command("list")
def sessions_list(ctx: typer.Context) -> None:
    """Past sessions, oldest first."""
    from caretz.commands import list_sessions

    raise typer.Exit(list_sessions(ctx.obj))


@sessions_app.command("show")
def sessions_show(ctx: typer.Context, session_id: str) -> None:
    """A session's turns, tool calls and loop-guard verdicts."""
    from caretz.commands import show_session

    raise typer.Exit(show_session(ctx.obj, session_id))


def _mount_guard() -> None:
    from caretz.eval.cli import guard_app

    app.add_typer(guard_app, name="guard")


def main() -> None:
    # caretz uses no pydantic plugins; looking for them scans every installed
    # package's metadata, a noticeable share of start-up. Users can still opt in.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    _mount_guard()
    try:
        code = app(standalone_mode=False)
    except _click_exception() as error:  # a bad flag or argument: exit 2
        error.show()
        if wants_json(sys.argv[1:]):
            from caretz.commands import write_usage_result

            write_usage_result(error.format_message())
        code = error.exit_code
    except typer.Abort:
        typer.echo("Aborted!", err=True)
        code = 1
    sys.exit(code if isinstance(code, int) else 0)


def _click_exception() -> type[Exception]:
    """click's ClickException, from whichever click Typer runs on (newer Typers carry their
    own copy): BadParameter's grandparent, through UsageError."""
    return typer.BadParameter.__bases__[0].__bases__[0]


def wants_json(argv: list[str]) -> bool:
    """Whether the command line asks a run for `--output json`, read before it is parsed."""
    if argv and argv[0] in ("sessions", "config", "guard"):
        return False  # a subcommand, not a run: it has no result object
    pairs = zip(argv, [*argv[1:], ""], strict=True)
    return "--output=json" in argv or any(a == "--output" and b == "json" for a, b in pairs)
