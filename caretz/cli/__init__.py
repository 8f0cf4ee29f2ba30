"""The `caretz` command. Thin: options in, plain functions do the work.

The commands' modules are declared lazy below, so `caretz --help` and `--version` load none.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from caretz import __version__
from caretz.cli.subcommands import add_subcommands
from caretz.cli_options import (
    Group,
    click_exception,
    stdout_reader_gone,
    wants_json,
    with_resume_pick,
)
from caretz.lazy import lazy_module
from caretz.private_data import DataWriteFailed

if TYPE_CHECKING:
    from caretz.commands import run as run_command
    from caretz.commands import worktree as worktree_command
    from caretz.config import flags as config_flags
else:
    # Each command's work, loaded when that command runs: --help and --version load none of it.
    config_flags = lazy_module("caretz.config.flags")
    run_command = lazy_module("caretz.commands.run")
    worktree_command = lazy_module("caretz.commands.worktree")

app = typer.Typer(
    cls=Group,
    add_completion=False,
    help="caretz: a terminal coding agent that stops paying for a turn going in circles.",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=(
        "Exit codes: 0 done, 1 runtime failure, 2 usage or config error, "
        "3 the loop guard ended the turn, 4 a limit ended it, 5 the goal was judged "
        "impossible, 6 a hook blocked the prompt or ended the turn, 130 interrupted "
        "(143 SIGTERM, 129 SIGHUP)."
    ),
    rich_markup_mode=None,
)
add_subcommands(app)

GUARD = "Loop guard"
GOAL = "Goals"
SANDBOX = "Sandbox"


def _version(value: bool) -> None:
    if value:
        typer.echo(f"caretz {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def main_command(
    ctx: typer.Context,
    prompt: Annotated[
        str | None,
        typer.Option(
            "-p",
            "--prompt",
            "--print",
            help="Run headless and exit. Text piped on stdin is added to the prompt (a "
            "blank line, then the text in a fenced block; at most 256 KiB, and an open "
            'pipe gets 3 s to start); "-p -" reads the prompt itself from stdin.',
        ),
    ] = None,
    input_format: Annotated[
        str,
        typer.Option(
            help="text, or stream-json: user messages as JSON lines on stdin "
            '({"type": "user", "message": {"role": "user", "content": ...}}), each '
            "answered in one session as --output json events (no -p).",
        ),
    ] = "text",
    model: Annotated[
        str | None,
        typer.Option("--model", "-m", help="provider/model, or a bare ID with --base-url."),
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
        str | None,
        typer.Option(
            "--output",
            "--output-format",
            help="text, detailed or json (events as JSONL, then the result object; "
            "stream-json is json).",
        ),
    ] = None,
    resume: Annotated[
        str | None, typer.Option("--resume", "-r", help="Carry on session ID (no ID: pick one).")
    ] = None,
    continue_: Annotated[
        bool, typer.Option("--continue", "-c", help="Carry on this folder's latest session.")
    ] = False,
    permission_mode: Annotated[
        str | None,
        typer.Option(
            help="auto, ask, read-only, plan or yolo: what runs without asking "
            "[env: CARETZ_PERMISSION_MODE]."
        ),
    ] = None,
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
    loop_guard_config: Annotated[
        str | None,
        typer.Option(
            help="The whole loopGuard section as JSON, replacing the profile's (scheduled runs).",
            rich_help_panel=GUARD,
        ),
    ] = None,
    goal: Annotated[
        str | None,
        typer.Option(
            help="Work until this holds; checked after each turn (alone, it is also the prompt).",
            rich_help_panel=GOAL,
        ),
    ] = None,
    goal_model: Annotated[
        str | None,
        typer.Option(
            help="The model that checks the goal (replaces goal.judge).", rich_help_panel=GOAL
        ),
    ] = None,
    goal_reasoning: Annotated[
        str | None,
        typer.Option(help="Its reasoning: off, low, medium, high.", rich_help_panel=GOAL),
    ] = None,
    goal_max_turns: Annotated[
        int | None,
        typer.Option(help="End the goal after this many turns (default 20).", rich_help_panel=GOAL),
    ] = None,
    env_file: Annotated[
        Path | None,
        typer.Option(help="Read NAME=value lines (API keys) from this file (chmod 600)."),
    ] = None,
    job: Annotated[
        str | None, typer.Option(hidden=True, help="The scheduled job this run is.")
    ] = None,
    sandbox: Annotated[
        str | None,
        typer.Option(
            help="workspace-write, read-only or off [env: CARETZ_SANDBOX].",
            rich_help_panel=SANDBOX,
        ),
    ] = None,
    add_dir: Annotated[
        list[str] | None,
        typer.Option(
            help="Another writable directory for commands (repeatable).", rich_help_panel=SANDBOX
        ),
    ] = None,
    allowed_tools: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-tools",
            "--allowedTools",
            help='Allow rules for this run only, e.g. "Bash(git diff:*)" mcp__time '
            "(repeatable; commas or spaces between rules).",
        ),
    ] = None,
    disallowed_tools: Annotated[
        list[str] | None,
        typer.Option(
            "--disallowed-tools",
            "--disallowedTools",
            help="Deny rules for this run only, in the same forms (repeatable).",
        ),
    ] = None,
    image: Annotated[
        list[str] | None,
        typer.Option(
            "--image",
            help="Attach an image file (PNG, JPEG, GIF, WebP) to the prompt (repeatable); "
            "@shot.png in a prompt attaches it too.",
        ),
    ] = None,
    worktree: Annotated[
        str | None,
        typer.Option(
            "--worktree",
            "-w",
            help="Work in the git worktree .caretz/worktrees/NAME on branch caretz/NAME, "
            "made from HEAD when there is none (docs/batch.md).",
        ),
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    if ctx.params.get("output") == "stream-json":  # the other CLIs' name for JSON lines
        ctx.params["output"] = "json"
    # The options above that override settings reach them by name, from ctx.params.
    flags = ctx.obj = config_flags.given_flags(ctx.params)
    if worktree is not None:
        env_file = ctx.params["env_file"] = env_file.absolute() if env_file else None
        problem = worktree_command.enter_worktree(worktree, flags, ctx.invoked_subcommand)
        if problem is not None:
            raise typer.Exit(run_command.fail_run(problem, flags.get("output") == "json"))
    if ctx.invoked_subcommand is not None:
        return
    session = "latest" if continue_ else resume
    raise typer.Exit(
        run_command.run_cli(
            flags,
            prompt,
            session,
            goal=goal,
            env_file=env_file,
            job=job,
            input_format=input_format,
        )
    )


def main() -> None:
    # caretz uses no pydantic plugins; looking for them scans every installed
    # package's metadata, a noticeable share of start-up. Users can still opt in.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        code = app(args=with_resume_pick(sys.argv[1:]), standalone_mode=False)
        sys.stdout.flush()  # here, where a reader that went away is caught below
    except (BrokenPipeError, SystemExit) as error:
        if not stdout_reader_gone(error):
            raise
        code = 0  # the reader stopped early (`caretz sessions list | head -1`): no failure
    except DataWriteFailed as error:  # a full or read-only data folder, outside a turn
        code = run_command.fail_data_write(str(error), wants_json(sys.argv[1:]))
    except click_exception() as error:  # a bad flag or argument: exit 2
        error.show()
        if wants_json(sys.argv[1:]):
            run_command.write_usage_result(error.format_message())
        code = error.exit_code
    except typer.Abort:
        typer.echo("Aborted!", err=True)
        code = 1
    sys.exit(code if isinstance(code, int) else 0)
