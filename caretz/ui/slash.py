"""Slash commands of the interactive session, and their completion.

A line that starts with `/` and a command name is a command; it never reaches
the model, except a custom command's prompt (ui/custom_commands.py, app/commands.py). A line such as
`/etc/hosts is wrong` (a path: a second slash in the first word) is an ordinary message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from rich.markup import escape
from rich.table import Table

from caretz.checkpoints.project import project_root
from caretz.config.loading import load_config_file
from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.permissions.modes import PERMISSION_MODES
from caretz.providers.registry import known_model_refs
from caretz.slash_commands.names import parse, unknown_command
from caretz.ui import mcp_prompts
from caretz.ui.custom_commands import (
    help_rows,
    help_table,
    queue_command,
    session_catalog,
    skill_rows,
)
from caretz.ui.goal_commands import GOAL_WORDS, goal_command, loop_command
from caretz.ui.hooks_slash import hooks_slash
from caretz.ui.jobs_command import job_choices, jobs_slash
from caretz.ui.mcp_slash import mcp_slash
from caretz.ui.permission_modes import change_permissions, plan_command
from caretz.ui.sessions_text import prompt_preview, started_text

if TYPE_CHECKING:
    from caretz.ui import rewind
else:
    # the agent's rewinding: once /rewind or /undo is typed
    rewind = lazy_module("caretz.ui.rewind")

if TYPE_CHECKING:
    from caretz.slash_commands.files import Catalog
    from caretz.ui.session_control import SessionControl

GUARD_MODES = ("off", "shadow", "active")

KEYS = (
    ("Enter", "send the message"),
    ("Esc then Enter, or \\ at the end of a line", "a new line in the message"),
    (
        "Ctrl-C while a turn runs",
        "stop the turn (a running command is killed); the session is kept",
    ),
    ("Ctrl-C at the prompt", "clear the line; on an empty line, press again to exit"),
    ("Ctrl-D on an empty line", "exit (the session ID is printed so you can resume it)"),
    ("Tab", "complete a slash command or its argument"),
    ("Shift+Tab", "the next permission mode: auto, ask, plan"),
    ("Up / Down, Ctrl-R", "earlier messages (history is kept between sessions)"),
)


@dataclass(frozen=True, kw_only=True)
class SlashCommand:
    name: str
    args: str  # how the argument is written in /help; "" for none
    summary: str
    run: Callable[[SessionControl, str], None]
    choices: Callable[[SessionControl], Iterable[str]] | None = None  # argument completions

    @property
    def usage(self) -> str:
        return f"/{self.name} {self.args}".rstrip()


def dispatch(repl: SessionControl, text: str) -> bool:
    """Run `text` if it is a slash command; False when it is a message for the model."""
    parsed = parse(text)
    if parsed is None:
        return False
    name, argument = parsed
    command = find_exact(name)
    skill = repl.session.skills.user_skill(name) if repl.session.skills is not None else None
    if command is None and skill is not None:
        repl.queued_skill = (skill, argument)  # before a custom command of its name
        return True
    custom = custom_commands(repl).get(name) if command is None else None
    if custom is not None:
        queue_command(repl, custom, argument)
        return True
    if command is None and mcp_prompts.is_prompt_command(name):  # an MCP server's prompt
        return mcp_prompts.queue_prompt(repl, text)
    command = command or find(name)
    if command is None:
        known = [c.name for c in COMMANDS] + list(custom_commands(repl).commands)
        known += [s.name for s in repl.session.skills.skills] if repl.session.skills else []
        repl.error(unknown_command(name, known, "/help lists the commands"))
        return True
    command.run(repl, argument)
    return True


def find_exact(name: str) -> SlashCommand | None:
    name = ALIASES.get(name, name)
    return next((c for c in COMMANDS if c.name == name), None)


def builtin_names() -> list[str]:
    """The names custom commands may not take: the commands and their aliases."""
    return [command.name for command in COMMANDS] + list(ALIASES)


def custom_commands(repl: SessionControl) -> Catalog:
    return session_catalog(repl, builtin_names())


def find(name: str) -> SlashCommand | None:
    """The command named `name`, an alias, or the only command that `name` begins."""
    name = ALIASES.get(name, name)
    exact = next((c for c in COMMANDS if c.name == name), None)
    if exact is not None:
        return exact
    matches = [c for c in COMMANDS if c.name.startswith(name)]
    return matches[0] if len(matches) == 1 else None


# -- the commands ------------------------------------------------------------------------


def show_help(repl: SessionControl, argument: str) -> None:
    table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    for command in COMMANDS:
        table.add_row(escape(command.usage), command.summary)
    repl.console.print(table)
    repl.console.print()
    catalog = custom_commands(repl)
    if catalog.commands:
        repl.console.print("[bold]custom commands[/]")
        custom = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
        custom.add_column(style="bold cyan", no_wrap=True)
        custom.add_column()
        for usage, summary in help_rows(catalog):
            custom.add_row(escape(usage), summary)
        repl.console.print(custom)
        repl.console.print()
    skills = skill_rows(repl.session.skills)
    if skills:
        repl.console.print("[bold]skills[/] (docs/skills.md; caretz skills list)")
        repl.console.print(help_table([(f"/{name}", about) for name, about in skills]))
        repl.console.print()
    if prompts := mcp_prompts.prompt_rows(repl.session):
        repl.console.print("[bold]MCP prompts[/] (docs/mcp.md)")
        repl.console.print(help_table(prompts), "")
    for warning in catalog.warnings:
        repl.error(warning)
    keys = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
    keys.add_column(style="bold", no_wrap=True)
    keys.add_column()
    for key, what in KEYS:
        keys.add_row(escape(key), what)
    repl.console.print(keys)


def change_model(repl: SessionControl, argument: str) -> None:
    if not argument:
        repl.info(
            f"model: {repl.session.agent.config.model_ref} (switch with /model provider/model)"
        )
        return
    repl.switch_model(argument)


def change_profile(repl: SessionControl, argument: str) -> None:
    if not argument:
        names = ", ".join(profile_names(repl)) or "none defined"
        repl.info(f"profile: {repl.session.settings.profile_name} (profiles: {names})")
        return
    repl.switch_profile(argument)


def change_guard(repl: SessionControl, argument: str) -> None:
    if not argument:
        mode = repl.session.agent.parts.guard.mode
        repl.info(f"loop guard: {mode} (switch with /loop-guard off|shadow|active)")
        return
    if argument not in GUARD_MODES:
        repl.error(f"unknown loop-guard mode {argument!r}: use off, shadow or active")
        return
    repl.set_guard_mode(argument)


def list_sessions(repl: SessionControl, argument: str) -> None:
    """`/sessions`: this folder's; `/sessions all`: every folder's."""
    every = argument.strip() == "all"
    sessions = repl.store().list(None if every else project_root(repl.session.workspace))
    if not sessions:
        repl.info("no sessions yet" + ("" if every else " in this folder (/sessions all)"))
        return
    table = Table(box=None, show_header=True, padding=(0, 2, 0, 0), header_style="dim")
    for column in ("session", "started", "turns", "model", "first message"):
        table.add_column(column, no_wrap=column != "first message", overflow="ellipsis")
    for info in sessions[-15:]:
        marker = " ←" if info.id == repl.session.id else ""
        table.add_row(
            escape(info.id + marker),
            started_text(info),
            str(info.turns),
            escape(info.model),
            escape(prompt_preview(info)),
        )
    repl.console.print(table)
    repl.info("reopen one with /resume ID")


def resume_session(repl: SessionControl, argument: str) -> None:
    """`/resume ID`; `/resume` alone: this folder's latest session but this one."""
    if argument:
        repl.resume(argument)
        return
    ids = repl.store().ids_of(project_root(repl.session.workspace))
    others = [session_id for session_id in ids if session_id != repl.session.id]
    if not others:
        repl.error("no other session of this folder: /sessions all lists every folder's")
        return
    repl.resume(others[-1])


