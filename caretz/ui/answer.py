"""Where `-p` writes the answer: stdout, as it streams.

On a terminal the answer is drawn as Markdown the way the interactive session draws it
(`TerminalAnswer`); piped or redirected it is the model's text, byte for byte
(`PlainAnswer`), so `caretz -p … > answer.md` keeps the raw Markdown.

A reply that breaks off and is asked for again is taken back where stdout allows it: a
file is cut back, a terminal erases it; a pipe keeps it (the retry line says why).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import IO, TYPE_CHECKING

from caretz.lazy import lazy_module

if TYPE_CHECKING:
    from rich import live as rich_live

    from caretz.ui import markdown
else:
    # Only a terminal's answer is drawn: Rich's Live region and the Markdown parser.
    rich_live = lazy_module("rich.live")
    markdown = lazy_module("caretz.ui.markdown")

if TYPE_CHECKING:
    from rich.console import Console
    from rich.live import Live

    from caretz.ui.markdown import MarkdownStream

Clock = Callable[[], float]


class PlainAnswer:
    """The answer's text as it came, for a pipe or a file."""

    def __init__(self, out: IO[str]):
        self.out = out
        self.mid_line = False  # the last text written did not end its line
        self.streamed = ""  # this reply's text, since the last line on stderr
        self.start: int | None = None  # where this reply began, when stdout is a file

    def begin(self) -> None:
        self.streamed = ""
        self.start = _file_position(self.out)

    def write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()
        self.streamed += text
        self.mid_line = not text.endswith("\n")

    def settle(self) -> None:
        """End the line the answer is on, so a line on stderr starts a line of its own;
        what was written stays (it can no longer be taken back)."""
        if self.mid_line:
            self.out.write("\n")
            self.out.flush()
            self.mid_line = False
        self.streamed = ""

    def take_back(self) -> None:
        if not self.streamed or self.start is None:
            return
        self.out.seek(self.start)
        self.out.truncate()
        self.streamed, self.mid_line = "", False


class TerminalAnswer:
    """The answer drawn as Markdown on a terminal, redrawn while it grows."""

    def __init__(self, console: Console, clock: Clock = time.monotonic):
        self.console = console
        self.clock = clock
        self.stream: MarkdownStream | None = None
        self.live: Live | None = None

    def begin(self) -> None:
        self.settle()

    def write(self, text: str) -> None:
        if self.stream is None:
            self.open()
        assert self.stream is not None and self.live is not None
        tail = self.stream.tail
        self.stream.add(text)
        if self.stream.tail is not tail:  # re-rendered (at most every RENDER_INTERVAL_S)
            self.live.update(self.stream.tail, refresh=True)

    def open(self) -> None:
        self.stream = markdown.MarkdownStream(self.console, self.clock)
        self.live = rich_live.Live(
            markdown.Lines([]),
            console=self.console,
            auto_refresh=False,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self.live.start()

    def settle(self) -> None:
        """Print what streamed so far for good and stop redrawing."""
        stream, self.stream = self.stream, None
        if stream is None:
            return
        self.close(erase=0)
        stream.finish()

    def take_back(self) -> None:
        stream, self.stream = self.stream, None
        if stream is not None:
            self.close(erase=stream.printed)

    def close(self, erase: int) -> None:
        """Stop redrawing (the region is cleared), then erase `erase` printed lines."""
        live, self.live = self.live, None
        if live is not None:
            live.stop()
        if erase:
            markdown.erase_printed(self.console, erase)


def _file_position(out: IO[str]) -> int | None:
    """Where the next write to `out` goes, when `out` is a regular file (else None)."""
    try:
        if not out.seekable():
            return None
        out.flush()
        return out.tell()
    except (OSError, ValueError):
        return None
