"""The real `caretz` in a pseudo-terminal: `Terminal` reads what it prints, `Screen` also
draws it with a terminal emulator (pyte), so a test can read the screen as a person sees it
after the cursor moves and erases."""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import pexpect
import pyte
import pytest

if TYPE_CHECKING:
    from tests.e2e.conftest import Caretz

PROMPT = "›"  # the prompt's mark; nothing else caretz prints uses it
CURSOR_SHOWN = "\x1b[?25h"
TIMEOUT_S = 120  # a failing wait only: a busy machine may take long to draw a line
ROWS, COLUMNS = 40, 120


def wrapped(text: str) -> str:
    """A pattern for `text` wherever the terminal wraps it (a line break for any space): a
    message holding a path is as long as the test's tmp folder, which differs by worker."""
    gap = r"(?:\s|\x1b\[[0-9;?]*[A-Za-z])+"  # spaces, line breaks and the styles between
    return gap.join(re.escape(word) for word in text.split())


class Terminal:
    """`python -m caretz` in a pseudo-terminal, ROWS by `columns` (COLUMNS unless told)."""

    def __init__(
        self,
        caretz: Caretz,
        *args: str,
        env: dict[str, str] | None = None,
        columns: int = COLUMNS,
        launcher: Sequence[str] = (),
    ):
        """`launcher`: a command that runs caretz's command line it is given (a mount
        namespace of its own, say)."""
        merged = {**caretz.env, **(env or {})}
        merged.update(
            TERM="xterm-256color",
            # Nobody answers prompt_toolkit's cursor-position queries in a test terminal.
            PROMPT_TOOLKIT_NO_CPR="1",
            # The terminal's own size: pytest-xdist's workers export COLUMNS=80 and LINES=24,
            # which Rich would believe over the pseudo-terminal's.
            COLUMNS=str(columns),
            LINES=str(ROWS),
        )
        command = [*launcher, sys.executable, "-m", "caretz", *args]
        self.child = pexpect.spawn(
            command[0],
            command[1:],
            cwd=str(caretz.workspace),
            env=merged,
            encoding="utf-8",
            timeout=TIMEOUT_S,
            dimensions=(ROWS, columns),
        )
        self.transcript: list[str] = []

    def expect(self, pattern: str) -> re.Match[str]:
        self.child.expect(pattern)
        self.transcript.append(self.child.before + str(self.child.after))
        return self.child.match

    def expect_prompt(self) -> None:
        """Wait for the prompt, drawn whole: its mark, then the cursor shown again (the
        last thing prompt_toolkit writes once it reads keys), so nothing typed is lost."""
        self.expect(PROMPT)
        self.expect(re.escape(CURSOR_SHOWN))

    def type(self, line: str) -> None:
        """Type `line` at the prompt (waiting for it first) and press Enter."""
        self.expect_prompt()
        self.child.send(line + "\r")

    def ctrl_d(self) -> str:
        """Press Ctrl-D at the next prompt; the session ID caretz prints as it exits."""
        self.expect_prompt()
        self.child.sendcontrol("d")
        match = self.expect(r"caretz --resume (\S+)")
        self.child.expect(pexpect.EOF)
        return match.group(1)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


class Screen(Terminal):
    """A Terminal whose output is also drawn on an emulated screen."""

    def __init__(
        self,
        caretz: Caretz,
        *args: str,
        env: dict[str, str] | None = None,
        columns: int = COLUMNS,
        launcher: Sequence[str] = (),
    ):
        super().__init__(caretz, *args, env=env, columns=columns, launcher=launcher)
        self.screen = pyte.Screen(columns, ROWS)
        self.stream = pyte.Stream(self.screen)
        self.raw = ""  # everything caretz wrote, escape sequences included

    def expect(self, pattern: str) -> re.Match[str]:
        match = super().expect(pattern)
        self.feed(self.transcript[-1])
        return match

    def turn(self, line: str, ends: str = "done · ") -> None:
        """Type `line` at the prompt, wait for the turn's closing line and the next prompt."""
        self.type(line)
        self.expect(ends)
        self.expect_prompt()

    def wait_for_screen(self, text: str, absent: str | None = None) -> None:
        """Read on until the screen shows `text` (and not `absent`): the prompt redraws only
        what changed, so a line being edited is never written whole to match in the raw
        output."""
        deadline = time.monotonic() + TIMEOUT_S
        pending, self.child.buffer = self.child.buffer, ""  # what expect() read past its match
        self.feed(pending)
        while text not in self.text or (absent is not None and absent in self.text):
            if time.monotonic() > deadline:
                raise AssertionError(f"the screen never showed {text!r}:\n{self.text}")
            try:
                chunk = self.child.read_nonblocking(4096, timeout=1)
            except pexpect.TIMEOUT:
                continue
            self.transcript.append(chunk)
            self.feed(chunk)

    def wait_for_exit(self) -> int:
        """Wait for caretz to exit; its exit code (-1 if a signal killed it)."""
        self.child.expect(pexpect.EOF)
        self.feed(self.child.before)
        self.child.close()
        return self.child.exitstatus if self.child.exitstatus is not None else -1

    def feed(self, text: str) -> None:
        self.raw += text
        self.stream.feed(text)

    @property
    def text(self) -> str:
        """What the screen shows now, row by row, without trailing blanks."""
        return "\n".join(line.rstrip() for line in self.screen.display).strip("\n")


@pytest.fixture
def terminal(caretz: Caretz) -> Iterator[object]:
    """Opens `caretz` in pseudo-terminals (`terminal(*args, env=…)`); closes them all after."""
    opened: list[Terminal] = []

    def open_terminal(*args: str, env: dict[str, str] | None = None) -> Terminal:
        opened.append(Terminal(caretz, *args, env=env))
        return opened[-1]

    yield open_terminal
    for term in opened:
        term.close()
