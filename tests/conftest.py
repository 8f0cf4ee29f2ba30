"""Every test runs with caretz's user state in a tmp dir and no real provider keys."""

from __future__ import annotations

import os
import signal
import stat
import sys
import tempfile
from pathlib import Path

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


def bytecode_outside_the_tree() -> None:
    """With PYTHONDONTWRITEBYTECODE set (no __pycache__ beside the sources), every caretz the
    tests start compiled caretz's modules again (a third of a `caretz -p` run's CPU, 0.3 s,
    thousands of runs), and each test process its own and the test modules. Their bytecode
    goes to a folder of this user's in the temp dir instead, kept from run to run (Python
    checks each file against its source), and never into the tree."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return  # Python keeps bytecode in __pycache__ folders as usual
    folder = Path(tempfile.gettempdir()) / f"caretz-tests-bytecode-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    found = folder.lstat()
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
        return  # not ours alone: its bytecode could be anyone's code
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    os.environ["PYTHONPYCACHEPREFIX"] = str(folder)
    sys.dont_write_bytecode, sys.pycache_prefix = False, str(folder)


def pytest_configure(config: pytest.Config) -> None:
    bytecode_outside_the_tree()
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
