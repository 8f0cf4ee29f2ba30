"""Large pastes at the prompt, and the prompt's history file.

A paste of more than PASTE_LINES lines (or PASTE_CHARS characters) shows in the input as
a placeholder, `[pasted 10,500 lines #1]`, as in Claude Code: the prompt stays a line
that can be read and edited around, and the whole text goes to the model when the
message is sent (`Pastes.expand`). Deleting or changing the placeholder drops its paste.

The history file holds what was typed, placeholders included, so a huge paste never
lands in it whole (an entry over HISTORY_ENTRY_CHARS keeps its head); it is 0600 in a
0700 folder whatever the umask, like the session logs.
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path

from prompt_toolkit.history import FileHistory

from caretz import private_data

PASTE_LINES = 12  # a paste of more lines than this shows as a placeholder
PASTE_CHARS = 2_000  # and so does one longer than this, on few lines
HISTORY_ENTRY_CHARS = 10_000  # an entry longer than this is kept as its head
_PLACEHOLDER = re.compile(r"\[pasted [\d,]+ (?:lines|characters) #(\d+)\]")


class Pastes:
    """The large pastes of the message being typed, by number."""

    def __init__(self) -> None:
        self.held: dict[int, str] = {}
        self.count = 0

    def hold(self, text: str) -> str:
        """What to insert for a paste: itself when small, else a placeholder for it."""
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.count("\n") + (not text.endswith("\n"))
        if lines <= PASTE_LINES and len(text) <= PASTE_CHARS:
            return text
        self.count += 1
        self.held[self.count] = text
        size = f"{lines:,} lines" if lines > 1 else f"{len(text):,} characters"
        return f"[pasted {size} #{self.count}]"

    def expand(self, message: str) -> str:
        """`message` with each placeholder replaced by its paste; the pastes are let go."""
        held, self.held = self.held, {}

        def whole(match: re.Match[str]) -> str:
            return held.get(int(match.group(1)), match.group(0))

        return _PLACEHOLDER.sub(whole, message) if held else message


class PrivateHistory(FileHistory):
    """The prompt's history: private, and no entry huge. A data folder that cannot take
    it leaves the prompt working: `failure` says why, for the REPL to say once."""

    def __init__(self, path: Path):
        self.path = path
        self.failure: private_data.DataWriteFailed | None = None
        try:
            private_data.touch(path)
        except private_data.DataWriteFailed as failed:
            self.failure = failed
        super().__init__(str(path))

    def store_string(self, string: str) -> None:
        """The entry appended as prompt_toolkit's FileHistory writes one."""
        if len(string) > HISTORY_ENTRY_CHARS:
            left = len(string) - HISTORY_ENTRY_CHARS
            string = f"{string[:HISTORY_ENTRY_CHARS]}\n[… {left:,} more characters not kept]"
        lines = "".join(f"+{line}\n" for line in string.split("\n"))
        entry = f"\n# {datetime.datetime.now()}\n{lines}".encode("utf-8", "replace")
        try:  # made again private if it was removed meanwhile
            private_data.append(self.path, entry)
        except private_data.DataWriteFailed as failed:
            self.failure = failed
        else:
            self.failure = None
