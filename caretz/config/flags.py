"""The command line's overrides by name, and the checks they pass without pydantic.

The flags are declared once, as the command's Typer options; their values arrive by name
(`Flags`). `Overrides` (config/overrides.py, pydantic) is what validates them and words a
bad one. Most runs give a few plain values (`--model`, `--output json`,
`CARETZ_MODEL=…`), and for those `plain_flags` and `plain_env` give the same values that
model would, so a run without a profile file reaches its first request without importing
pydantic; a value these checks do not accept goes to the model, which accepts or refuses
it in its own words.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

from caretz.guard.model import Mode
from caretz.messages import Reasoning
from caretz.permissions.modes import PERMISSION_MODES
from caretz.sandbox.policy import ModeName

# Command-line values by Overrides field name, as given; a missing or None value was not given.
Flags = Mapping[str, Any]

# Overrides' fields, in its order (tests/config/test_overrides.py holds the two together).
OVERRIDE_NAMES = (
    "config",
    "profile",
    "model",
    "base_url",
    "reasoning",
    "max_tool_calls",
    "max_budget_usd",
    "output",
    "loop_guard",
    "loop_guard_model",
    "loop_guard_reasoning",
    "loop_guard_check_every",
    "permission_mode",
    "loop_guard_config",
    "goal_model",
    "goal_reasoning",
    "goal_max_turns",
    "sandbox",
    "add_dir",
    "allowed_tools",
    "disallowed_tools",
    "image",
)

# The overrides a CARETZ_* variable sets too (docs/configuration.md, "Environment
# variables"); the rest are flags only. CARETZ_CONFIG is read with the file's path.
ENV_FIELDS = (
    "profile",
    "model",
    "reasoning",
    "max_tool_calls",
    "max_budget_usd",
    "loop_guard",
    "permission_mode",
    "sandbox",
)
ENV_VARIABLES = tuple(f"CARETZ_{name.upper()}" for name in ENV_FIELDS)

OUTPUTS = ("text", "json", "detailed")
DEFAULT_PROFILE = "general"


def given_flags(params: Mapping[str, Any]) -> dict[str, Any]:
    """The overrides among a command's parameters (Typer's `ctx.params`) that were given."""
    return {
        name: value
        for name, value in params.items()
        if name in OVERRIDE_NAMES and value is not None and value != []
    }


def judge_source(flags: Flags, profile_name: str, path: Path) -> str:
    """Where the loop guard's judge model is set, for error messages."""
    if flags.get("loop_guard_model") is not None:
        return "--loop-guard-model"
    return f"{path}: profiles.{profile_name}.loopGuard.judge.model"


def goal_source(flags: Flags, profile_name: str, path: Path) -> str:
    """Where the goal's evaluator model is set, for error messages."""
    if flags.get("goal_model") is not None:
        return "--goal-model"
    return f"{path}: profiles.{profile_name}.goal.judge.model"


def check_url(value: str) -> str:
    """A base URL as written, without its trailing slashes; ValueError when it is none."""
    if not value.startswith(("http://", "https://")):
        raise ValueError(f"{value!r} is not a URL; write it as http://host:port/path")
    return value.rstrip("/")


def plain_flags(flags: Flags) -> dict[str, Any] | None:
    """Every given flag's value as `Overrides` would hold it, or None when one needs the
    model: a value these checks do not accept, `--config` (a file to validate anyway) or
    `--loop-guard-config` (a whole section to validate)."""
    values: dict[str, Any] = {}
    for name, value in flags.items():
        if value is None:
            continue
        check = _CHECKS.get(name)
        checked = check(value) if check is not None else _REFUSED
        if checked is _REFUSED:
            return None
        values[name] = checked
    return values


def plain_env(env: Mapping[str, str]) -> dict[str, Any] | None:
    """The CARETZ_* variables' values as `Overrides` would hold them, or None when one
    needs the model (pydantic-settings words a bad value). A number is taken only in its
    plain form (`20`, `2.5`), which both read alike; any other goes to the model."""
    values: dict[str, Any] = {}
    for name, variable in zip(ENV_FIELDS, ENV_VARIABLES, strict=True):
        text = env.get(variable)
        if not text:
            continue
        value = _NUMBERS.get(name, _as_text)(text)
        checked = _CHECKS[name](value) if value is not _REFUSED else _REFUSED
        if checked is _REFUSED:
            return None
        values[name] = checked
    return values


_REFUSED = object()


def _as_text(text: str) -> Any:
    return text


def _as_whole(text: str) -> Any:
    return int(text) if text.isascii() and text.isdigit() else _REFUSED


def _as_decimal(text: str) -> Any:
    whole, dot, part = text.partition(".")
    plain = _as_whole(whole) is not _REFUSED and (not dot or _as_whole(part) is not _REFUSED)
    return float(text) if plain else _REFUSED


_NUMBERS = {"max_tool_calls": _as_whole, "max_budget_usd": _as_decimal}


def _text(value: Any) -> Any:
    return value if isinstance(value, str) and value else _REFUSED


def _one_of(choices: tuple[str, ...]) -> Any:
    return lambda value: value if isinstance(value, str) and value in choices else _REFUSED


def _whole(least: int) -> Any:
    return lambda value: value if type(value) is int and value >= least else _REFUSED


def _budget(value: Any) -> Any:
    good = type(value) is float and math.isfinite(value) and value > 0
    return value if good else _REFUSED


def _url(value: Any) -> Any:
    try:
        return check_url(value) if isinstance(value, str) else _REFUSED
    except ValueError:
        return _REFUSED


def _texts(value: Any) -> Any:
    good = isinstance(value, list | tuple) and all(isinstance(item, str) for item in value)
    return list(value) if good else _REFUSED


def _model_only(value: Any) -> Any:
    return _REFUSED  # a file or a whole section to validate: the model reads those


REASONINGS: tuple[str, ...] = get_args(Reasoning)
_CHECKS = {
    "config": _model_only,
    "profile": _text,
    "model": _text,
    "base_url": _url,
    "reasoning": _one_of(REASONINGS),
    "max_tool_calls": _whole(1),
    "max_budget_usd": _budget,
    "output": _one_of(OUTPUTS),
    "loop_guard": _one_of(get_args(Mode)),
    "loop_guard_model": _text,
    "loop_guard_reasoning": _one_of(REASONINGS),
    "loop_guard_check_every": _whole(0),
    "permission_mode": _one_of(PERMISSION_MODES),
    "loop_guard_config": _model_only,
    "goal_model": _text,
    "goal_reasoning": _one_of(REASONINGS),
    "goal_max_turns": _whole(1),
    "sandbox": _one_of(get_args(ModeName)),
    "add_dir": _texts,
    "allowed_tools": _texts,
    "disallowed_tools": _texts,
    "image": _texts,
}
