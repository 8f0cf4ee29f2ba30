"""Markdown as both terminal views draw it, and drawn while it streams.

`WrappingMarkdown` is Rich's Markdown with two changes: a table cell wraps a long word
instead of cutting it to "…", and blocks sit one blank line apart (Rich draws a table
with a blank edge above and below, and a code block with a padding line above and
below, which doubled or tripled the gap next to them).

`MarkdownStream` grows delta by delta: lines that can no longer change are printed for
good, and only the last few (which the next delta may still change) are kept in `tail`
for a redrawn region to show.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.control import Control
from rich.markdown import CodeBlock, Markdown, MarkdownElement, TableElement
from rich.segment import ControlType, Segment
from rich.syntax import Syntax
from rich.table import Table

Clock = Callable[[], float]

LIVE_WINDOW_LINES = 8  # streamed lines kept redrawable (a later delta may change them)
RENDER_INTERVAL_S = 0.08  # re-render streamed Markdown at most this often


class Lines:
    """Pre-rendered lines, printed as they are."""

    def __init__(self, lines: list[list[Segment]]):
        self.lines = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in self.lines:
            yield from line
            yield Segment.line()


class _EdgelessTable(TableElement):
    """A Markdown table without blank edge rows, whose cells wrap a long word."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = Table(
            box=box.SIMPLE,
            pad_edge=False,
            style="markdown.table.border",
            show_edge=False,
            collapse_padding=True,
        )
        header = self.header.row if self.header is not None else None
        for cell in header.cells if header is not None else []:
            heading = cell.content.copy()
            heading.stylize("markdown.table.header")
            table.add_column(heading, overflow="fold")
        for row in self.body.rows if self.body is not None else []:
            for cell in row.cells:
                cell.content.overflow = "fold"
            table.add_row(*[cell.content for cell in row.cells])
        yield table


class _TightCodeBlock(CodeBlock):
    """A code block padded at its sides only: the blank line between blocks is the gap."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        yield Syntax(code, self.lexer_name, theme=self.theme, word_wrap=True, padding=(0, 1))


class WrappingMarkdown(Markdown):
    """Markdown as the terminal views draw it (see the module docstring)."""

    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "table_open": _EdgelessTable,
        "fence": _TightCodeBlock,
        "code_block": _TightCodeBlock,
    }


class MarkdownStream:
    """Markdown that grows delta by delta; see the module docstring.

    A line is printed for good once the block it belongs to is complete (a blank
    line outside a code fence follows it), so a table or a list that is still
    growing is redrawn until it is whole. A block taller than the screen gives
    up its top lines early, so the redrawn region always fits.
    """

    def __init__(self, console: Console, clock: Clock = time.monotonic):
        self.console = console
        self.clock = clock
        self.text = ""
        self.printed = 0  # lines printed for good
        self.tail = Lines([])
        self._rendered_at: float | None = None
        self._prefix: tuple[int, int] = (0, 0)  # (length of the complete blocks, their lines)

    def add(self, delta: str) -> None:
        self.text += delta
        now = self.clock()
        if self._rendered_at is None or now - self._rendered_at >= RENDER_INTERVAL_S:
            self._rendered_at = now
            self.render(final=False)

    def finish(self) -> None:
        self.render(final=True)

    def render(self, final: bool) -> None:
        lines = self._lines(self.text)
        if final:
            stable = len(lines)
        else:
            room = max(self.console.height - 6, LIVE_WINDOW_LINES)
            stable = max(self._complete_lines(), len(lines) - room)
        if stable > self.printed:
            self.console.print(Lines(lines[self.printed : stable]))
            self.printed = stable
        self.tail = Lines(lines[self.printed :])

    def _complete_lines(self) -> int:
        """How many rendered lines belong to blocks no later delta can change."""
        length = len(complete_blocks(self.text))
        if length != self._prefix[0]:
            self._prefix = (length, len(self._lines(self.text[:length])) if length else 0)
        return self._prefix[1]

    def _lines(self, text: str) -> list[list[Segment]]:
        options = self.console.options
        rendered = self.console.render_lines(
            WrappingMarkdown(text), options, pad=False, new_lines=False
        )
        return [_rstrip(line) for line in rendered]


def complete_blocks(text: str) -> str:
    """`text` up to its last blank line outside a code fence: the blocks that are whole."""
    cut, position, fenced = 0, 0, False
    for line in text.splitlines(keepends=True):
        position += len(line)
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and not line.strip() and line.endswith("\n"):
            cut = position
    return text[:cut]


def erase_printed(console: Console, rows: int) -> None:
    """Erase the `rows` lines printed just above the cursor (at most a screenful)."""
    rows = min(rows, console.height - 1)
    up_and_erase = [(ControlType.CURSOR_UP, 1), (ControlType.ERASE_IN_LINE, 2)]
    console.control(Control(ControlType.CARRIAGE_RETURN, *up_and_erase * rows))


def _rstrip(line: list[Segment]) -> list[Segment]:
    """A rendered line without its trailing padding (coloured backgrounds are kept)."""
    line = list(line)
    while line and not line[-1].text.strip() and not (line[-1].style and line[-1].style.bgcolor):
        line.pop()
    if line and not (line[-1].style and line[-1].style.bgcolor):
        last = line[-1]
        line[-1] = Segment(last.text.rstrip(), last.style, last.control)
    return line
