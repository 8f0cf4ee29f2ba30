"""The interactive session's question at start: in a project whose configuration caretz
would leave out for want of approval, it shows what that configuration does (the text of
`caretz trust`) and asks once; yes approves it, whole, as it is now."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from prompt_toolkit import PromptSession
from rich.console import Console
from rich.markup import escape

from caretz.runtime.project_trust import approve, project_trust
from caretz.ui.trust_text import approval_lines

if TYPE_CHECKING:
    from caretz.config.settings import Settings

QUESTION = "trust this project's configuration? (y/N) "


def ask_to_trust(
    settings: Settings,
    workspace: Path,
    env: Mapping[str, str],
    console: Console,
    read_line: Callable[[str], str] | None = None,
) -> bool:
    """Ask when the project brings configuration that would be left out; whether it is
    approved now. Raises ConfigError for a file caretz cannot read."""
    trust = project_trust(settings, workspace)
    if not trust.ignored():
        return trust.approved
    for line in approval_lines(trust, settings, env):
        style = "dim" if line.startswith("  ") else "bold"
        console.print(f"[{style}]{escape(line)}[/]", highlight=False)
    try:
        answer = (read_line or _prompt_line)(QUESTION)
    except (EOFError, KeyboardInterrupt):
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        console.print("[yellow]not approved: caretz leaves it out[/]")
        return False
    approve(settings.data_dir, trust.config)
    console.print("[green]approved:[/] caretz uses it here until any of it changes")
    return True


def _prompt_line(message: str) -> str:
    session: PromptSession[str] = PromptSession(message=[("bold yellow", message)])
    return session.prompt()
