"""The `caretz` command. Thin: options in, plain functions do the work.

The commands' modules are declared lazy below, so `caretz --help` and `--version` load none.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from caretz import __version__
from caretz.cli_options import (
    Group,
    click_exception,
    stdout_reader_gone,
    wants_json,
    with_resume_pick,
)
from caretz.eval.cli import guard_app
from caretz.lazy import lazy_module
from caretz.schedule.cli import schedule_app

# Each command's work, loaded when that command runs: --help and --version load none of it.
config_flags = lazy_module("caretz.config.flags")
run_command = lazy_module("caretz.commands.run")
config_command = lazy_module("caretz.commands.config")
sessions_command = lazy_module("caretz.commands.sessions")
rewind_command = lazy_module("caretz.commands.rewind")
sandbox_command = lazy_module("caretz.commands.sandbox")
mcp_command = lazy_module("caretz.commands.mcp")
hooks_command = lazy_module("caretz.commands.hooks")
trust_command = lazy_module("caretz.commands.trust")
doctor_command = lazy_module("caretz.commands.doctor")
acp_server = lazy_module("caretz.acp.server")

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
sessions_app = typer.Typer(help="List and inspect past sessions.", no_args_is_help=True)
config_app = typer.Typer(help="Inspect the resolved configuration.", no_args_is_help=True)
sandbox_app = typer.Typer(help="The command sandbox.", no_args_is_help=True)
mcp_app = typer.Typer(
    help="MCP servers: mcpServers in profiles.json and the project's .mcp.json (docs/mcp.md).",
    no_args_is_help=True,
)
hooks_app = typer.Typer(
    help="Hooks: hooks in profiles.json and the project's .caretz/settings.json (docs/hooks.md).",
    no_args_is_help=True,
)
app.add_typer(sessions_app, name="sessions")
app.add_typer(config_app, name="config")
app.add_typer(schedule_app, name="schedule")
app.add_typer(sandbox_app, name="sandbox")
app.add_typer(mcp_app, name="mcp")
app.add_typer(hooks_app, name="hooks")
app.add_typer(guard_app, name="guard")

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
            help="auto, ask, read-only or yolo: what runs without asking "
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
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    if ctx.params.get("output") == "stream-json":  # the other CLIs' name for JSON lines
        ctx.params["output"] = "json"
    # The options above that override settings reach them by name, from ctx.params.
    given = ctx.obj = config_flags.given_flags(ctx.params)
    if ctx.invoked_subcommand is not None:
        return
    session = "latest" if continue_ else resume
    raise typer.Exit(
        run_command.run_cli(
            given,
            prompt,
            session,
            goal=goal,
            env_file=env_file,
            job=job,
            input_format=input_format,
        )
    )


@config_app.command("show")
def config_show(ctx: typer.Context) -> None:
    """Print the resolved settings as JSON (API keys are never shown)."""
    raise typer.Exit(config_command.show_config(ctx.obj))


@sessions_app.command("list")
def sessions_list(
    ctx: typer.Context,
    all_folders: Annotated[
        bool, typer.Option("--all", help="Every folder's sessions, not only this one's.")
    ] = False,
    limit: Annotated[int, typer.Option(help="Show the last N (0: all of them).", min=0)] = 20,
) -> None:
    """This folder's past sessions, oldest first: ID, age, folder, model, title."""
    raise typer.Exit(sessions_command.list_sessions(ctx.obj, all_folders, limit))


@sessions_app.command("show")
def sessions_show(ctx: typer.Context, session_id: str) -> None:
    """A session's turns, tool calls and loop-guard verdicts (SESSION_ID: any unique part)."""
    raise typer.Exit(sessions_command.show_session(ctx.obj, session_id))


