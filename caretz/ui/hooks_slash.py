"""`/hooks` in the interactive session: the session's hooks, as read when it started, with
the project's approval."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from caretz.ui.hook_lines import hook_file_lines

if TYPE_CHECKING:
    from caretz.ui.session_control import SessionControl


def hooks_slash(repl: SessionControl, argument: str) -> None:
    if argument.strip():
        repl.error("/hooks lists the session's hooks; caretz hooks approve approves a project's")
        return
    hooks = repl.session.hooks
    files = list(hooks.files) if hooks is not None else []
    for line in hook_file_lines(files):
        style = "dim" if line.startswith("  ") else "bold"
        repl.console.print(f"[{style}]{escape(line)}[/]", highlight=False)
    if any(not file.approved for file in files):
        repl.info(
            "caretz hooks approve, then start caretz again: a session reads its hooks when "
            "it starts"
        )
