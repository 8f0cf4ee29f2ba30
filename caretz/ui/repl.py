"""The interactive session: `caretz` with no -p in a terminal.

A prompt_toolkit prompt (history kept in the data dir, slash-command completion,
multi-line input) in front of the same Agent the headless run uses. Ctrl-C while
a turn runs stops it: the turn loop turns the interrupt into an "interrupted"
turn, the running command's process group is killed, and the conversation is
kept, so the next message carries on. What each piece of work does is the app's
AppSession's (a turn, a custom command, a goal's turns, compaction before them); this
module reads the line, shows the work in the live view and says how it went. A goal's
turns (/goal) and a loop's runs (/loop, on an idle prompt) go through the same live
view as a typed message.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.completion import ThreadedCompleter, merge_completers
from rich.console import Console
from rich.markup import escape

from caretz import __version__
from caretz.agent.limits import RunTotals, usage_report
from caretz.agent.outcomes import Outcome
from caretz.agent.signals import Terminated, interruption, signals_interrupt
from caretz.app.commands import allowed_tools
from caretz.app.mentions import ProjectFiles
from caretz.app.session import AppSession
from caretz.config_base import ConfigError
from caretz.private_data import DataWriteFailed
from caretz.session.store import SessionNotFound
from caretz.text import plural
from caretz.ui import mcp_prompts
from caretz.ui.asking import TerminalAsker
from caretz.ui.goal_commands import StartGoal
from caretz.ui.live import LiveView
from caretz.ui.mention_input import MentionCompleter, say_attached
from caretz.ui.paste_input import Pastes
from caretz.ui.permission_modes import cycle_mode
from caretz.ui.prompt_input import (
    build_prompt_session,
    exit_when_due,
    keys_not_echoed,
    print_when_due,
)
from caretz.ui.session_control import SessionControl
from caretz.ui.session_picker import pick_session as pick_session  # caretz -r: commands/run.py
from caretz.ui.shell_view import run_shell_command
from caretz.ui.slash import SlashCompleter, custom_commands, dispatch
from caretz.ui.status_line import StatusLine, following
from caretz.ui.trust_prompt import ask_to_trust
from caretz.usage_error import fail, fail_runtime

if TYPE_CHECKING:
    from caretz.config.overrides import Flags
    from caretz.config.settings import Settings
    from caretz.runtime.custom_commands import PreparedCommand

HISTORY_FILE = "prompt-history"


class _CtrlC:
    """What the prompt returns for Ctrl-C on an empty line."""


class _LoopDue:
    """What the prompt returns when a /loop run is due and nobody is typing."""


CTRL_C = _CtrlC()
LOOP_DUE = _LoopDue()


def run_repl(
    settings: Settings,
    resume: str | None,
    flags: Flags | None = None,
    *,
    env: Mapping[str, str] | None = None,
    workspace: Path | None = None,
    console: Console | None = None,
) -> int:
    """Run the interactive session until the user leaves; returns the exit code."""
    env = os.environ if env is None else env
    console = console or Console(highlight=False, emoji=False)
    view = LiveView(console, detailed=settings.output == "detailed")
    asker = TerminalAsker(console, view)
    try:
        ask_to_trust(settings, workspace or Path.cwd(), env, console)
        session = AppSession.open(
            settings,
            view,
            env=env,
            resume=resume,
            workspace=workspace,
            asker=asker,
            flags=flags,
            mcp_background=True,  # the prompt comes at once
        )
    except (ConfigError, SessionNotFound) as error:
        return fail(str(error))
    except DataWriteFailed as error:
        return fail_runtime(str(error))
    if session.checkpoints is not None:
        session.checkpoints.prepare_in_background()  # while the first message is typed
    repl = Repl(session, view, console, env, flags)
    try:
        with signals_interrupt():
            repl.welcome(resumed=resume is not None)
            repl.loop()
        repl.end_reason = "prompt_input_exit"  # /exit, Ctrl-D or Ctrl-C twice
    except Terminated as ended:  # SIGTERM / SIGHUP at the prompt, or ending a turn
        repl.exit_code = ended.exit_code
    finally:
        repl.close()
    return repl.exit_code


class Repl(SessionControl):
    """The interactive session's prompt loop: read a line, run a slash command or a turn."""

    exit_armed = False  # Ctrl-C was pressed once on an empty line
    exit_code = 0  # 129 / 143 when SIGHUP / SIGTERM ended the session
    end_reason = "other"  # for SessionEnd hooks
    prompt: PromptSession[Any] | None = None  # built on the first read
    project_files: ProjectFiles  # what `@` completes, made with the prompt
    pastes: Pastes  # the large pastes of the line being typed, made with the prompt
    toolbar_tokens = 0  # the context size the toolbar shows, measured before each prompt
    data_failures: frozenset[str] = frozenset()  # said, while the data folder still fails
    last_message = ""  # how the last turn ended, as its summary said
    status_line: StatusLine | None = None  # the profile's statusLine, over the toolbar

    # -- the loop ----------------------------------------------------------------------
    def loop(self) -> None:
        while self.running:
            self.toolbar_tokens = self.context_tokens()
            text = self.read()
            if text is None:
                break
            if text is CTRL_C:
                if self.exit_armed:
                    break
                self.exit_armed = True
                self.info("press Ctrl-C again, or Ctrl-D, to exit")
                continue
            self.exit_armed = False
            try:
                if text is LOOP_DUE:
                    self.run_due_loop()
                    continue
                assert isinstance(text, str)
                message = text.strip()
                if message.startswith("!"):
                    run_shell_command(self, message[1:].strip())
                elif message and not dispatch(self, message):
                    self.send(message)
                self.run_queued()
            except Terminated:
                raise
            except KeyboardInterrupt:  # a second Ctrl-C while a turn was wrapping up
                self.view.end_turn("interrupted")
                self.info("stopped")
            except DataWriteFailed as failed:  # outside a turn, which ends on it itself
                self.data_failed(failed)
            self.data_failed(self.session.log.failure)

    def data_failed(self, failed: DataWriteFailed | None) -> None:
        """Say once that the data folder cannot be written (`failed`, or the prompt's
        history) and that the session goes on, its log held until the folder takes it."""
        history = self.prompt.history if self.prompt is not None else None
        failures = {str(f) for f in (failed, getattr(history, "failure", None)) if f}
        if not failures:  # written again: a later failure is said again
            self.data_failures = frozenset()
        for line in sorted(failures - self.data_failures):
            if line != self.last_message:  # a turn that ended on it said it
                self.error(line)
            self.info("the session goes on; its log is written once the folder takes it again")
        self.data_failures |= failures

    def read(self) -> str | _CtrlC | _LoopDue | None:
        """The next line typed; CTRL_C for Ctrl-C on an empty line; LOOP_DUE when a
        /loop run is due on an idle prompt; None to leave."""
        if self.prompt is None:
            self.prompt = self.build_prompt()
        self.project_files.forget()  # listed again once this prompt completes a mention
        self.follow_status_line()
        draft, self.draft = self.draft, ""
        app = self.prompt.app
        session = self.session

        def watch() -> None:
            exit_when_due(app, lambda: self.loops.due() is not None, LOOP_DUE)
            # MCP servers that became ready: their lines above the prompt, the line kept
            print_when_due(app, session.servers_settled, self.collect_servers)

        try:
            line = self.prompt.prompt(default=draft, pre_run=watch)
        except EOFError:
            return None
        except Terminated:
            raise
        except KeyboardInterrupt:
            self.pastes.expand("")  # the line was dropped, and its pastes with it
            return CTRL_C
        return self.pastes.expand(line) if isinstance(line, str) else line

    def collect_servers(self) -> None:
        """MCP servers that became ready, taken in at an idle prompt."""
        try:
            self.session.collect_servers()
        except DataWriteFailed as failed:
            self.data_failed(failed)

    def build_prompt(self) -> PromptSession[Any]:
        history = self.session.settings.data_dir / HISTORY_FILE
        self.project_files = ProjectFiles(lambda: self.session.agent.parts.tool_ctx)
        resources = lambda cancel: mcp_prompts.resource_entries(self.session, cancel)  # noqa: E731
        # rg, and a server's listing, off the keys
        mentions = ThreadedCompleter(MentionCompleter(self.project_files, resources))
        completer = merge_completers([SlashCompleter(self), mentions])
        self.pastes = Pastes()
        return build_prompt_session(
            history, completer, self.toolbar, self.disarm_exit, self.pastes, self.shift_tab
        )

    def shift_tab(self) -> None:
        """Shift+Tab at the prompt: the next permission mode, its line above the prompt."""
        run_in_terminal(lambda: cycle_mode(self))

    def follow_status_line(self) -> None:
        """The profile's status line (after a /profile, its own), run for this session."""
        config = self.session.settings.values.status_line
        self.status_line = following(self.status_line, config, self.redraw)
        if self.status_line is not None:
            self.status_line.follow(self.session, self.context_tokens)

    def redraw(self) -> None:
        """Draw the prompt again (from any thread): the status line changed."""
        if self.prompt is not None and self.prompt.app.is_running:
            self.prompt.app.invalidate()

    def disarm_exit(self) -> None:
        self.exit_armed = False

    def toolbar(self) -> str:
        agent = self.session.agent
        mode = agent.parts.guard.mode
        policy = agent.parts.compaction
        window = policy.context_window if policy else self.session.settings.context_window
        used = min(100, round(100 * self.toolbar_tokens / window)) if window else 0
        permissions = self.session.settings.permission_mode
        goal = self.goal
        goal_part = f"goal {goal.status} · " if goal is not None and goal.is_open else ""
        loops = len(self.loops.loops)
        loop_part = f"{loops} loop{'s' if loops != 1 else ''} · " if loops else ""
        line = (
            f" {agent.config.model_ref} · loop guard {mode} · permissions {permissions} · "
            f"{goal_part}{loop_part}"
            f"context {used}% · Esc+Enter or \\ then Enter: new line · /help "
        )
        status = self.status_line.text if self.status_line is not None else ""
        return f" {status}\n{line}" if status else line

    # -- turns ---------------------------------------------------------------------------
    def send(self, message: str) -> Outcome | None:
        """A typed message: its `@path` mentions attached (a line says which), then its turn."""
        attached = self.session.attach(message)
        say_attached(self, attached)
        return self.run_turn(attached.prompt, typed=message)  # its @server:uri, not the files'

    def run_turn(self, prompt: str, typed: str | None = None) -> Outcome | None:
        """A typed prompt's turn with the images it attaches (its @shot.png; --image's go
        with the first prompt); one that cannot be sent is one line, and nothing is sent."""
        try:
            images = self.session.attached_images(prompt)
        except ConfigError as error:
            self.error(str(error))
            return None
        if images:
            self.info("attached " + ", ".join(image.source for image in images))
        return self.run_guarded(lambda: self.session.turn(prompt, images, typed))

    def run_queued(self) -> None:
        """Run what a slash command queued: a custom command, a skill, a goal to start or
        resume."""
        command, self.queued_command = self.queued_command, None
        if command is not None:
            self.run_command(command)
        skill, self.queued_skill = self.queued_skill, None
        if skill is not None:
            self.info(f"/{skill[0].name}: the skill from {skill[0].path}")
            self.run_guarded(lambda: self.session.run_skill(*skill))
        mcp_prompt, self.queued_mcp_prompt = self.queued_mcp_prompt, None
        if mcp_prompt is not None:
            self.run_guarded(lambda: self.session.submit(mcp_prompt))
        prompt, self.queued_prompt = self.queued_prompt, None
        if prompt is not None:
            self.send(prompt)
        work, self.queued = self.queued, None
        if isinstance(work, StartGoal):
            self.run_guarded(lambda: self.session.start_goal(work.condition))
        elif work is not None:
            self.run_guarded(self.session.resume_goal)

    def run_command(self, prepared: PreparedCommand) -> None:
        """A custom command's turn, on its model and with its allowed tools, then back."""
        name, model = prepared.command.name, prepared.model
        if model is not None and prepared.rules:
            self.info(f"/{name} runs on {model}, with {allowed_tools(prepared)} allowed")
        elif model is not None:
            self.info(f"/{name} runs on {model}")
        elif prepared.rules:
            self.info(f"/{name} runs with {allowed_tools(prepared)} allowed")
        self.run_guarded(lambda: self.session.run_command(prepared))

    def run_due_loop(self) -> None:
        loop = self.loops.due()
        if loop is None:
            return
        self.console.print(
            f"[cyan]\\[loop {loop.number}] every {loop.every}:[/] {escape(loop.prompt)}",
            highlight=False,
        )
        started = self.clock()
        try:
            self.run_turn(loop.prompt)
        finally:
            self.loops.ran(loop, started)

    def run_guarded(self, work: Callable[[], Outcome]) -> Outcome:
        """Run `work` (a turn, a command, a goal's turns) in the live view, then say how it
        went; work that sent nothing says why in one line."""
        agent = self.session.agent
        before = dataclasses.replace(agent.conversation.totals)
        started = self.clock()
        outcome = Outcome(
            status="interrupted", exit_code=130
        )  # Ctrl-C outside the session's own handling
        self.view.begin_turn()
        try:
            with keys_not_echoed():
                outcome = work()
        except Terminated:
            raise
        except KeyboardInterrupt:
            pass
        finally:
            self.view.end_turn(_turn_of(outcome).status)
        if outcome.sent:
            self.turn_summary(_turn_of(outcome), before, self.clock() - started)
        else:
            self.error(outcome.message)
        turn = _turn_of(outcome)
        if turn.status == "interrupted" and turn.exit_code != 130:
            raise interruption(turn.exit_code)  # SIGTERM / SIGHUP ended the turn: leave
        return outcome

    def turn_summary(self, result: Outcome, before: RunTotals, seconds: float) -> None:
        totals = self.session.agent.conversation.totals
        report = usage_report(totals, before)  # the judge's share in
        used = report.usage
        parts = [f"{used.input_tokens + used.cache_read_tokens:,} in / {used.output_tokens:,} out"]
        if totals.tool_calls > before.tool_calls:
            parts.insert(0, plural(totals.tool_calls - before.tool_calls, "tool call"))
        if report.cost_usd is not None:
            parts.append(f"${report.cost_usd:.4f}")
        parts.append(f"{seconds:.1f}s")
        status = result.status
        colour, label, hint = _STATUS_LOOK.get(status, ("red", status, ""))
        # An interrupt needs no words; the guard's notice and a provider error were shown
        # as they happened.
        told = result.message in self.view.told
        shown = ("limit", "error", "hook")
        if result.message and status in shown and not told:
            self.console.print(f"[{colour}]{escape(result.message)}[/]", highlight=False)
        self.last_message = result.message
        line = f"[{colour}]●[/] [dim]{label} · {escape(' · '.join(parts))}[/]"
        self.console.print(line + (f" [dim]— {hint}[/]" if hint else ""), highlight=False)

    def welcome(self, resumed: bool) -> None:
        session = self.session
        mode = session.agent.parts.guard.mode
        self.console.print(
            f"[bold]caretz[/] {__version__} · {escape(session.agent.config.model_ref)} · "
            f"loop guard {mode} · permissions {session.settings.permission_mode} · "
            f"session {session.id}",
            highlight=False,
        )
        self.yolo_banner()
        mcp = session.mcp
        starting = [s.name for s in mcp.statuses() if s.state == "starting"] if mcp else []
        if starting:
            names = ", ".join(repr(name) for name in starting)
            self.info(f"mcp: starting {names}; their tools join when ready (/mcp shows them)")
        self.info(
            "/help lists commands · Esc+Enter adds a line · Ctrl-C stops a turn · Ctrl-D exits"
        )
        for warning in custom_commands(self).warnings:
            self.error(warning)
        if resumed:
            self.recap()

    def close(self) -> None:
        if self.status_line is not None:
            self.status_line.close()
        session = self.session
        session.close(self.end_reason)
        self.console.print(
            f"[dim]session {session.id} · resume with:[/] caretz --resume {session.id}",
            highlight=False,
        )


_STATUS_LOOK = {
    "done": ("green", "done", ""),
    "interrupted": ("yellow", "interrupted", "the conversation is kept; carry on when ready"),
    "loop_guard": ("magenta", "ended by the loop guard", "reply to carry on in this session"),
    "limit": ("yellow", "limit reached", ""),
    "error": ("red", "error", "the conversation is kept; try again or /model to switch"),
    "hook": ("yellow", "stopped by a hook", ""),
}


def _turn_of(outcome: Outcome) -> Outcome:
    """How the turn the summary line is about ended: a goal's last turn (none ran: an
    interrupt before it), else the work's own."""
    if outcome.goal is None:
        return outcome
    return outcome.last_turn or Outcome(status="interrupted", exit_code=130)
