"""One Overrides model validates the command-line flags and the CARETZ_* variables."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from caretz.cli import app
from caretz.config.env import read_env
from caretz.config.overrides import ENV_VARIABLES, Overrides, given_flags, read_flags
from caretz.config_base import ConfigError

REPO = Path(__file__).resolve().parents[2]
DOCS = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")


def flag_error(**flags: object) -> str:
    with pytest.raises(ConfigError) as caught:
        read_flags(flags)
    return str(caught.value)


def env_error(**env: str) -> str:
    with pytest.raises(ConfigError) as caught:
        read_env(env)
    return str(caught.value)


def test_a_bad_flag_is_one_line_naming_the_flag_and_its_value() -> None:
    assert flag_error(reasoning="max") == (
        "--reasoning 'max': Input should be 'off', 'low', 'medium' or 'high'"
    )
    assert flag_error(loop_guard_check_every=-1) == (
        "--loop-guard-check-every -1: Input should be greater than or equal to 0"
    )
    assert flag_error(base_url="localhost:8080") == (
        "--base-url 'localhost:8080': 'localhost:8080' is not a URL; "
        "write it as http://host:port/path"
    )


def test_a_bad_variable_is_one_line_naming_the_variable_and_its_value() -> None:
    assert env_error(CARETZ_MAX_TOOL_CALLS="lots") == (
        "CARETZ_MAX_TOOL_CALLS='lots': Input should be a valid integer, "
        "unable to parse string as an integer"
    )
    assert env_error(CARETZ_LOOP_GUARD="loud") == (
        "CARETZ_LOOP_GUARD='loud': Input should be 'off', 'shadow' or 'active'"
    )


def test_flags_and_variables_share_the_same_checks() -> None:
    for name in ("max_tool_calls", "max_budget_usd"):
        assert "greater than" in flag_error(**{name: 0})
        assert "greater than" in env_error(**{f"CARETZ_{name.upper()}": "0"})


def test_variables_are_typed_like_flags() -> None:
    values = read_env({"CARETZ_MAX_TOOL_CALLS": "20", "CARETZ_MAX_BUDGET_USD": "2.5"})
    flags = read_flags({"max_tool_calls": 20, "max_budget_usd": 2.5})
    assert (values.max_tool_calls, values.max_budget_usd) == (20, 2.5)
    assert values.model_dump() == flags.model_dump()


def test_only_the_documented_variables_are_read() -> None:
    # --output, --base-url and the judge flags have no variable; CARETZ_CONFIG names the file.
    values = read_env(
        {
            "CARETZ_OUTPUT": "bogus",
            "CARETZ_BASE_URL": "not a url",
            "CARETZ_LOOP_GUARD_MODEL": "x/y",
            "CARETZ_CONFIG": "/elsewhere.json",
            "CARETZ_MODEL": "openai/gpt-5",
            "CARETZ_REASONING": "",
        }
    )
    assert values == Overrides(model="openai/gpt-5")


def test_the_variables_read_are_the_documented_ones_below_their_flags() -> None:
    # docs/configuration.md: | `CARETZ_MODEL` | `model` (below `--model`). |
    rows = re.findall(r"^\| `(CARETZ_\w+)` \|[^|]*\(below `(--[\w-]+)`\)", DOCS, re.MULTILINE)
    documented = {variable: flag for variable, flag in rows if variable != "CARETZ_CONFIG"}
    read = {
        variable: "--" + variable.removeprefix("CARETZ_").lower().replace("_", "-")
        for variable in ENV_VARIABLES
    }
    assert read == documented


def test_every_overriding_option_of_the_command_is_a_field_of_the_model() -> None:
    command = typer.main.get_command(app)
    options = {param.name for param in command.params}
    not_settings = {
        "prompt",
        "input_format",
        "resume",
        "continue_",
        "version",
        "goal",
        "env_file",
        "job",
        "worktree",  # where the run happens (a folder), not a setting
    }
    assert options - not_settings == set(Overrides.model_fields)


def test_given_flags_keeps_the_overrides_that_were_given() -> None:
    params = {"prompt": "hi", "model": "openai/gpt-5", "reasoning": None, "version": False}
    assert given_flags(params) == {"model": "openai/gpt-5"}


def run_caretz(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CARETZ_")}
    return subprocess.run(
        [sys.executable, "-m", "caretz", *args],
        env={**clean, "PYTHONPATH": str(REPO), "CARETZ_DATA_DIR": "/nonexistent/caretz", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_command_line_reports_a_bad_flag_or_variable_in_one_line(tmp_path: Path) -> None:
    config = str(tmp_path / "profiles.json")
    run = run_caretz("--reasoning", "max", "-p", "hi", CARETZ_CONFIG=config)
    assert run.returncode == 2
    assert (
        run.stderr
        == "caretz: --reasoning 'max': Input should be 'off', 'low', 'medium' or 'high'\n"
    )
    run = run_caretz("config", "show", CARETZ_CONFIG=config, CARETZ_MAX_TOOL_CALLS="lots")
    assert run.returncode == 2
    assert run.stderr.startswith("caretz: CARETZ_MAX_TOOL_CALLS='lots': ")


def test_pydantic_settings_loads_only_when_a_variable_needs_it(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from caretz.config.settings import resolve_settings\n"
        "env = dict(arg.split('=', 1) for arg in sys.argv[1:])\n"
        "resolve_settings({}, env)\n"
        "print('pydantic_settings' in sys.modules)\n"
    )
    config = f"CARETZ_CONFIG={tmp_path / 'profiles.json'}"

    def loaded(*env: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", script, config, *env],
            env={"PATH": os.environ["PATH"], "PYTHONPATH": str(REPO), "HOME": str(tmp_path)},
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    assert loaded() == "False"
    assert loaded("CARETZ_REASONING=") == "False"
    # Plain values need no model (config/flags.py's plain_env); with a file, the file and
    # the variables are validated together.
    assert loaded("CARETZ_REASONING=high", "CARETZ_MAX_TOOL_CALLS=7") == "False"
    (tmp_path / "profiles.json").write_text("{}")
    assert loaded("CARETZ_REASONING=high") == "True"