def clear_conversation(repl: SessionControl, argument: str) -> None:
    repl.new_session()


def show_cost(repl: SessionControl, argument: str) -> None:
    repl.show_cost()


def compact_now(repl: SessionControl, argument: str) -> None:
    repl.compact(reason="manual")


def rewind_to(repl: SessionControl, argument: str) -> None:
    rewind.RewindChooser(repl).rewind(argument)


def undo_turn(repl: SessionControl, argument: str) -> None:
    rewind.RewindChooser(repl).undo()


def exit_repl(repl: SessionControl, argument: str) -> None:
    repl.running = False


# -- completions -------------------------------------------------------------------------


def profile_names(repl: SessionControl) -> list[str]:
    try:
        file = load_config_file(repl.session.settings.config_path)
    except ConfigError:
        return []
    return sorted(file.profiles)


def model_choices(repl: SessionControl) -> list[str]:
    """The model in use, the profiles' models, each provider's `name/`, then the models the
    built-in providers are known to serve."""
    settings = repl.session.settings
    refs = [settings.model.ref]
    try:
        file = load_config_file(settings.config_path)
    except ConfigError:
        file = None
    if file is not None:
        refs += [profile.model for profile in file.profiles.values()]
    refs += [f"{name}/" for name in sorted(settings.providers)]
    refs += [ref for ref in known_model_refs() if ref.split("/", 1)[0] in settings.providers]
    return list(dict.fromkeys(refs))


