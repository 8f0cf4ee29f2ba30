"""The `caretz` command's subcommands. Thin: options in, plain functions do the work.

Each command's module is declared lazy below and loaded only when that command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from caretz.batch.cli import batch
from caretz.eval.cli import guard_app
from caretz.lazy import lazy_module
from caretz.schedule.cli import schedule_app

if TYPE_CHECKING:
    from caretz.acp import server as acp_server
    from caretz.commands import agents as agents_command
    from caretz.commands import config as config_command
    from caretz.commands import doctor as doctor_command
    from caretz.commands import hooks as hooks_command
    from caretz.commands import mcp as mcp_command
    from caretz.commands import plugins as plugins_command
    from caretz.commands import rewind as rewind_command
    from caretz.commands import sandbox as sandbox_command
    from caretz.commands import sessions as sessions_command
    from caretz.commands import skills as skills_command
    from caretz.commands import trust as trust_command
    from caretz.commands import worktree as worktree_command
else:
    # Each command's work, loaded when that command runs: --help and --version load none of it.
    config_command = lazy_module("caretz.commands.config")
    sessions_command = lazy_module("caretz.commands.sessions")
    rewind_command = lazy_module("caretz.commands.rewind")
    sandbox_command = lazy_module("caretz.commands.sandbox")
    mcp_command = lazy_module("caretz.commands.mcp")
    plugins_command = lazy_module("caretz.commands.plugins")
    hooks_command = lazy_module("caretz.commands.hooks")
    skills_command = lazy_module("caretz.commands.skills")
    worktree_command = lazy_module("caretz.commands.worktree")
    trust_command = lazy_module("caretz.commands.trust")
    doctor_command = lazy_module("caretz.commands.doctor")
    agents_command = lazy_module("caretz.commands.agents")
    acp_server = lazy_module("caretz.acp.server")

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
agents_app = typer.Typer(
    help="Named subagents: .caretz/agents, .claude/agents and the user's (docs/agents.md).",
    no_args_is_help=True,
)
skills_app = typer.Typer(
    help="Skills: SKILL.md folders in .caretz/skills, .agents/skills, .claude/skills (docs/skills.md).",
    no_args_is_help=True,
)
plugin_app = typer.Typer(
    help="Claude Code plugins: commands, agents, skills, hooks, MCP servers (docs/plugins.md).",
    no_args_is_help=True,
)
marketplace_app = typer.Typer(
    help="Plugin marketplaces: .claude-plugin/marketplace.json in a folder or git repository.",
    no_args_is_help=True,
)
worktree_app = typer.Typer(
    help="caretz's git worktrees of this repository: .caretz/worktrees/NAME (docs/batch.md).",
    no_args_is_help=True,
)


def add_subcommands(app: typer.Typer) -> None:
    """The subcommand groups and the root's own commands, in the order `--help` lists them."""
    app.add_typer(sessions_app, name="sessions")
    app.add_typer(config_app, name="config")
    app.add_typer(schedule_app, name="schedule")
    app.add_typer(sandbox_app, name="sandbox")
    app.add_typer(mcp_app, name="mcp")
    app.add_typer(hooks_app, name="hooks")
    app.add_typer(agents_app, name="agents")
    app.add_typer(skills_app, name="skills")
    app.add_typer(worktree_app, name="worktree")
    app.add_typer(plugin_app, name="plugin")
    plugin_app.add_typer(marketplace_app, name="marketplace")
    app.add_typer(guard_app, name="guard")
    app.command("batch")(batch)
    app.command("rewind")(rewind)
    app.command("trust")(trust)
    app.command("doctor")(doctor)
    app.command("acp")(acp_command)


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


@mcp_app.command("login")
def mcp_login(ctx: typer.Context, name: str) -> None:
    """Log in to an HTTP MCP server that asks for OAuth, in your browser (its URL is printed
    too); the tokens are kept in caretz's data folder and refreshed as they expire."""
    raise typer.Exit(mcp_command.login_mcp_server(ctx.obj, name))


@mcp_app.command("logout")
def mcp_logout(ctx: typer.Context, name: str) -> None:
    """Remove the OAuth login kept for an HTTP MCP server (its tokens and registration)."""
    raise typer.Exit(mcp_command.logout_mcp_server(ctx.obj, name))


@hooks_app.command("list")
def hooks_list(
    ctx: typer.Context,
    output: Annotated[str, typer.Option(help="text or json.")] = "text",
) -> None:
    """The hooks that apply here, the profile's and the project's, with the project's
    approval."""
    raise typer.Exit(hooks_command.hooks_command(ctx.obj, approve=False, output=output))


