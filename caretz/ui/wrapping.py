"""A marked line (`✓ bash …`, `  │ output`, `● done …`) wrapped on a terminal: its
wrapped rows start under the text after the marker, not at the screen's left edge.

The views print these lines with soft wrap, so the terminal would wrap them at column
0. On a terminal they are wrapped here instead; anywhere else (a pipe, a file, a test's
console) a line stays whole, exactly as before.
"""

from __future__ import annotations

import re

from rich.cells import cell_len, chop_cells
from rich.console import Console, RenderableType
from rich.text import Text

# Leading spaces, one mark, one space: what a wrapped row is indented under.
MARKER = re.compile(r" *[✓✗⧗│●⟳] ")
GUTTER = "│"  # a command's output keeps its bar on every row


def draws_in_place(console: Console) -> bool:
    """Whether `console` writes to a real terminal that can redraw a line. Rich also calls
    a pipe a terminal when FORCE_COLOR or TTY_COMPATIBLE is set; a redrawn line must not
    go there."""
    try:
        tty = console.file.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False
    return tty and console.is_terminal and not console.is_dumb_terminal


def hanging(console: Console, markup: str) -> RenderableType:
    """`markup` as the console should print it (see the module docstring)."""
    if not draws_in_place(console):
        return markup
    text = Text.from_markup(markup)
    plain = text.plain
    marker = MARKER.match(plain)
    width = console.width
    if marker is None or "\n" in plain or cell_len(plain) <= width:
        return markup
    indent = cell_len(marker.group())
    if width - indent < 10:  # too narrow to indent usefully
        return markup
    head, body = text.divide([len(marker.group())])
    gutter = GUTTER in marker.group()
    rest = Text(marker.group(), "dim") if gutter else Text(" " * indent)
    wrapped = Text()
    for number, row in enumerate(_rows(console, body, width - indent, gutter)):
        row.rstrip()
        if number:
            wrapped.append("\n")
        wrapped.append_text(rest if number else head)
        wrapped.append_text(row)
    return wrapped


def _rows(console: Console, body: Text, width: int, gutter: bool) -> list[Text]:
    """`body` in rows of at most `width` cells: a command's output (`gutter`) cut where
    each row ends, anything else wrapped at words."""
    if gutter:
        return list(body.divide(_row_ends(body.plain, width)))
    return list(body.wrap(console, width, overflow="fold"))


def _row_ends(plain: str, width: int) -> list[int]:
    """Where rows of at most `width` cells end in `plain` (its end left out)."""
    ends, position = [], 0
    for piece in chop_cells(plain, width)[:-1]:
        position += len(piece)
        ends.append(position)
    return ends
