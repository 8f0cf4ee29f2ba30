"""A command's prompt with its arguments filled in.

`$ARGUMENTS` is everything after the command's name; `$1` … `$9` are its words (read
as a shell reads them, so `"two words"` is one). A prompt that names neither gets the
arguments after it, on a line of their own, so nothing typed is lost.
"""

from __future__ import annotations

import re
import shlex

_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9])")


def words(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:  # an unclosed quote: plain words
        return arguments.split()


def expand(prompt: str, arguments: str) -> str:
    arguments = arguments.strip()
    positional = words(arguments)

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "ARGUMENTS":
            return arguments
        index = int(name) - 1
        return positional[index] if index < len(positional) else ""

    text, count = _PLACEHOLDER.subn(fill, prompt)
    if not count and arguments:
        text = f"{text.rstrip()}\n\nARGUMENTS: {arguments}"
    return text
