"""What makes a line a slash command, and the names custom commands may not take.

The interactive session's own commands live in `caretz/ui/slash.py`; their names are
here so that `-p "/name"`, ACP and the Python API refuse them the same way without
loading the interactive session (tests/ui/test_slash.py keeps the two lists equal).
"""

from __future__ import annotations

# The interactive session's commands and their aliases.
RESERVED_NAMES = (
    "help",
    "model",
    "profile",
    "loop-guard",
    "permissions",
    "goal",
    "loop",
    "sessions",
    "resume",
    "clear",
    "cost",
    "compact",
    "rewind",
    "undo",
    "jobs",
    "mcp",
    "hooks",
    "exit",
    "quit",
    "q",
    "new",
    "?",
)


def parse(text: str) -> tuple[str, str] | None:
    """("model", "openai/gpt-5") for "/model openai/gpt-5"; None when it is no command
    (a line such as `/etc/hosts is wrong`: a second slash in the first word)."""
    if not text.startswith("/"):
        return None
    head, _, rest = text[1:].strip().partition(" ")
    if not head or "/" in head:
        return None
    return head.lower(), rest.strip()
