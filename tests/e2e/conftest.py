"""Drive the real `caretz` command in a subprocess against the loopback model server."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

from tests.e2e.terminal import COLUMNS, terminal  # noqa: F401 (the pseudo-terminal fixture)
from tests.modelserver import ModelServer

AGENT_MODEL = "claude-test"
API_KEY = "sk-ant-test-secret-0123456789"
# The longest any wait on caretz may take before the test fails: only a hang reaches it
# (a busy machine may take long to start one, never this long).
WAIT_S = 120


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    @property
    def session_id(self) -> str:
        for line in self.stderr.splitlines():
            if "session " in line:
                return line.rsplit("session ", 1)[1].strip()
        raise AssertionError(f"no session id in stderr:\n{self.stderr}")


class Caretz:
    """The real CLI, run as `python -m caretz` in a workspace folder."""

    def __init__(self, server: ModelServer, workspace: Path):
        self.server = server
        self.workspace = workspace
        self.env = {
            **os.environ,
            "ANTHROPIC_API_KEY": API_KEY,
            "ANTHROPIC_BASE_URL": server.url,
            "OPENAI_BASE_URL": server.openai_url,
            "CARETZ_MODEL": f"anthropic/{AGENT_MODEL}",
            "PYTHONUNBUFFERED": "1",
        }

    def __call__(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        stdin: str = "",
        stdout: Path | None = None,
    ) -> Run:
        """Run caretz; with `stdout`, its standard output goes to that file (Run.stdout is "")."""
        with contextlib.ExitStack() as files:
            out = files.enter_context(stdout.open("w")) if stdout else subprocess.PIPE
            try:
                done = subprocess.run(
                    [sys.executable, "-m", "caretz", *args],
                    cwd=self.workspace,
                    env=self.environment(env),
                    input=stdin,
                    stdout=out,
                    stderr=subprocess.PIPE,
                    text=True,
                    timeout=WAIT_S,
                )
            except subprocess.TimeoutExpired as hung:  # killed: say what it had printed
                raise AssertionError(
                    f"caretz {' '.join(args)} did not end within {WAIT_S}s; its stderr:\n"
                    f"{_text(hung.stderr)}\nits stdout:\n{_text(hung.stdout)}"
                ) from None
        return Run(done.returncode, done.stdout or "", done.stderr)

    def environment(self, env: dict[str, str] | None = None) -> dict[str, str]:
        """The variables caretz runs with: the fixture's, then `env` (None removes one)."""
        merged = {**self.env, **(env or {})}
        return {name: value for name, value in merged.items() if value is not None}

    def events(self, session_id: str) -> list[dict[str, Any]]:
        path = self.data_dir / "sessions" / session_id / "events.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()]

    @property
    def data_dir(self) -> Path:
        return Path(os.environ["CARETZ_DATA_DIR"])

    def write_config(self, config: dict[str, Any]) -> Path:
        path = Path(os.environ["CARETZ_CONFIG"])
        path.write_text(json.dumps(config))
        return path


def _text(output: str | bytes | None) -> str:
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


class PipeLines:
    """A child's output pipe read line by line, each line within `WAIT_S`: a pipe silent
    longer fails the test, naming what was awaited, where a plain read would hang it. One
    reader thread per pipe, so lines read for one wait are never lost to the next."""

    def __init__(self, pipe: IO[str]):
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, args=(pipe,), daemon=True).start()

    def _pump(self, pipe: IO[str]) -> None:
        try:
            for line in pipe:
                self.lines.put(line)
        finally:
            self.lines.put(None)  # the end of the output

    def until(self, what: str, timeout_s: float = WAIT_S) -> Iterator[str]:
        """The lines as they come, to the pipe's end."""
        while True:
            try:
                line = self.lines.get(timeout=timeout_s)
            except queue.Empty:
                message = f"no line within {timeout_s:g}s while waiting for {what}"
                raise AssertionError(message) from None
            if line is None:
                return
            yield line


@pytest.fixture
def workspace(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def caretz(server, workspace):
    return Caretz(server, workspace)


@pytest.fixture
def screen(caretz):
    """Open caretz in a pseudo-terminal drawn by a terminal emulator; closed at the end."""
    from tests.e2e.terminal import Screen

    opened: list[Screen] = []

    def open_screen(
        *args: str, env: dict[str, str] | None = None, columns: int = COLUMNS
    ) -> Screen:
        opened.append(Screen(caretz, *args, env=env, columns=columns))
        return opened[-1]

    yield open_screen
    for each in opened:
        each.close()


def types(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


def turn_end(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The run's last `Turn.Ended`, which ends its log: only the record of the files as
    the turn left them (`Checkpoint.Settled`, written once the turn has ended) follows."""
    index = max(i for i, event in enumerate(events) if event["type"] == "Turn.Ended")
    assert all(event["type"] == "Checkpoint.Settled" for event in events[index + 1 :])
    return events[index]
