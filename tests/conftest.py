"""Every test runs with caretz's user state in a tmp dir and no real provider keys."""

from __future__ import annotations

import pytest

_SCRUBBED = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENROUTER_API_KEY",
    "CARETZ_PROFILE",
    "CARETZ_LOOP_GUARD",
    "CARETZ_MODEL",
    "NO_COLOR",
    "FORCE_COLOR",
]


@pytest.fixture(autouse=True)
def isolated_user_state(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("caretz-home")
    monkeypatch.setenv("CARETZ_DATA_DIR", str(home / "data"))
    monkeypatch.setenv("CARETZ_CONFIG", str(home / "profiles.json"))
    for name in _SCRUBBED:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def server():
    """The loopback model server (both wire protocols, scripted replies) for one test."""
    from tests.modelserver import ModelServer

    with ModelServer() as running:
        yield running
