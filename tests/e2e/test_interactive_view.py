"""How the interactive session draws a turn, read off the screen of a real pseudo-terminal
(pyte): the gaps between Markdown blocks, wrapped lines, Tab on `/model`, background jobs
marked and stopped with `/jobs stop`. The real CLI against the loopback server."""

from __future__ import annotations

import re

from tests.modelserver import ModelServer, text, tool
from tests.sandbox.helpers import marker, sleepers, wait_for

ANSWER = (
    "Here is what I found.\n\n"
    "```python\nprint('hi')\n```\n\n"
    "| file | change |\n|---|---|\n| app.py | fixed |\n\n"
    "- one item\n- another item\n\n"
    "That is all."
)


def rows_between(screen_text: str, first: str, last: str) -> list[str]:
    rows = screen_text.splitlines()
    start = next(n for n, row in enumerate(rows) if first in row)
    end = next(n for n, row in enumerate(rows) if last in row)
    return rows[start : end + 1]


def test_markdown_blocks_are_one_blank_line_apart(screen, server: ModelServer):
    server.add(text(ANSWER))
    term = screen()

    term.turn("report")

    rows = rows_between(term.text, "Here is what I found.", "That is all.")
    assert any("print('hi')" in row for row in rows)
    assert any(re.search(r"app\.py +fixed", row) for row in rows)
    blank = [row.strip() == "" for row in rows]
    assert not any(a and b for a, b in zip(blank, blank[1:], strict=False)), "\n".join(rows)
    assert blank.count(True) == 4  # between the five blocks


def test_wrapped_lines_start_under_the_text_after_their_mark(screen, server, workspace):
    long_word = "w" * 90
    server.add(
        tool("bash", command=f"echo start {long_word} end; exit 1"),
        text("It failed."),
    )
    term = screen(columns=60)

    term.turn("run it")

    rows = rows_between(term.text, "✗ bash echo start", "It failed.")[:-1]
    bar = next(n for n, row in enumerate(rows) if row.startswith("  │"))
    tool_line, output = rows[:bar], rows[bar:]
    # The tool line's rows after the first start two columns in, under "bash".
    assert len(tool_line) == 3, rows
    assert all(row.startswith("  w") for row in tool_line[1:]), rows
    assert re.fullmatch(r"w+… \(\d+\.\ds, exit 1\)", tool_line[-1].strip()), rows
    # The command's output keeps its bar on each row it wraps to.
    assert len(output) == 2 and all(row.startswith("  │ ") for row in output), rows
    assert "".join(row[4:] for row in output) == f"start {long_word} end"


def test_tab_completes_a_known_model_after_slash_model(screen, server: ModelServer):
    term = screen()

    term.expect_prompt()
    term.child.send("/model anthropic/claude-haiku-4")
    term.expect("claude-haiku-4-5")  # the menu, offered while typing: only then is Tab read
    term.child.send("\t\r")

    term.expect("model: anthropic/claude-haiku-4-5; the conversation carries on")
    server.add(text("Hello from haiku."), model="claude-haiku-4-5")
    term.type("hi")
    term.expect("Hello from haiku.")
    assert [request.model for request in server.requests] == ["claude-haiku-4-5"]


def test_a_background_job_is_marked_and_jobs_stop_ends_it(screen, server: ModelServer):
    mark = marker()
    server.add(tool("bash", command=f"sleep {mark}", background=True), text("The job runs."))
    term = screen()

    term.turn("start the server")

    assert f"⧗ background job j1: sleep {mark} (/jobs stop j1 stops it)" in term.text
    assert "✓ bash sleep" not in term.text
    assert wait_for(lambda: bool(sleepers(mark)), timeout=30)
    term.child.send("/jobs stop j1\r")
    term.expect(f"stopped job j1: sleep {mark}")
    assert wait_for(lambda: not sleepers(mark), timeout=30)
    term.type("/jobs")
    term.expect(r"j1 +stopped")
