"""The interactive session: `caretz` with no -p in a terminal.

A prompt_toolkit prompt (history kept in the data dir, slash-command completion,
multi-line input) in front of the same Agent the headless run uses. Ctrl-C while
a turn runs stops it: the turn loop turns the interrupt into an "interrupted"
turn, the running command's process group is killed, and the conversation is
kept, so the next message carries on. Between turns the conversation is compacted
when it nears the model's context window.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape

from caretz.agent.compaction import (
    CompactionPolicy,
    ContextMeter,
    Reason,
    needs_compaction,
)
from caretz.agent.limits import RunTotals
from caretz.messages import Usage
from caretz.ui.live import LiveView

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession

    from caretz.agent.turn import TurnResult
    from caretz.config import CliOverrides, Settings
    from caretz.runtime import Session
    from caretz.session.store import SessionStore

HISTORY_FILE = "prompt-history"
RECAP_LINES = 30  # lines of the last answer shown when a session is resumed


class _CtrlC:
    """What the prompt returns for Ctrl-C on an empty line."""


CTRL_C = _CtrlC()


def run_repl(
    settings: Settings,
    resume: str | None,
    overrides: CliOverrides | None = None,
    *,
    env: Mapping[str, str] | None = None,
    workspace: Path | None = None,
    console: Console | None = None,
) -> int:
    """Run the interactive session until the user leaves; returns the exit code."""
    from caretz.config import ConfigError
    from caretz.headless import fail
    from caretz.runtime import start_session
    from caretz.session.store import SessionNotFound

    env = os.environ if env is None else env
    console = console or Console(highlight=False)
    view = LiveView(console, detailed=settings.output == "detailed")
    try:
        session = start_session(settings, view, env, resume=resume, workspace=workspace)
    except (ConfigError, SessionNotFound) as error:
        return fail(str(error))
    repl = Repl(session, view, console, env, overrides)
    try:
        repl.welcome(resumed=resume is not None)
        repl.loop()
    finally:
        repl.close()
    return 0


class Repl:
    """The running interactive session; slash commands act on it."""

    def __init__(
        self,
        session: Session,
        view: LiveView,
        console: Console,
        env: Mapping[str, str],
        overrides: CliOverrides | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.view = view
        self.console = console
        self.env = env
        self.overrides = overrides
        self.clock = clock
        self.running = True
        self.exit_armed = False  # Ctrl-C was pressed once on an empty line
        self.session = session
        self.prompt: PromptSession[Any] | None = None
        self.toolbar_tokens = 0

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
        except KeyboardInterrupt:
            return CTRL_C

    def build_prompt(self) -> PromptSession[Any]:
        history = self.session.settings.data_dir / HISTORY_FILE
        return build_prompt_session(self, history)

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
        except KeyboardInterrupt:
            pass  # Ctrl-C landed outside the turn loop's own handling
        finally:
            self.view.end_turn(result.status if result is not None else "interrupted")
        self.turn_summary(result, before, self.clock() - started)
        return result

    def turn_summary(self, result: TurnResult | None, before: RunTotals, seconds: float) -> None:
        totals = self.session.agent.conversation.totals
        used = _usage_since(totals.usage, before.usage)
        parts = [f"{used.input_tokens + used.cache_read_tokens:,} in / {used.output_tokens:,} out"]
        if totals.tool_calls > before.tool_calls:
            count = totals.tool_calls - before.tool_calls
            parts.insert(0, f"{count} tool call{'s' if count != 1 else ''}")
        if totals.cost_usd is not None and before.cost_usd is not None:
            parts.append(f"${totals.cost_usd - before.cost_usd:.4f}")
        parts.append(f"{seconds:.1f}s")
        status = result.status if result is not None else "interrupted"
        colour, label, hint = _STATUS_LOOK.get(status, ("red", status, ""))
        # An interrupt needs no words, and the guard's notice was shown as it happened.
        if result is not None and result.message and status in ("limit", "error"):
            self.console.print(f"[{colour}]{escape(result.message)}[/]", highlight=False)
        line = f"[{colour}]●[/] [dim]{label} · {escape(' · '.join(parts))}[/]"
        self.console.print(line + (f" [dim]— {hint}[/]" if hint else ""), highlight=False)

    # -- compaction ----------------------------------------------------------------------
    def policy(self) -> CompactionPolicy:
        return CompactionPolicy(context_window=self.session.settings.context_window)

    def context_tokens(self) -> int:
        agent = self.session.agent
        return self.meter.estimate(agent.config.system, agent.conversation.messages)

    def auto_compact(self) -> None:
        tokens = self.context_tokens()
        if needs_compaction(tokens, self.policy()):
            self.compact(reason="auto", tokens=tokens)

    def compact(self, reason: Reason = "manual", tokens: int | None = None) -> None:
        tokens = self.context_tokens() if tokens is None else tokens
        with self.console.status("compacting the conversation…", spinner="dots"):
            try:
                result = self.session.agent.compact(
                    self.policy(), tokens_before=tokens, reason=reason
                )
            except KeyboardInterrupt:
                self.info("compaction stopped; the conversation is unchanged")
                return
        if result is None:
            self.info("nothing to compact yet: the conversation is only the latest turns")
        elif not result.summarized and not result.trimmed:
            self.error(f"compaction failed: {result.summary_error}")

    @property
    def meter(self) -> ContextMeter:
        """The agent's own meter: the turn loop measures every response into it."""
        return self.session.agent.conversation.context

    # -- session changes (slash commands) ---------------------------------------------------
    def switch_model(self, ref: str) -> None:
        from caretz.config import ConfigError
        from caretz.runtime import switch_model

        try:
            model = switch_model(self.session, ref, self.env)
        except ConfigError as error:
            self.error(f"{error} (still on {self.session.agent.config.model_ref})")
            return
        self.meter.forget()
        self.info(f"model: {model}; the conversation carries on")

    def switch_profile(self, name: str) -> None:
        from caretz.config import CliOverrides, ConfigError, resolve_settings
        from caretz.runtime import apply_settings

        path = self.session.settings.config_path
        base = self.overrides or CliOverrides(config=path if path.is_file() else None)
        try:
            settings = resolve_settings(dataclasses.replace(base, profile=name), self.env)
            apply_settings(self.session, settings, self.env)
        except ConfigError as error:
            self.error(f"{error} (still on profile {self.session.settings.profile_name})")
            return
        self.view.detailed = settings.output == "detailed"
        self.meter.forget()
        mode = self.session.agent.parts.guard.mode
        self.info(f"profile: {name} · model {settings.model.ref} · loop guard {mode}")

    def set_guard_mode(self, mode: str) -> None:
        from caretz.config import ConfigError
        from caretz.runtime import set_guard_mode

        try:
            set_guard_mode(self.session, mode)
        except ConfigError as error:
            self.error(f"{error} (the loop guard is unchanged)")
            return
        judge = self.session.judge
        by = f", judged by {judge.model_ref}" if judge is not None and mode != "off" else ""
        self.info(f"loop guard: {mode}{by}")

    def store(self) -> SessionStore:
        from caretz.session.store import SessionStore

        return SessionStore(self.session.settings.data_dir)

    def resume(self, session_id: str) -> None:
        from caretz.session.store import SessionNotFound

        try:
            path = self.store().events_path(session_id)
        except SessionNotFound as error:
            self.error(str(error))
            return
        if path.parent.name == self.session.id:
            self.info(f"already in session {self.session.id}")
            return
        if self.replace_session(path.parent.name):
            self.recap()

    def new_session(self) -> None:
        if self.replace_session(None):
            self.info("a new, empty conversation")

    def replace_session(self, resume: str | None) -> bool:
        """Leave this session for a new one (or a past one); the model, profile and
        guard mode in use carry over."""
        from caretz.config import ConfigError
        from caretz.runtime import start_session
        from caretz.session.store import SessionNotFound

        old = self.session
        try:
            session = start_session(
                old.settings, self.view, self.env, resume=resume, workspace=old.workspace
            )
        except (ConfigError, SessionNotFound) as error:
            self.error(str(error))
            return False
        old.log.close()
        self.info(f"left session {old.id} (reopen it with /resume {old.id})")
        self.session = session
        self.meter.forget()
        self.info(f"session {session.id}")
        return True

    # -- reports -------------------------------------------------------------------------
    def show_cost(self) -> None:
        from caretz.pricing import price_for

        agent = self.session.agent
        totals = agent.conversation.totals
        usage = totals.usage
        lines = [
            f"tokens: {usage.input_tokens:,} in · {usage.output_tokens:,} out · "
            f"{usage.cache_read_tokens:,} cache read · {usage.cache_write_tokens:,} cache write",
            f"requests: {totals.requests} · tool calls: {totals.tool_calls}",
        ]
        if totals.cost_usd is not None:
            lines.append(f"cost: ${totals.cost_usd:.4f}")
        else:
            lines.append('cost: unknown (a model without a price; add one under "prices")')
        if price_for(agent.config.model_ref, self.session.settings.prices) is None:
            lines.append(f"no price known for {agent.config.model_ref}")
        window = self.session.settings.context_window
        lines.append(f"context: ~{self.context_tokens():,} of {window:,} tokens")
        for line in lines:
            self.info(line)

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

    def recap(self) -> None:
        conversation = self.session.agent.conversation
        self.info(f"resumed session {self.session.id}: {conversation.turns} turn(s) so far")
        if conversation.last_request:
            self.console.print(f"[bold]>[/] {escape(conversation.last_request)}", highlight=False)
        if conversation.last_answer:
            lines = conversation.last_answer.strip().splitlines()
            shown = "\n".join(lines[-RECAP_LINES:])
            if len(lines) > RECAP_LINES:
                self.info(f"… (the last {RECAP_LINES} lines of the answer)")
            self.console.print(Markdown(shown))

    def info(self, text: str) -> None:
        self.console.print(f"[dim]{escape(text)}[/]", highlight=False)

    def error(self, text: str) -> None:
        self.console.print(f"[red]{escape(text)}[/]", highlight=False)

    def close(self) -> None:
        session = self.session
        session.log.close()
        self.console.print(
            f"[dim]session {session.id} · resume with:[/] caretz --resume {session.id}",
            highlight=False,
        )


