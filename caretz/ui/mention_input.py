"""`@path` at the interactive prompt: Tab (or typing) completes a mention from the
project's files and folders, and the line said after sending what was attached. Which
files there are and what a mention attaches is the app's (caretz/app/mentions.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

if TYPE_CHECKING:
    from caretz.app.mentions import Attached, ProjectFiles
    from caretz.ui.session_control import SessionControl

Resources = Callable[[threading.Event], list[tuple[str, str]]]


class MentionCompleter(Completer):
    """Completes the `@word` the cursor is in with the project's files and folders."""

    def __init__(self, files: ProjectFiles, resources: Resources | None = None):
        self.files = files
        self.resources = resources  # `server:uri` and what it is, of the MCP servers'
        self.cancel = threading.Event()  # never set: a listing ends at mcp.callTimeout

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        before = document.text_before_cursor
        word = before.rsplit(None, 1)[-1] if before and not before[-1].isspace() else ""
        if not word.startswith("@"):
            return
        typed = word[1:]
        if self.resources is not None:  # Claude Code's `@server:scheme://path`
            for entry, about in self.resources(self.cancel):
                if typed.lower() in entry.lower():
                    yield Completion(entry, -len(typed), display=entry, display_meta=about)
            if ":" in typed:
                return
        for entry in self.files.matching(typed):
            kind = "folder" if entry.endswith("/") else "file"
            yield Completion(entry, start_position=-len(typed), display=entry, display_meta=kind)


def say_attached(repl: SessionControl, attached: Attached) -> None:
    """One red line per refused mention, one dim line for what was attached."""
    for line in attached.refused:
        repl.error(line)
    if attached.attached:
        repl.info("attached " + ", ".join(item.summary for item in attached.attached))
