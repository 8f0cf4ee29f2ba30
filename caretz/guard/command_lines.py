"""Command lines told apart only by what runs, not by how they are spelled.

`./x` and `x`, a leading `cd . &&`, the order of a test runner's flags and its
verbosity flags (`-v`, `-q`, `--tb=short`, `--color=yes`, …) change nothing
about what a command does, so an agent that re-spells the same command is
still repeating it. Anything else is kept as written: a different argument, a
different flag that changes behaviour (`-x`, `-k name`), or a pipeline.
"""

from __future__ import annotations

import re
import shlex
from functools import lru_cache

_NO_OP_CD = re.compile(r"^\s*cd\s+(?:\.|\./)\s*(?:&&|;)\s*")
# Test runners, as the words that start their command line.
_RUNNERS = (
    ("pytest",),
    ("py.test",),
    ("python", "-m", "pytest"),
    ("python3", "-m", "pytest"),
    ("go", "test"),
    ("cargo", "test"),
    ("jest",),
    ("npx", "jest"),
    ("vitest",),
    ("npx", "vitest"),
)
_VERBOSITY = re.compile(
    r"^(?:-v+|-q+|--verbose|--quiet|--tb=\w+|--color=\w+|--no-header|--durations=\d+"
    r"|-r[a-zA-Z]+|--disable-warnings|-W=?ignore|--no-summary)$"
)
_SEPARATORS = ("&&", "||", ";", "|")


@lru_cache(maxsize=512)
def normalize_command(command: str) -> str:
    """`command` as it runs: the same text for spellings that run the same thing."""
    text = command.strip()
    while True:
        stripped = _NO_OP_CD.sub("", text, count=1)
        if stripped == text:
            break
        text = stripped
    try:
        words = shlex.split(text, posix=True)
    except ValueError:
        return text  # unbalanced quotes: compare as written
    if not words or any(word in _SEPARATORS for word in words) or "\n" in text:
        return text
    if words[0].startswith("./") and len(words[0]) > 2:
        words[0] = words[0][2:]
    runner = next((r for r in _RUNNERS if tuple(words[: len(r)]) == r), None)
    if runner is not None:
        words = _runner_words(words, len(runner))
    return shlex.join(words)


def _runner_words(words: list[str], start: int) -> list[str]:
    """A test runner's words: verbosity flags dropped, the other flags in one order
    (a flag's value stays with it when written `--flag=value`)."""
    head, rest = words[:start], words[start:]
    flags: list[str] = []
    operands: list[str] = []
    index = 0
    while index < len(rest):
        word = rest[index]
        if word.startswith("-") and not _VERBOSITY.match(word):
            takes_value = word in ("-k", "-m", "-p", "--run", "-run", "-c", "--rootdir")
            if takes_value and index + 1 < len(rest):
                flags.append(f"{word} {rest[index + 1]}")
                index += 1
            else:
                flags.append(word)
        elif not word.startswith("-"):
            operands.append(word)
        index += 1
    ordered = [part for flag in sorted(flags) for part in flag.split(" ", 1)]
    return head + ordered + operands
