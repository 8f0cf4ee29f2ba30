"""`caretz -p` imports nothing before its first model request that the recorded budget
(tests/data/import_budget.txt) does not name: a module new to that path fails here, and
either leaves it (imported where it is first used) or goes into the budget on purpose."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.importtime import (
    budget_key,
    floor_modules,
    modules_before_first_request,
    outside_budget,
    read_budget,
)
from tests.modelserver import ModelServer

# The heavy parts no run without a profile file or a CARETZ_* variable needs first.
NEVER = (
    "pydantic",
    "pydantic_core",
    "pydantic_settings",
    "httpx",
    "httpcore",
    "mcp",
    "pygments",
    "detect_secrets",
    "requests",
    "opentelemetry",  # telemetry's SDK: only a session with telemetry on loads it
    "google",  # protobuf, which the OTLP exporter brings
)


def a_project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "README.md").write_text("# demo\n")
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    return folder


def test_the_first_request_imports_only_what_the_budget_names(server: ModelServer, tmp_path):
    workspace = a_project(tmp_path)
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": server.url}

    modules = modules_before_first_request(server, workspace, env, "--model", "anthropic/c")

    assert "caretz.providers.wire" in modules  # the run got as far as its request
    assert outside_budget(modules, read_budget(), floor_modules(workspace, env)) == []
    assert {budget_key(module) for module in modules} & set(NEVER) == set()


def test_the_budget_check_names_a_module_outside_it():
    floor = {"typer", "rich.console"}
    modules = ["typer", "caretz.cli", "email.parser", "caretz.guard.guard", "pydantic.main"]

    outside = outside_budget(modules, {"caretz.cli", "email"}, floor)

    assert outside == ["caretz.guard.guard", "pydantic.main"]
