"""The guard's boundaries: what it may import, and what a run with the guard off loads."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

import caretz
from tests.importtime import modules_imported_by_a_run
from tests.modelserver import ModelServer, text

GUARD = Path(caretz.__file__).parent / "guard"
# What the guard may use besides itself: the shared plain data, text helpers, the agent's
# plan, the tool policy's argument conventions, the config base, the table of secret shapes
# (the judge summary's redaction), the session log's records (its events). It reaches a
# model only through its Judge.
ALLOWED = (
    "caretz.guard",
    "caretz.session.records",
    "caretz.messages",
    "caretz.text",
    "caretz.plan",
    "caretz.tools.policy",
    "caretz.config_base",
    "caretz.config_section",
    "caretz.lazy_dataclass",
    "caretz.secrets",
    "caretz.inbound",  # a judge's reply is read as all data from outside is
)
# The guard's working parts, which a run with the guard off never needs.
HEAVY = (
    "caretz.guard.guard",
    "caretz.guard.detectors",
    "caretz.guard.judge",
    "caretz.guard.judging",
    "caretz.guard.summary",
    "caretz.guard.normalize",
)


def imported_modules(path: Path) -> set[str]:
    """Every caretz module `path` imports, at the top or inside functions."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("caretz")}


def test_the_guard_imports_nothing_outside_its_scope():
    outside = {
        f"{path.name}: {module}"
        for path in GUARD.glob("*.py")
        for module in imported_modules(path)
        if not module.startswith(ALLOWED)
    }
    assert outside == set()


def test_the_seam_imports_only_plain_data():
    assert imported_modules(GUARD / "seam.py") == {
        "caretz.guard.model",
        "caretz.messages",
        "caretz.lazy_dataclass",
    }


def loaded_by_a_run(server: ModelServer, tmp_path: Path, *flags: str) -> set[str]:
    server.add(text("hi"))
    env = {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "ANTHROPIC_BASE_URL": server.url,
        "CARETZ_MODEL": "anthropic/claude-test",
    }
    loaded = modules_imported_by_a_run(tmp_path, env, *flags)
    return {name for name in loaded if "caretz" in name}


@pytest.mark.parametrize(
    ("flags", "loads_the_guard"), [((), False), (("--loop-guard", "shadow"), True)]
)
def test_a_run_with_the_guard_off_loads_only_the_seam(
    server: ModelServer, tmp_path: Path, flags: tuple[str, ...], loads_the_guard: bool
):
    loaded = loaded_by_a_run(server, tmp_path, *flags)
    assert "caretz.guard.seam" in loaded
    assert {module for module in HEAVY if module in loaded} == (
        set(HEAVY) if loads_the_guard else set()
    )
