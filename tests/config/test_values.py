"""The plain path to the settings (no profile file, plain CARETZ_* variables and flags)
gives what the validated one gives, and builds no pydantic model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from caretz.config.flags import OVERRIDE_NAMES, plain_env, plain_flags
from caretz.config.layers import default_profile, resolve_layered
from caretz.config.overrides import Overrides, read_flags
from caretz.config.schema import Profile
from caretz.config.settings import resolve_settings
from caretz.config.values import ProfileValues, of_profile
from caretz.config_base import ConfigError
from caretz.guard.text_loop import TextLoopSettings

PLAIN_RUNS: list[dict[str, Any]] = [
    {},
    {"model": "anthropic/claude-sonnet-4-5"},
    {"model": "openai/gpt-5", "reasoning": "high", "output": "json"},
    {"base_url": "http://127.0.0.1:8080/v1/", "model": "qwen3"},
    {"max_tool_calls": 3, "max_budget_usd": 0.5, "permission_mode": "read-only"},
    {"loop_guard": "shadow", "loop_guard_check_every": 0, "loop_guard_reasoning": "low"},
    {"sandbox": "off", "add_dir": ["vendor", "~/lib"], "allowed_tools": ["Bash(ls:*)"]},
    {"disallowed_tools": ["Bash(rm:*)"], "goal_max_turns": 2, "goal_reasoning": "off"},
    {"loop_guard_model": "anthropic/judge", "goal_model": "openai/gpt-5-mini"},
    {"profile": "general", "permission_mode": "yolo"},
]


def test_the_flag_names_are_the_models_fields() -> None:
    assert tuple(Overrides.model_fields) == OVERRIDE_NAMES


def test_the_defaults_are_the_schemas() -> None:
    assert ProfileValues() == of_profile(Profile())


@pytest.mark.parametrize("flags", PLAIN_RUNS)
def test_plain_flags_hold_what_the_model_holds(flags: dict[str, Any]) -> None:
    validated = read_flags(flags).model_dump(exclude_none=True)
    assert plain_flags(flags) == validated


@pytest.mark.parametrize(
    "flags",
    [
        {"reasoning": "max"},
        {"model": ""},
        {"base_url": "localhost:8080"},
        {"max_tool_calls": 0},
        {"max_tool_calls": "3"},
        {"max_budget_usd": 0.0},
        {"max_budget_usd": float("inf")},
        {"output": "yaml"},
        {"loop_guard_check_every": -1},
        {"sandbox": "none"},
        {"add_dir": "vendor"},
        {"config": "/elsewhere.json"},
        {"loop_guard_config": "{}"},
        {"unknown_flag": 1},
    ],
)
def test_a_value_the_plain_checks_do_not_accept_goes_to_the_model(flags: dict[str, Any]) -> None:
    assert plain_flags(flags) is None


@pytest.mark.parametrize("flags", PLAIN_RUNS)
def test_the_plain_settings_are_the_validated_ones(flags: dict[str, Any], tmp_path: Path) -> None:
    env = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}
    path = tmp_path / "profiles.json"
    plain = resolve_settings({**flags, "config": None}, {**env, "CARETZ_CONFIG": str(path)})
    layered = resolve_layered(flags, env, path, None)

    assert plain.validated is None  # nothing was validated on the way
    assert plain.values == of_profile(layered.profile)
    assert plain.profile == layered.profile == default_profile(flags)
    assert plain.values == of_profile(plain.profile)
    assert (plain.model, plain.providers, plain.prices) == (
        layered.model,
        layered.providers,
        layered.prices,
    )


PLAIN_VARIABLES: list[tuple[dict[str, str], dict[str, Any]]] = [
    ({"CARETZ_MODEL": "openai/gpt-5"}, {}),
    ({"CARETZ_MODEL": "openai/gpt-5"}, {"model": "anthropic/claude-sonnet-4-5"}),
    ({"CARETZ_REASONING": "high", "CARETZ_MAX_TOOL_CALLS": "007"}, {"reasoning": "low"}),
    ({"CARETZ_MAX_BUDGET_USD": "2.5", "CARETZ_LOOP_GUARD": "shadow"}, {"max_tool_calls": 3}),
    ({"CARETZ_MAX_BUDGET_USD": "3"}, {"loop_guard": "off"}),
    ({"CARETZ_PERMISSION_MODE": "read-only", "CARETZ_SANDBOX": "off"}, {"sandbox": "read-only"}),
    ({"CARETZ_PROFILE": "general", "CARETZ_REASONING": ""}, {"permission_mode": "yolo"}),
]


@pytest.mark.parametrize(("variables", "flags"), PLAIN_VARIABLES)
def test_plain_variables_give_the_validated_settings(
    variables: dict[str, str], flags: dict[str, Any], tmp_path: Path
) -> None:
    env = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k", **variables}
    path = tmp_path / "profiles.json"
    plain = resolve_settings({**flags, "config": None}, {**env, "CARETZ_CONFIG": str(path)})
    layered = resolve_layered(flags, env, path, None)

    assert plain.validated is None  # nothing was validated on the way
    assert plain.values == of_profile(layered.profile)
    assert plain.profile == layered.profile
    assert (plain.model, plain.providers) == (layered.model, layered.providers)


@pytest.mark.parametrize(
    "variables",
    [
        {"CARETZ_MAX_TOOL_CALLS": "+7"},
        {"CARETZ_MAX_TOOL_CALLS": "0"},
        {"CARETZ_MAX_TOOL_CALLS": "\u0667"},  # a digit, but not an ASCII one
        {"CARETZ_MAX_BUDGET_USD": "1e3"},
        {"CARETZ_MAX_BUDGET_USD": ".5"},
        {"CARETZ_MAX_BUDGET_USD": "0.0"},
        {"CARETZ_REASONING": "max"},
        {"CARETZ_SANDBOX": "none"},
    ],
)
def test_a_variable_the_plain_checks_do_not_take_goes_to_the_model(
    variables: dict[str, str],
) -> None:
    assert plain_env(variables) is None


def test_a_model_a_variable_names_is_blamed_on_it_on_the_plain_path(tmp_path: Path) -> None:
    env = {"CARETZ_CONFIG": str(tmp_path / "none.json"), "CARETZ_MODEL": "nowhere/model"}
    with pytest.raises(ConfigError) as caught:
        resolve_settings({}, env)
    assert str(caught.value).startswith("CARETZ_MODEL: ")


def test_a_file_takes_the_validated_path(tmp_path: Path) -> None:
    path = tmp_path / "profiles.json"
    env = {"ANTHROPIC_API_KEY": "k", "CARETZ_CONFIG": str(path)}
    assert resolve_settings({}, {**env, "CARETZ_MAX_TOOL_CALLS": "7"}).max_tool_calls == 7
    path.write_text(json.dumps({"profiles": {"general": {"maxToolCalls": 9}}}))
    from_file = resolve_settings({}, env)
    assert from_file.validated is not None and from_file.max_tool_calls == 9
    path.write_text(json.dumps({"profiles": {"general": {"maxToolCalls": "9"}}}))
    with pytest.raises(ConfigError, match=r"maxToolCalls: expected a whole number"):
        resolve_settings({}, env)


def test_a_bad_flag_without_a_file_is_worded_by_the_model(tmp_path: Path) -> None:
    env = {"CARETZ_CONFIG": str(tmp_path / "none.json")}
    with pytest.raises(ConfigError) as caught:
        resolve_settings({"reasoning": "max"}, env)
    assert str(caught.value) == (
        "--reasoning 'max': Input should be 'off', 'low', 'medium' or 'high'"
    )


def test_the_plain_path_imports_no_pydantic(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from caretz.config.settings import resolve_settings\n"
        "s = resolve_settings({'model': 'anthropic/x', 'output': 'json'}, "
        "{'ANTHROPIC_API_KEY': 'k', 'CARETZ_CONFIG': sys.argv[1]})\n"
        "assert s.values.output == 'json' and s.permission_mode == 'auto'\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0].startswith('pydantic')))\n"
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith("CARETZ_")}
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "profiles.json")],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert done.stdout.strip() == "[]"


def test_the_stream_text_section_reaches_the_turns_text_loop_cut() -> None:
    section = {"streamText": {"enabled": False, "maxRepeats": 8, "minPeriod": 40}}
    profile = Profile.model_validate({"loopGuard": {"mode": "off", "detectors": section}})
    assert of_profile(profile).text_loop == TextLoopSettings(False, 40, 8, 20)
