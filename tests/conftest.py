"""Every test runs with caretz's user state in a tmp dir and no real provider keys."""

from __future__ import annotations

import signal

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
    "CARETZ_ENABLE_TELEMETRY",
    "OTEL_SDK_DISABLED",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_LOG_USER_PROMPTS",
    "OTEL_LOG_TOOL_DETAILS",
    "TRACEPARENT",
]


# The slowest tests first: those running a real model, then real MCP servers, then the
# other end-to-end ones. Under xdist they start at once on every worker and the quick unit
# tests fill the gaps at the end, so no worker is left with a long tail.
SLOW_FIRST = (
    "tests/e2e/test_local_models.py",
    "tests/eval/test_judge_eval_local.py",
    "tests/mcp/",
    "tests/e2e/",
)


def pytest_configure(config: pytest.Config) -> None:
    # A suite started in the background of a shell without job control has SIGINT
    # ignored, and every caretz it starts would inherit that: the Ctrl-C tests need it
    # delivered. A handled signal is reset to its default in a child, an ignored one is not.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        return next(
            (i for i, prefix in enumerate(SLOW_FIRST) if item.nodeid.startswith(prefix)),
            len(SLOW_FIRST),
        )

    items.sort(key=rank)  # stable: each group keeps its order


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