@agents_app.command("list")
def agents_list(
    ctx: typer.Context,
    output: Annotated[str, typer.Option(help="text or json.")] = "text",
) -> None:
    """The named subagents the task tool offers here: the project's (up to its root) and
    the user's, each with where it comes from, its tools, model and mode."""
    raise typer.Exit(agents_command.agents_command(ctx.obj, output))


@hooks_app.command("approve")
def hooks_approve(ctx: typer.Context) -> None:
    """Let the hooks of this project's .caretz/settings.json run (in the session's
    sandbox), as they are now: any change to them needs approval again."""
    raise typer.Exit(hooks_command.hooks_command(ctx.obj, approve=True))


@skills_app.command("list")
def skills_list(
    ctx: typer.Context,
    output: Annotated[str, typer.Option(help="text or json.")] = "text",
) -> None:
    """The skills that apply here, the project's and yours, where each comes from and
    whether its allowed-tools apply."""
    raise typer.Exit(skills_command.skills_command(ctx.obj, output))


@plugin_app.command("install")
def plugin_install(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="A folder, a git URL, or NAME@MARKETPLACE.")],
) -> None:
    """Install a plugin: a copy of it in caretz's data dir, enabled."""
    run = plugins_command.install
    raise typer.Exit(plugins_command.plugin_command(ctx.obj, lambda store: run(store, source)))


@plugin_app.command("list")
def plugin_list(
    ctx: typer.Context,
    output: Annotated[str, typer.Option(help="text or json.")] = "text",
) -> None:
    """The installed plugins, whether each is enabled, and what each brings."""
    run = plugins_command.listed
    raise typer.Exit(plugins_command.plugin_command(ctx.obj, lambda store: run(store, output)))


@plugin_app.command("remove")
def plugin_remove(ctx: typer.Context, name: str) -> None:
    """Remove an installed plugin and its copy."""
    run = plugins_command.remove
    raise typer.Exit(plugins_command.plugin_command(ctx.obj, lambda store: run(store, name)))


@plugin_app.command("enable")
def plugin_enable(ctx: typer.Context, name: str) -> None:
    """Use an installed plugin in every session again."""
    run = plugins_command.enable
    raise typer.Exit(plugins_command.plugin_command(ctx.obj, lambda s: run(s, name, True)))


@plugin_app.command("disable")
def plugin_disable(ctx: typer.Context, name: str) -> None:
    """Keep an installed plugin but use none of it."""
    run = plugins_command.enable
    raise typer.Exit(plugins_command.plugin_command(ctx.obj, lambda s: run(s, name, False)))


@marketplace_app.command("add")
def marketplace_add(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="A folder, a git URL, or OWNER/REPO on GitHub.")],
) -> None:
    """Add a marketplace, so its plugins install as NAME@MARKETPLACE."""
    run = plugins_command.marketplace_add
    raise typer.Exit(plugins_command.plugin_command(ctx.obj, lambda store: run(store, source)))


@marketplace_app.command("list")
def marketplace_list(ctx: typer.Context) -> None:
    """The marketplaces added, with the plugins each lists."""
    run = plugins_command.marketplace_list
    raise typer.Exit(plugins_command.plugin_command(ctx.obj, run))


@marketplace_app.command("remove")
def marketplace_remove(ctx: typer.Context, name: str) -> None:
    """Forget a marketplace (the plugins installed from it stay)."""
    run = plugins_command.marketplace_remove
    raise typer.Exit(plugins_command.plugin_command(ctx.obj, lambda store: run(store, name)))


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


def doctor(ctx: typer.Context) -> None:
    """What is set up here: provider keys (never their values), the default model and
    whether it can run, the sandbox, git, ripgrep, MCP servers, the data dir, the project's
    approval; a fix for each problem. Exit 0 when the default model can run, else 1."""
    raise typer.Exit(doctor_command.doctor_command(ctx.obj))


def acp_command(ctx: typer.Context) -> None:
    """Serve an editor over the Agent Client Protocol on stdin/stdout (docs/acp.md); the
    root options apply, e.g. caretz --permission-mode ask acp."""
    root = ctx.parent.params if ctx.parent is not None else {}
    raise typer.Exit(acp_server.run_acp(ctx.obj or {}, root.get("env_file")))


@worktree_app.command("list")
def worktree_list(ctx: typer.Context) -> None:
    """caretz's worktrees of this repository: name, branch, changes, sessions, folder."""
    raise typer.Exit(worktree_command.list_worktrees(ctx.obj or {}))


@worktree_app.command("remove")
def worktree_remove(
    ctx: typer.Context,
    name: str,
    force: Annotated[
        bool, typer.Option("--force", help="Remove it even with uncommitted changes (lost).")
    ] = False,
) -> None:
    """Remove a worktree (refused with uncommitted changes), and its branch when merged."""
    raise typer.Exit(worktree_command.remove_worktree(ctx.obj or {}, name, force))
