"""`@` completion offers the MCP servers' resources beside the project's files, as Claude
Code's does; once the word holds a `server:` part only resources are offered."""

from __future__ import annotations

import threading

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from caretz.ui.mention_input import MentionCompleter


class Files:
    def matching(self, typed: str) -> list[str]:
        return [entry for entry in ("library.py", "docs/") if typed in entry]


RESOURCES = [("library:notes://readme", "MCP readme"), ("library:notes://pixel.png", "MCP pixel")]


def offered(text: str, resources=lambda cancel: RESOURCES) -> list[tuple[str, int]]:
    completer = MentionCompleter(Files(), resources)  # type: ignore[arg-type]
    found = completer.get_completions(Document(text), CompleteEvent())
    return [(item.text, item.start_position) for item in found]


def test_resources_come_first_then_files_and_a_server_part_keeps_to_resources():
    assert offered("see @libr") == [
        ("library:notes://readme", -4),
        ("library:notes://pixel.png", -4),
        ("library.py", -4),
    ]
    assert offered("see @library:notes://r") == [
        ("library:notes://readme", -len("library:notes://r"))
    ]
    assert offered("mail me@libr") == []


def test_the_listing_gets_the_completers_cancel_event():
    seen: list[threading.Event] = []

    def resources(cancel: threading.Event) -> list[tuple[str, str]]:
        seen.append(cancel)
        return []

    assert offered("@docs", resources) == [("docs/", -4)]
    assert len(seen) == 1 and not seen[0].is_set()
