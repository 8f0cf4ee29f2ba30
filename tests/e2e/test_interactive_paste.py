"""Large pastes in the interactive session, through a pseudo-terminal with bracketed paste.

A paste of many lines shows as a `[pasted N lines #k]` placeholder; the whole text goes
to the model; one over the model's window is refused in one line and nothing is sent;
the history file is private and never holds a paste whole. A headless prompt over the
window is refused the same way.
"""

from __future__ import annotations

import os
import stat
import threading

from tests.e2e.conftest import Caretz
from tests.e2e.terminal import Screen
from tests.modelserver import ModelServer, text

PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"
HUGE_LINES = 10_500  # about 1 MB: some 262,000 tokens for claude-test's window of 128,000


def numbered(count: int, width: int = 100) -> str:
    """`count` lines of `width` characters, each saying its number."""
    return "".join(f"line {n:05d} ".ljust(width - 1, "x") + "\n" for n in range(1, count + 1))


def paste(term: Screen, pasted: str) -> None:
    """Paste `pasted` (bracketed, as a terminal does) and press Enter. Written from a
    thread, so the test reads what caretz draws meanwhile and neither side can block."""
    data = (PASTE_START + pasted + PASTE_END).encode()
    descriptor = term.child.child_fd

    def write() -> None:
        for start in range(0, len(data), 4096):
            os.write(descriptor, data[start : start + 4096])

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    while writer.is_alive():
        term.wait_for_screen("›")  # reads on while the paste goes in
        writer.join(0.05)
    term.child.send("\r")


def test_a_large_paste_is_a_placeholder_sent_whole_and_kept_out_of_the_history(
    caretz: Caretz, server: ModelServer, screen
):
    server.add(text("Read all 300 lines."))
    history = caretz.data_dir / "prompt-history"
    term = screen()
    term.expect_prompt()

    paste(term, numbered(HUGE_LINES))  # about a megabyte: over the model's window
    term.expect("the prompt is too large for the model's window")
    term.expect_prompt()
    term.child.send("summarize this: ")
    paste(term, numbered(300))
    term.expect("done · ")
    term.expect_prompt()

    assert f"[pasted {HUGE_LINES:,} lines #1]" in term.raw
    assert "summarize this: [pasted 300 lines #2]" in term.raw
    assert "line 00150" not in term.raw  # never drawn in the input
    assert "nothing was sent" in term.raw
    assert len(server.requests) == 1  # the huge one was never sent
    sent = server.requests[0].messages[-1]["content"]
    assert (
        sent == "summarize this: " + numbered(300).rstrip()
    )  # the whole paste (stripped, as typed)
    assert "Read all 300 lines." in term.raw
    term.child.sendcontrol("d")
    assert term.wait_for_exit() == 0
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    assert stat.S_IMODE(history.parent.stat().st_mode) == 0o700
    kept = history.read_text()
    assert "[pasted 300 lines #2]" in kept and "line 00001" not in kept
    assert len(kept) < 1_000


def test_a_headless_prompt_over_the_window_is_refused_in_one_line(
    caretz: Caretz, server: ModelServer
):
    run = caretz("-p", "-", stdin=numbered(HUGE_LINES))

    assert run.code == 2
    [line] = run.stderr.splitlines()
    assert line.startswith("caretz: the prompt is too large for the model's window: about ")
    assert "anthropic/claude-test takes 128,000" in line and "nothing was sent" in line
    assert server.requests == []