def session_choices(repl: SessionControl) -> list[str]:
    return list(reversed(repl.store().ids()))


COMMANDS: list[SlashCommand] = [
    SlashCommand(name="help", args="", summary="this list of commands and keys", run=show_help),
    SlashCommand(
        name="model",
        args="provider/model",
        summary="switch the model; the conversation carries on",
        run=change_model,
        choices=model_choices,
    ),
    SlashCommand(
        name="profile",
        args="NAME",
        summary="switch to another profile of profiles.json",
        run=change_profile,
        choices=profile_names,
    ),
    SlashCommand(
        name="loop-guard",
        args="off|shadow|active",
        summary="switch the loop guard",
        run=change_guard,
        choices=lambda repl: GUARD_MODES,
    ),
    SlashCommand(
        name="permissions",
        args="auto|ask|read-only|plan|yolo",
        summary="show the permission mode and rules, or switch the mode",
        run=change_permissions,
        choices=lambda repl: PERMISSION_MODES,
    ),
    SlashCommand(
        name="plan",
        args="[PROMPT]",
        summary="plan mode: read and plan, change nothing, then the plan is put to you",
        run=plan_command,
    ),
    SlashCommand(
        name="goal",
        args="[CONDITION|pause|resume|clear]",
        summary="work until CONDITION holds, checked after each turn; alone: where the goal stands",
        run=goal_command,
        choices=lambda repl: GOAL_WORDS,
    ),
    SlashCommand(
        name="loop",
        args="[INTERVAL PROMPT|stop N]",
        summary="run PROMPT every INTERVAL (10m, 1h) while the session is idle; alone: the loops",
        run=loop_command,
        choices=lambda repl: ("stop",),
    ),
    SlashCommand(
        name="sessions", args="[all]", summary="list this folder's past sessions", run=list_sessions
    ),
    SlashCommand(
        name="resume",
        args="[ID]",
        summary="reopen a past session (this folder's latest)",
        run=resume_session,
        choices=session_choices,
    ),
    SlashCommand(
        name="clear", args="", summary="start a new, empty conversation", run=clear_conversation
    ),
    SlashCommand(
        name="cost", args="", summary="tokens, money and context used so far", run=show_cost
    ),
    SlashCommand(
        name="compact",
        args="",
        summary="summarize older turns now to free context",
        run=compact_now,
    ),
    SlashCommand(
        name="rewind",
        args="[N [files|conversation|both]]",
        summary="list checkpoints; restore files, conversation or both",
        run=rewind_to,
    ),
    SlashCommand(
        name="undo",
        args="",
        summary="rewind the last turn that changed files, and its conversation",
        run=undo_turn,
    ),
    SlashCommand(
        name="jobs",
        args="[stop ID]",
        summary="background jobs: state, age, command; stop ID ends one",
        run=jobs_slash,
        choices=job_choices,
    ),
    SlashCommand(
        name="mcp",
        args="[approve [NAME…] | login NAME]",
        summary="MCP servers: status and tools; approve starts a project's .mcp.json servers; "
        "login logs in to an HTTP one",
        run=mcp_slash,
        choices=lambda repl: ("approve", "login"),
    ),
    SlashCommand(
        name="hooks",
        args="",
        summary="hooks: the profile's and the project's, and its approval",
        run=hooks_slash,
    ),
    SlashCommand(name="exit", args="", summary="leave (Ctrl-D does too)", run=exit_repl),
]
ALIASES = {"quit": "exit", "q": "exit", "new": "clear", "?": "help"}


class SlashCompleter(Completer):
    """Completes command names after `/`, then each command's argument."""

    def __init__(self, repl: SessionControl):
        self.repl = repl

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/") or "\n" in text:
            return
        name, space, typed = text[1:].partition(" ")
        if not space:
            for command in COMMANDS:
                if command.name.startswith(name.lower()):
                    yield Completion(
                        command.name,
                        start_position=-len(name),
                        display=command.usage,
                        display_meta=command.summary,
                    )
            for custom in custom_commands(self.repl).commands.values():
                if custom.name.startswith(name.lower()):
                    yield Completion(
                        custom.name,
                        start_position=-len(name),
                        display=f"/{custom.name} {custom.argument_hint}".rstrip(),
                        display_meta=custom.description,
                    )
            for skill_name, description in skill_rows(self.repl.session.skills):
                if skill_name.startswith(name.lower()):
                    yield Completion(skill_name, -len(name), f"/{skill_name}", description)
            yield from mcp_prompts.prompt_completions(self.repl.session, name)
            return
        named = find(name.lower())
        if named is None or named.choices is None:
            return
        typed = typed.lstrip()
        for choice in named.choices(self.repl):
            if choice.startswith(typed):
                yield Completion(choice, start_position=-len(typed))
