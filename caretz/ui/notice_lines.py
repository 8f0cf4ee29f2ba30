"""The lines both views (the quiet console and the live view) print for the events that
are notices: a goal's progress, the sandbox's start-up notice, a custom command's `!`
commands and `@` files, hooks and MCP servers. Rich markup, one string a line."""

from __future__ import annotations

from typing import Any

from rich.markup import escape


def notice_lines(event: dict[str, Any], detailed: bool) -> list[str]:
    kind: str = event["type"]
    if kind.startswith("Goal."):
        from caretz.ui.goal_lines import goal_lines

        return [f"[cyan]{escape(text)}[/]" for text in goal_lines(event, detailed)]
    if kind.startswith("Session."):
        return session_notices(event)
    if kind == "Command.Ran" and not event.get("refused"):  # a refusal is the error line
        from caretz.ui.command_lines import command_line

        return [f"[dim]{escape(command_line(event))}[/]"]
    if kind.startswith("Hook."):
        from caretz.ui.hook_lines import hook_lines

        return [f"[{colour}]{escape(text)}[/]" for colour, text in hook_lines(event, detailed)]
    if kind.startswith("Mcp."):
        from caretz.ui.mcp_lines import mcp_line

        text = mcp_line(event, detailed)
        return [f"[yellow]{escape(text)}[/]"] if text else []
    return []


def session_notices(event: dict[str, Any]) -> list[str]:
    lines = []
    if event.get("other_project"):
        lines.append(
            f"[yellow]resuming session {escape(event['session_id'])}, named by its ID, of "
            f"another folder: {escape(event['other_project'])}[/]"
        )
    if (event.get("sandbox") or {}).get("notice"):
        lines.append(f"[yellow]sandbox:[/] {escape(event['sandbox']['notice'])}")
    return lines
