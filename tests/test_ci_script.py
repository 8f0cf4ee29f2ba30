"""`.ci/run`, the README's test command: what it installs on a fresh machine."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

CI_RUN = Path(__file__).resolve().parents[1] / ".ci" / "run"


def test_the_system_packages_come_without_their_recommends():
    """cron recommends a mail server (exim), which nothing uses and which starts a daemon."""
    installs = [
        line for line in CI_RUN.read_text().splitlines() if re.search(r"apt-get\s+install", line)
    ]
    assert installs, "no apt-get install in .ci/run"
    assert all("--no-install-recommends" in line for line in installs), installs


def test_the_type_checker_reads_all_of_caretz_and_its_errors_fail_the_run():
    """`.venv/bin/mypy` with no paths checks what [tool.mypy] names: the whole package, so
    a module or package cannot drop out of the check by being left off a list."""
    lines = CI_RUN.read_text().splitlines()
    assert "set -euo pipefail" in lines  # a failing step fails the script
    assert ".venv/bin/mypy" in lines, [line for line in lines if "mypy" in line]
    settings = tomllib.loads((CI_RUN.parents[1] / "pyproject.toml").read_text())
    checked = settings["tool"]["mypy"]
    assert checked["files"] == ["caretz"]
    assert checked["disallow_untyped_defs"] and checked["warn_unused_ignores"]
    assert "pydantic.mypy" in checked["plugins"]
    tests_extra = settings["project"]["optional-dependencies"]["test"]
    assert any(re.fullmatch(r"mypy==[\d.]+", each) for each in tests_extra), tests_extra
