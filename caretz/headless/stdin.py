"""Standard input for a headless run: text piped to `-p`, or the prompt itself (`-p -`).

`echo log | caretz -p "summarize"` sends the prompt, a blank line, then the piped text in
a fenced block (a fence longer than any run of backticks in it). At most PIPED_LIMIT
bytes are read; past that the rest is left unread and a line after the block says so.

A terminal is never read. A pipe that sends nothing at all may be one the caller
left open (GitHub Actions, a process spawned with its parent's stdin): with `-p`, caretz
waits FIRST_BYTE_WAIT_S for its first byte, then goes on without it and says so; once
text starts, it is read to its end. An empty pipe or /dev/null adds nothing.
"""

from __future__ import annotations

import os
import re
import select
from dataclasses import dataclass

PIPED_LIMIT = 256 * 1024  # bytes
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


def stdin_is_terminal(fd: int = 0) -> bool:
    """True for a terminal, and for a stdin that is not open at all: neither is read."""
    try:
        os.fstat(fd)
    except OSError:
        return True
    return os.isatty(fd)


def read_piped(fd: int = 0, wait_s: float | None = None, limit: int = PIPED_LIMIT) -> Piped:
    """Read stdin (never a terminal: call `stdin_is_terminal` first). `wait_s`: how long to
    wait for a first byte (None: as long as it takes)."""
    if wait_s is not None:
        ready, _, _ = select.select([fd], [], [], wait_s)
        if not ready:
            return Piped(silent=True)
    data = bytearray()
    while len(data) <= limit:
        chunk = os.read(fd, min(_CHUNK, limit + 1 - len(data)))
        if not chunk:
            break
        data += chunk
    cut = len(data) > limit
    if cut:
        data = _cut_at_line(bytes(data[:limit]))
    return Piped(bytes(data).decode("utf-8", errors="replace"), cut=cut)


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
    prompt = piped.text.strip()
    return f"{prompt}\n\n{cut_line()}" if prompt and piped.cut else prompt


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
