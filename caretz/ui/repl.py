"""The interactive session: `caretz` with no -p in a terminal.

A prompt_toolkit prompt (history kept in the data dir, slash-command completion,
multi-line input) in front of the same Agent the headless run uses. Ctrl-C while
a turn runs stops it: the turn loop turns the interrupt into an "interrupted"
turn, the running command's process group is killed, and the conversation is
kept, so the next message carries on. Between turns the conversation is compacted
when it nears the model's context window.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from caretz.agent.limits import RunTotals
from caretz.agent.signals import Terminated, interruption, signals_interrupt
from caretz.messages import Usage
from caretz.text import plural
from caretz.ui.live import LiveView
from caretz.ui.prompt_input import keys_not_echoed
from caretz.ui.session_control import SessionControl

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession

    from caretz.agent.turn import TurnResult
    from caretz.config.overrides import Flags
    from caretz.config.settings import Settings

HISTORY_FILE = "prompt-history"


class _CtrlC:
    """What the prompt returns for Ctrl-C on an empty line."""


CTRL_C = _CtrlC()


def run_repl(
    settings: Settings,
    resume: str | None,
    overrides: Flags | None = None,
    *,
    env: Mapping[str, str] | None = None,
    workspace: Path | None = None,
    console: Console | None = None,
) -> int:
    """Run the interactive session until the user leaves; returns the exit code."""
    from caretz.config_base import ConfigError
    from caretz.runtime import start_session
    from caretz.session.store import SessionNotFound
    from caretz.usage_error import fail

    env = os.environ if env is None else env
    console = console or Console(highlight=False)
    view = LiveView(console, detailed=settings.output == "detailed")
    try:
        session = start_session(settings, view, env, resume=resume, workspace=workspace)
    except (ConfigError, SessionNotFound) as error:
        return fail(str(error))
    repl = Repl(session, view, console, env, overrides)
    try:
        with signals_interrupt():
            repl.welcome(resumed=resume is not None)
            repl.loop()
    except Terminated as ended:  # SIGTERM / SIGHUP at the prompt, or ending a turn
        repl.exit_code = ended.exit_code
    finally:
        repl.close()
    return repl.exit_code


class Repl(SessionControl):
    """The interactive session's prompt loop: read a line, run a slash command or a turn."""

    exit_armed = False  # Ctrl-C was pressed once on an empty line
    exit_code = 0  # 129 / 143 when SIGHUP / SIGTERM ended the session
    prompt: PromptSession[Any] | None = None  # built on the first read
    toolbar_tokens = 0  # the context size the toolbar shows, measured before each prompt

    # -- the loop ----------------------------------------------------------------------
    def loop(self) -> None:
        from caretz.ui.slash import dispatch

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
            assert isinstance(text, str)
            message = text.strip()
            try:
                if message and not dispatch(self, message):
                    self.run_turn(message)
            except Terminated:
                raise
            except KeyboardInterrupt:  # a second Ctrl-C while a turn was wrapping up
                self.view.end_turn("interrupted")
                self.info("stopped")

    def read(self) -> str | _CtrlC | None:
        """The next line typed; CTRL_C for Ctrl-C on an empty line; None to leave."""
        if self.prompt is None:
            self.prompt = self.build_prompt()
        try:
            return self.prompt.prompt()
        except EOFError:
            return None
        except Terminated:
            raise
        except KeyboardInterrupt:
            return CTRL_C

    def build_prompt(self) -> PromptSession[Any]:
        from caretz.ui.prompt_input import build_prompt_session
        from caretz.ui.slash import SlashCompleter

        history = self.session.settings.data_dir / HISTORY_FILE
        return build_prompt_session(history, SlashCompleter(self), self.toolbar, self.disarm_exit)

    def disarm_exit(self) -> None:
        self.exit_armed = False

    def toolbar(self) -> str:
        agent = self.session.agent
        mode = agent.parts.guard.mode
        window = self.session.settings.context_window
        used = min(100, round(100 * self.toolbar_tokens / window)) if window else 0
        return (
            f" {agent.config.model_ref} · loop guard {mode} · context {used}% · "
            "Esc+Enter or \\ then Enter: new line · /help "
        )

    # -- turns ---------------------------------------------------------------------------
    def run_turn(self, prompt: str) -> TurnResult | None:
        from caretz.agent.driver import run_with_auto_resume

        self.auto_compact()
        agent = self.session.agent
        before = dataclasses.replace(agent.conversation.totals)
        started = self.clock()
        result = None
        self.view.begin_turn()
        try:
            with keys_not_echoed():
                result = run_with_auto_resume(self.session.agent, prompt)
        except Terminated:
            raise
        except KeyboardInterrupt:
            pass  # Ctrl-C landed outside the turn loop's own handling
        finally:
            self.view.end_turn(result.status if result is not None else "interrupted")
        self.turn_summary(result, before, self.clock() - started)
        if result is not None and result.status == "interrupted" and result.exit_code != 130:
            raise interruption(result.exit_code)  # SIGTERM / SIGHUP ended the turn: leave
        return result

    def turn_summary(self, result: TurnResult | None, before: RunTotals, seconds: float) -> None:
        totals = self.session.agent.conversation.totals
        used = _usage_since(totals.usage, before.usage)
        parts = [f"{used.input_tokens + used.cache_read_tokens:,} in / {used.output_tokens:,} out"]
        if totals.tool_calls > before.tool_calls:
            parts.insert(0, plural(totals.tool_calls - before.tool_calls, "tool call"))
        if totals.cost_usd is not None and before.cost_usd is not None:
            parts.append(f"${totals.cost_usd - before.cost_usd:.4f}")
        parts.append(f"{seconds:.1f}s")
        status = result.status if result is not None else "interrupted"
        colour, label, hint = _STATUS_LOOK.get(status, ("red", status, ""))
        # An interrupt needs no words; the guard's notice and a provider error were shown
        # as they happened.
        told = result is not None and result.message in self.view.told
        if result is not None and result.message and status in ("limit", "error") and not told:
            self.console.print(f"[{colour}]{escape(result.message)}[/]", highlight=False)
        line = f"[{colour}]●[/] [dim]{label} · {escape(' · '.join(parts))}[/]"
        self.console.print(line + (f" [dim]— {hint}[/]" if hint else ""), highlight=False)

    def welcome(self, resumed: bool) -> None:
        from caretz import __version__

        session = self.session
        mode = session.agent.parts.guard.mode
        self.console.print(
            f"[bold]caretz[/] {__version__} · {escape(session.agent.config.model_ref)} · "
            f"loop guard {mode} · session {session.id}",
            highlight=False,
        )
        self.info(
            "/help lists commands · Esc+Enter adds a line · Ctrl-C stops a turn · Ctrl-D exits"
        )
        if resumed:
            self.recap()

    def close(self) -> None:
        session = self.session
        session.log.close()
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
}


def _usage_since(now: Usage, before: Usage) -> Usage:
    return Usage(
        now.input_tokens - before.input_tokens,
        now.output_tokens - before.output_tokens,
        now.cache_read_tokens - before.cache_read_tokens,
        now.cache_write_tokens - before.cache_write_tokens,
    )
