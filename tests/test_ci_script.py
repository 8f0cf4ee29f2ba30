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


WHITELIST = CI_RUN.parent / "vulture_whitelist.py"
# What `vulture --make-whitelist` writes beside a name: where, not why.
GENERATED = re.compile(r"^unused \w+ \(.*:\d+\)$")


def test_the_dead_code_check_runs_with_its_whitelist():
    runs = [line for line in CI_RUN.read_text().splitlines() if "bin/vulture " in line]
    assert runs == [".venv/bin/vulture caretz benchmarks .ci/vulture_whitelist.py"]


def test_every_name_the_dead_code_check_lets_stay_says_why():
    entries = [
        line
        for line in WHITELIST.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert len(entries) > 10
    unexplained = []
    for line in entries:
        name, _, why = line.partition("  # ")
        if not re.fullmatch(r"[\w.]+", name) or len(why.split()) < 3 or GENERATED.match(why):
            unexplained.append(line)
    assert unexplained == []


def test_every_test_has_a_time_limit_and_the_llama_cpp_tests_a_larger_one(request):
    limit = float(request.config.getini("timeout"))
    assert 0 < limit <= 600  # set, and no larger than a hang needs to be found
    local = (CI_RUN.parents[1] / "tests" / "e2e" / "test_local_models.py").read_text()
    larger = re.search(r"^LOCAL_MODEL_LIMIT_S = (\d+) \* 60$", local, re.MULTILINE)
    assert larger and int(larger.group(1)) * 60 > limit
    assert "pytestmark = pytest.mark.timeout(LOCAL_MODEL_LIMIT_S)" in local


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
