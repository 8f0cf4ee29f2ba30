"""What makes a line a slash command, and the names custom commands may not take.

The interactive session's own commands live in `caretz/ui/slash.py`; their names are
here so that `-p "/name"`, ACP and the Python API refuse them the same way without
loading the interactive session (tests/ui/test_slash.py keeps the two lists equal).
"""

from __future__ import annotations

import difflib as close_spellings
from collections.abc import Iterable

# The interactive session's commands and their aliases.
RESERVED_NAMES = (
    "help",
    "model",
    "profile",
    "loop-guard",
    "permissions",
    "plan",
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


def unknown_command(name: str, known: Iterable[str], otherwise: str) -> str:
    """The one line for a `/name` that names no command: the names it is close to (those
    it begins, then those it resembles), else `otherwise` (where to look)."""
    close = similar_names(name, known)
    if close:
        either = " or ".join([", ".join(close[:-1]), close[-1]] if len(close) > 1 else close)
        return f"unknown command /{name}: did you mean {either}? (nothing was sent)"
    return f"unknown command /{name}: {otherwise} (nothing was sent)"


def similar_names(name: str, known: Iterable[str], most: int = 3) -> list[str]:
    """Up to `most` of `known` as `/name`s: those `name` begins, then the closest spellings."""
    names = list(dict.fromkeys(known))
    begun = [each for each in names if each.startswith(name)]
    spelled = close_spellings.get_close_matches(name, names, n=most, cutoff=0.6)
    return [f"/{each}" for each in list(dict.fromkeys(begun + spelled))[:most]]
