"""The real `caretz` in a pseudo-terminal, its output drawn by a terminal emulator (pyte),
so a test can read the screen as a person would see it after cursor moves and erases."""

from __future__ import annotations

import sys

import pexpect
import pyte

from tests.e2e.conftest import Caretz

ROWS, COLUMNS = 40, 120


class Screen:
    """`python -m caretz ARGS` in a 40×120 pseudo-terminal, with an emulated screen."""

    def __init__(self, caretz: Caretz, *args: str, env: dict[str, str] | None = None):
        merged = caretz.environment({"TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1"})
        merged.update(env or {})
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "caretz", *args],
            cwd=str(caretz.workspace),
            env=merged,
            encoding="utf-8",
            timeout=20,
            dimensions=(ROWS, COLUMNS),
        )
        self.screen = pyte.Screen(COLUMNS, ROWS)
        self.stream = pyte.Stream(self.screen)
        self.raw = ""

    def expect(self, pattern: str) -> None:
        self.child.expect(pattern)
        self.feed(self.child.before + str(self.child.after))

    def wait_for_exit(self) -> int:
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

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
