"""Reading the next message at the terminal: a prompt_toolkit prompt with
persistent history, completion and multi-line keys, large pastes held as placeholders
(ui/paste_input.py), and no echo while a turn runs."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app, run_in_terminal
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

from caretz.ui.paste_input import Pastes, PrivateHistory

try:
    import termios
except ImportError:  # Windows: the console does not echo over the output
    termios = None  # type: ignore[assignment]  # checked as on Linux, where it is a module

if TYPE_CHECKING:
    from prompt_toolkit.application import Application
    from prompt_toolkit.completion import Completer


@contextlib.contextmanager
def keys_not_echoed() -> Iterator[None]:
    """While a turn runs, keys typed are not echoed over its output; Ctrl-C still
    interrupts, and what was typed waits for the next prompt."""
    if termios is None:
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


def exit_when_due(
    app: Application[Any], due: Callable[[], bool], result: object, poll_s: float = 0.25
) -> None:
    """For the prompt's `pre_run`: end the prompt with `result` once `due()` holds while
    the line is empty, so a scheduled run (/loop) never cuts into what is being typed."""

    async def watch() -> None:
        while True:
            await asyncio.sleep(poll_s)
            buffer = app.current_buffer
            if due() and not buffer.text and buffer.complete_state is None:
                app.exit(result=result)
                return

    app.create_background_task(watch())


def print_when_due(
    app: Application[Any], due: Callable[[], bool], show: Callable[[], object], poll_s: float = 0.25
) -> None:
    """For the prompt's `pre_run`: once `due()` holds, run `show` (which prints) above
    the prompt, which is then drawn again with what was being typed."""

    async def watch() -> None:
        while True:
            await asyncio.sleep(poll_s)
            if due():
                await run_in_terminal(show)

    app.create_background_task(watch())


def build_prompt_session(
    history_path: Path,
    completer: Completer,
    toolbar: Callable[[], str],
    on_line_cleared: Callable[[], None],
    pastes: Pastes,
    on_shift_tab: Callable[[], None] = lambda: None,
) -> PromptSession[Any]:
    """The prompt: persistent history, completion, multi-line keys, Ctrl-C handling.

    Ctrl-C clears a line that has text (then calls `on_line_cleared`) and raises
    KeyboardInterrupt from `prompt()` on an empty one. A large paste goes into `pastes`
    and the line gets its placeholder (`pastes.expand` gives the message back whole).
    Shift+Tab calls `on_shift_tab` (the next permission mode), the line kept."""
    bindings = KeyBindings()

    @bindings.add(Keys.BracketedPaste)
    def _paste(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text(pastes.hold(event.data))

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

    @bindings.add(Keys.BackTab)
    def _shift_tab(event: KeyPressEvent) -> None:
        on_shift_tab()

    @bindings.add("c-c")
    def _ctrl_c(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text:
            buffer.reset()
            on_line_cleared()
        else:
            event.app.exit(exception=KeyboardInterrupt())

    return PromptSession(
        message=[("bold", "› ")],
        prompt_continuation="  ",
        history=PrivateHistory(history_path),
        completer=completer,
        complete_while_typing=True,
        auto_suggest=AutoSuggestFromHistory(),
        key_bindings=bindings,
        bottom_toolbar=toolbar,
    )
