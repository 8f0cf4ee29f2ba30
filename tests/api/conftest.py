"""caretz.Session driven for real, in this process, against the loopback model server."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import caretz
from tests.modelserver import ModelServer

MODEL = "claude-test"
API_KEY = "sk-ant-api-test-0123456789"


@pytest.fixture
def env(server: ModelServer) -> dict[str, str]:
    return {
        **os.environ,
        "ANTHROPIC_API_KEY": API_KEY,
        "ANTHROPIC_BASE_URL": server.url,
        "CARETZ_MODEL": f"anthropic/{MODEL}",
    }


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def open_session(env, workspace) -> Iterator[Callable[..., caretz.Session]]:
    """Opens `caretz.Session`s in the workspace with the test's environment; each one is
    closed at the end (a second close does nothing)."""
    opened: list[Any] = []

    def opener(**keywords: Any) -> caretz.Session:
        session = caretz.Session(workspace, env=env, **keywords)
        opened.append(session)
        return session

    yield opener
    for session in opened:
        session.close()


def events_of(session: caretz.Session) -> list[dict[str, Any]]:
    return [json.loads(line) for line in session.events_path.read_text().splitlines()]


def sessions_folder(env: dict[str, str]) -> Path:
    return Path(env["CARETZ_DATA_DIR"]) / "sessions"
