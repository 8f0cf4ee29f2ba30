"""The status line's command on a real session: what it prints is shown, and a command
that fails, prints nothing, or outlasts its timeout shows nothing (never an error)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from caretz.app.session import start_session
from caretz.config.settings import resolve_settings
from caretz.config.values import StatusLineValues
from caretz.ui.status_line import StatusLine, first_line, following
from tests.agent.test_compaction import Recorder
from tests.modelserver import ModelServer


@pytest.fixture
def session(server: ModelServer, tmp_path: Path):
    env = {
        "ANTHROPIC_API_KEY": "sk-test",
        "ANTHROPIC_BASE_URL": server.url,
        "CARETZ_DATA_DIR": os.environ["CARETZ_DATA_DIR"],
        "CARETZ_CONFIG": os.environ["CARETZ_CONFIG"],
    }
    opened = start_session(resolve_settings({}, env), Recorder(), env, workspace=tmp_path)
    yield opened
    opened.close()


def status(session, command: str, timeout_s: float = 60.0) -> StatusLine:
    line = StatusLine(StatusLineValues(command, timeout_s), redraw=lambda: None)
    line.session = session
    return line


def test_the_command_gets_the_session_and_its_first_line_is_shown(session, tmp_path):
    script = tmp_path / "status.sh"
    script.write_text(
        f"#!/bin/sh\ncat > {tmp_path}/got.json\nprintf '\\n\\033[32mok\\033[0m\\nmore\\n'\n"
    )
    script.chmod(0o755)

    assert status(session, str(script)).run_once() == "ok"

    got = json.loads((tmp_path / "got.json").read_text())
    assert got["session_id"] == session.id
    assert got["model"]["id"] == session.agent.config.model_ref
    assert got["permission_mode"] == "auto"


@pytest.mark.parametrize(
    "command",
    [
        "echo half a line; echo broken >&2; exit 3",  # fails, after printing
        "true",  # prints nothing
        "echo early; sleep 60",  # outlasts its timeout (0.2 s below)
        "/no/such/status-script",
    ],
)
def test_a_failing_or_slow_command_shows_nothing(session, command):
    assert status(session, command, timeout_s=0.2).run_once() == ""


def test_refreshes_run_in_the_background_and_redraw_on_a_change(session, tmp_path):
    drawn = threading.Event()
    line = StatusLine(StatusLineValues("echo ready", 60.0), redraw=drawn.set)
    line.follow(session, lambda: 0)  # returns at once: the command runs in the worker

    assert drawn.wait(60) and line.text == "ready"
    assert following(line, StatusLineValues("echo ready", 60.0), lambda: None) is line
    assert following(line, None, lambda: None) is None  # the profile has none now
    assert line.on_event not in session.log._listeners  # closed: it follows nothing


def test_control_sequences_never_reach_the_toolbar():
    assert first_line("\x1b]0;title\x07\x1b[1mmain\x1b[0m \x07· 12%\r\n") == "main · 12%"
