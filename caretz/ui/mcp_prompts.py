"""MCP servers' prompts and resources at the interactive prompt: `/mcp__server__prompt`
in /help and completion, queued for the prompt loop like a custom command (the app
expands it: app/mcp_mentions.py), and `@server:uri` completion from the servers' resources,
listed once a session."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prompt_toolkit.completion import Completion

if TYPE_CHECKING:
    from caretz.app.session import AppSession
    from caretz.ui.session_control import SessionControl

PREFIX = "mcp__"


def is_prompt_command(name: str) -> bool:
    return name.startswith(PREFIX)


def queue_prompt(repl: SessionControl, text: str) -> bool:
    """Queue `/mcp__server__prompt ARGS` for the prompt loop (AppSession.submit expands it)."""
    repl.queued_mcp_prompt = text.strip()
    return True


def prompt_rows(session: AppSession) -> list[tuple[str, str]]:
    """(usage, description) of each MCP prompt of the servers ready now."""
    mcp = session.mcp
    if mcp is None:
        return []
    rows = []
    for command, (server, prompt) in sorted(mcp.prompts.items()):
        shown = [f"<{a.name}>" if a.required else f"[{a.name}]" for a in prompt.arguments]
        about = (prompt.description or "(no description)").splitlines()[0][:80]
        rows.append((" ".join([f"/{command}", *shown]), f"{about} (MCP server {server!r})"))
    return rows


def prompt_completions(session: AppSession, typed: str) -> Iterator[Completion]:
    for usage, about in prompt_rows(session):
        name = usage.split()[0][1:]
        if name.startswith(typed.lower()):
            yield Completion(name, -len(typed), usage, about)


def resource_entries(session: AppSession, cancel: threading.Event) -> list[tuple[str, str]]:
    """(`server:uri`, what it is) of the servers' resources, for `@` completion."""
    return session.mcp.resources.completions(cancel) if session.mcp is not None else []
