"""Sessions of the application layer (`caretz.app.session.AppSession`) opened for real, in
this process, against the loopback model server."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from caretz.app.session import AppSession
from caretz.config.settings import resolve_settings
from tests.modelserver import ModelServer

MODEL = "claude-test"


class Recorder:
    """A View that keeps what it is told."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.text = ""

    def on_text(self, text: str) -> None:
        self.text += text

    def on_thinking(self, text: str) -> None:
        pass

    def on_retry(self, event: object) -> None:
        pass

    def on_response_start(self) -> None:
        pass

    def on_waiting(self, event: object) -> None:
        pass

    def on_event(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def types(self) -> list[str]:
        return [event.type for event in self.events]


@pytest.fixture
def env(server: ModelServer) -> dict[str, str]:
    return {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-test",
        "ANTHROPIC_BASE_URL": server.url,
        "CARETZ_MODEL": f"anthropic/{MODEL}",
    }


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def config(env: dict[str, str]) -> Path:
    """profiles.json, empty until a test writes it (`write_profiles`)."""
    return Path(env["CARETZ_CONFIG"])


def write_profiles(path: Path, profiles: dict[str, Any]) -> None:
    path.write_text(json.dumps({"profiles": profiles}))


@pytest.fixture
def open_session(env, workspace) -> Iterator[Any]:
    """Opens sessions (with a Recorder view unless given one); each is closed at the end."""
    opened: list[AppSession] = []

    def opener(view: Any = None, resume: str | None = None, **flags: Any) -> AppSession:
        settings = resolve_settings(flags, env)
        session = AppSession.open(
            settings, view or Recorder(), env=env, workspace=workspace, resume=resume
        )
        opened.append(session)
        return session

    yield opener
    for session in opened:
        session.close()  # a second close does nothing


def sessions_folder(env: dict[str, str]) -> Path:
    return Path(env["CARETZ_DATA_DIR"]) / "sessions"
