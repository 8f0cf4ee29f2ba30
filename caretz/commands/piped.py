"""Standard input for a headless run: text piped to `-p`, or the prompt itself (`-p -`, or
no `-p` at all).

`echo log | caretz -p "summarize"` sends the prompt, a blank line, then the piped text in
a fenced block (a fence longer than any run of backticks in it). At most PIPED_LIMIT
bytes are read; past that the rest is left unread and a line after the block says so.
The prompt itself from stdin is read whole (up to PROMPT_LIMIT, past which it is refused).

A terminal is never read. A pipe that sends nothing at all may be one the caller
left open (GitHub Actions, a process spawned with its parent's stdin): with `-p`, caretz
waits FIRST_BYTE_WAIT_S for its first byte, then goes on without it and says so; once
text starts, it is read to its end. An empty pipe or /dev/null adds nothing.
"""

from __future__ import annotations

import os
import re
import select
import sys
from dataclasses import dataclass

from caretz.config_base import ConfigError

PIPED_LIMIT = 256 * 1024  # bytes of text piped beside a -p prompt
# The prompt itself from stdin is read whole; past this no model's window could take it,
# so it is refused rather than cut (`yes | caretz -p -` ends instead of filling memory).
PROMPT_LIMIT = 32 * 1024 * 1024
FIRST_BYTE_WAIT_S = 3.0
_CHUNK = 64 * 1024
_BACKTICKS = re.compile(r"`+")


@dataclass(frozen=True)
class Piped:
    """What stdin held: its text (up to the limit), whether there was more, and whether
    an open pipe sent nothing in the wait."""

    text: str = ""
    cut: bool = False
    silent: bool = False


def prompt_with_stdin(prompt: str | None, fd: int = 0) -> str | None:
    """The run's prompt with what stdin holds: `-p -` reads the prompt from it, `-p TEXT`
    has the piped text added, no `-p` takes what is piped (None: nothing). A terminal is
    never read. Raises ConfigError for `-p -` with nothing to read."""
    if os.isatty(fd):
        if prompt == "-":
            raise ConfigError(
                "-p - reads the prompt from stdin, but stdin is a terminal: pipe it in "
                "(caretz -p - < task.md)"
            )
        return prompt
    if prompt is None or prompt == "-":
        whole = read_piped(fd, limit=PROMPT_LIMIT)
        if whole.cut:
            raise ConfigError(
                f"the prompt on stdin is over {PROMPT_LIMIT >> 20} MiB, more than any model "
                "takes: put the material in files and name them in the prompt"
            )
        text = piped_prompt(whole)
        if prompt == "-" and not text:
            raise ConfigError(
                "-p - read an empty stdin: pipe the prompt in (caretz -p - < task.md)"
            )
        return text or None
    return with_piped_text(prompt, told(read_piped(fd, wait_s=FIRST_BYTE_WAIT_S)))


def told(piped: Piped) -> Piped:
    """`piped`, once stderr says what was left out of it."""
    for line in (silent_line() if piped.silent else "", cut_line() if piped.cut else ""):
        if line:
            sys.stderr.write(f"caretz: {line}\n")
    return piped


def read_piped(fd: int = 0, wait_s: float | None = None, limit: int = PIPED_LIMIT) -> Piped:
    """Read stdin, which is no terminal. `wait_s`: how long to wait for a first byte (None:
    as long as it takes). A stdin that is not open reads as empty."""
    try:
        if wait_s is not None and not select.select([fd], [], [], wait_s)[0]:
            return Piped(silent=True)
        data = _read_up_to(fd, limit + 1)
    except (OSError, ValueError):  # no stdin at all (its descriptor closed)
        return Piped()
    cut = len(data) > limit
    read = _cut_at_line(bytes(data[:limit])) if cut else bytes(data)
    return Piped(read.decode("utf-8", errors="replace"), cut=cut)


def _read_up_to(fd: int, size: int) -> bytearray:
    data = bytearray()
    while len(data) < size:
        chunk = os.read(fd, min(_CHUNK, size - len(data)))
        if not chunk:
            break
        data += chunk
    return data


def _cut_at_line(data: bytes) -> bytes:
    """`data` up to its last line break, when it has one (else as it is)."""
    end = data.rfind(b"\n")
    return data[: end + 1] if end > 0 else data


def with_piped_text(prompt: str, piped: Piped) -> str:
    """The prompt, a blank line, then the piped text in a fenced block (the prompt as it
    is when nothing but whitespace was piped)."""
    body = piped.text.strip("\n")
    if not body.strip():
        return prompt
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    joined = f"{prompt}\n\n{fence}\n{body}\n{fence}"
    if piped.cut:
        joined += f"\n{cut_line()}"
    return joined


def piped_prompt(piped: Piped) -> str:
    """The prompt read from stdin (`-p -`, or no -p with a pipe): "" when there was none."""
    return piped.text.strip()


def cut_line() -> str:
    return (
        f"(stdin was cut: only its first {PIPED_LIMIT // 1024} KiB are here; the rest was not read)"
    )


def silent_line() -> str:
    """What caretz says when an open pipe sent nothing in time."""
    return (
        f"stdin is an open pipe that sent nothing in {FIRST_BYTE_WAIT_S:g}s: going on without "
        "it (run with < /dev/null to skip the wait)"
    )