@contextlib.contextmanager
def keys_not_echoed() -> Iterator[None]:
    """While a turn runs, keys typed are not echoed over its output; Ctrl-C still
    interrupts, and what was typed waits for the next prompt."""
    try:
        import termios
    except ImportError:  # Windows: the console does not echo over the output
        yield
        return
    try:
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
    except (termios.error, OSError, ValueError, AttributeError):
        yield  # not a terminal: nothing to hide
        return
    quiet = list(saved)
    quiet[3] &= ~(termios.ECHO | getattr(termios, "ECHOCTL", 0))
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


def build_prompt_session(repl: Repl, history_path: Path) -> PromptSession[Any]:
    """The prompt: persistent history, slash completion, multi-line keys, Ctrl-C handling."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.application import get_app
    from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.history import FileHistory
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    from caretz.ui.slash import SlashCompleter

    history_path.parent.mkdir(parents=True, exist_ok=True)
    bindings = KeyBindings()

    @Condition
    def line_continues() -> bool:
        document = get_app().current_buffer.document
        return document.is_cursor_at_the_end and document.text.endswith("\\")

    @bindings.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("enter", filter=line_continues)
    def _continued_line(event: KeyPressEvent) -> None:
        event.current_buffer.delete_before_cursor(1)
        event.current_buffer.insert_text("\n")

    @bindings.add("c-c")
    def _ctrl_c(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text:
            buffer.reset()
            repl.exit_armed = False
        else:
            event.app.exit(exception=KeyboardInterrupt())

    return PromptSession(
        message=[("bold", "› ")],
        prompt_continuation="  ",
        history=FileHistory(str(history_path)),
        completer=SlashCompleter(repl),
        complete_while_typing=True,
        auto_suggest=AutoSuggestFromHistory(),
        key_bindings=bindings,
        bottom_toolbar=repl.toolbar,
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
