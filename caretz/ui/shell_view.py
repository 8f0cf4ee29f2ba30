"""`!command` at the interactive prompt: the command's output as it arrives, then one
line saying how it ended and that the model gets it with the next message. Running it
is the app's (caretz/app/shell_mode.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from caretz.agent.signals import Terminated
from caretz.app.shell_mode import ShellRun
from caretz.ui.prompt_input import keys_not_echoed

if TYPE_CHECKING:
    from caretz.session.records.session import ShellRan
    from caretz.ui.session_control import SessionControl

NEXT = "the model gets it with your next message"


def run_shell_command(repl: SessionControl, command: str) -> None:
    """Run `command` (what followed the `!`) and show it; Ctrl-C stops it."""
    if not command:
        repl.error("give a command after ! (!git status runs it; its output goes to the model)")
        return
    console = repl.console
    shown = {"text": ""}

    def show(text: str) -> None:
        shown["text"] = text
        console.out(text, end="", highlight=False)

    try:
        with keys_not_echoed():
            run = repl.session.run_shell(command, show)
    except Terminated:
        raise
    except OSError as error:
        repl.error(f"could not start the command: {error}")
        return
    if shown["text"] and not shown["text"].endswith("\n"):
        console.out("")
    colour = "green" if run.exit_code == 0 else "yellow" if run.ended_by else "red"
    console.print(
        f"[{colour}]●[/] [dim]{escape(run.status)} · {run.duration_s:.1f}s — {NEXT}[/]",
        highlight=False,
    )


def describe(event: ShellRan) -> str:
    """A `!command`'s event as `caretz sessions show` prints it."""
    run = ShellRun.from_event(event)
    return f"\n! {run.command} ({run.status}, {run.duration_s:.1f}s)"