@app.command("rewind")
def rewind(
    ctx: typer.Context,
    session: Annotated[
        str | None,
        typer.Argument(help="Session ID or a unique part [default: this folder's latest]."),
    ] = None,
    turn: Annotated[int | None, typer.Option(help="Back to before turn N's first change.")] = None,
    checkpoint: Annotated[
        str | None, typer.Option(help="Back to this checkpoint (an ID from the list).")
    ] = None,
    files_only: Annotated[
        bool, typer.Option("--files-only", help="Restore the files only.")
    ] = False,
    conversation_only: Annotated[
        bool, typer.Option("--conversation-only", help="Rewind the conversation only.")
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Overwrite files changed outside caretz since the checkpoint."
        ),
    ] = False,
    undo: Annotated[
        bool,
        typer.Option(
            "--undo",
            help="As /undo: undo the rewind just made, else rewind the newest turn that "
            "changed files.",
        ),
    ] = False,
) -> None:
    """Restore a session's files, conversation or both to a checkpoint; without
    --turn, --checkpoint or --undo, list its checkpoints."""
    scope = {"files_only": files_only, "conversation_only": conversation_only, "undo": undo}
    raise typer.Exit(
        rewind_command.rewind_session(ctx.obj, session, turn, checkpoint, force=force, **scope)
    )


@sandbox_app.command("check")
def sandbox_check(
    ctx: typer.Context,
    output: Annotated[str, typer.Option(help="text or json.")] = "text",
) -> None:
    """What sandbox works here and what it enforces; exit 1 when none does."""
    raise typer.Exit(sandbox_command.check_sandbox_command(ctx.obj, output))


@mcp_app.command("list")
def mcp_list(
    ctx: typer.Context,
    output: Annotated[str, typer.Option(help="text or json.")] = "text",
) -> None:
    """Start the servers, list each with its status and tools, stop them; exit 1 when one
    fails to start."""
    raise typer.Exit(mcp_command.list_mcp_servers(ctx.obj, output))


@mcp_app.command("approve")
def mcp_approve(
    ctx: typer.Context,
    names: Annotated[
        list[str] | None, typer.Argument(help="Servers of .mcp.json to approve [default: all].")
    ] = None,
) -> None:
    """Let servers of this project's .mcp.json start with each session (they run outside
    the sandbox)."""
    raise typer.Exit(mcp_command.approve_mcp_servers(ctx.obj, names or []))


@hooks_app.command("list")
def hooks_list(
    ctx: typer.Context,
    output: Annotated[str, typer.Option(help="text or json.")] = "text",
) -> None:
    """The hooks that apply here, the profile's and the project's, with the project's
    approval."""
    raise typer.Exit(hooks_command.hooks_command(ctx.obj, approve=False, output=output))


@hooks_app.command("approve")
def hooks_approve(ctx: typer.Context) -> None:
    """Let the hooks of this project's .caretz/settings.json run (they run outside the
    sandbox), as they are now: any change to them needs approval again."""
    raise typer.Exit(hooks_command.hooks_command(ctx.obj, approve=True))


@app.command("trust")
def trust(
    ctx: typer.Context,
    yes: Annotated[bool, typer.Option("--yes", help="Approve without asking (scripts).")] = False,
    show: Annotated[bool, typer.Option("--show", help="Print it; approve nothing.")] = False,
    revoke: Annotated[
        bool, typer.Option("--revoke", help="Forget every approval of this project's.")
    ] = False,
) -> None:
    """Show what this project's configuration lets caretz do (its allow rules, hooks, MCP
    servers, command files with shell lines) and approve it, whole, as it is now."""
    raise typer.Exit(trust_command.trust_command(ctx.obj, yes=yes, show=show, revoke=revoke))


@app.command("doctor")
def doctor(ctx: typer.Context) -> None:
    """What is set up here: provider keys (never their values), the default model and
    whether it can run, the sandbox, git, ripgrep, MCP servers, the data dir, the project's
    approval; a fix for each problem. Exit 0 when the default model can run, else 1."""
    raise typer.Exit(doctor_command.doctor_command(ctx.obj))


@app.command("acp")
def acp_command(ctx: typer.Context) -> None:
    """Serve an editor over the Agent Client Protocol on stdin/stdout (docs/acp.md); the
    root options apply, e.g. caretz --permission-mode ask acp."""
    root = ctx.parent.params if ctx.parent is not None else {}
    raise typer.Exit(acp_server.run_acp(ctx.obj or {}, root.get("env_file")))


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
    except click_exception() as error:  # a bad flag or argument: exit 2
        error.show()
        if wants_json(sys.argv[1:]):
            run_command.write_usage_result(error.format_message())
        code = error.exit_code
    except typer.Abort:
        typer.echo("Aborted!", err=True)
        code = 1
    sys.exit(code if isinstance(code, int) else 0)
