"""What the command line and the CARETZ_* variables override, in one validated model.

The flags are declared once, as the command's Typer options; their values arrive
here by name (`Flags`, config/flags.py) and are validated by `Overrides`. The CARETZ_*
variables are validated by the same model (see `caretz.config.env`). A run with nothing
but plain flags skips this model (config/flags.py's `plain_flags` gives the same values).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from caretz.config.errors import error_message
from caretz.config.flags import ENV_FIELDS, ENV_VARIABLES, Flags, given_flags
from caretz.config.schema import (
    BaseUrl,
    BudgetUsd,
    CheckEvery,
    GoalTurns,
    ModelRef,
    ToolCallLimit,
)
from caretz.config.values import Output
from caretz.config_base import ConfigError
from caretz.guard.model import Mode
from caretz.messages import Reasoning
from caretz.permissions.modes import PermissionMode
from caretz.sandbox.policy import ModeName


class Overrides(BaseModel):
    """Settings named on the command line or in CARETZ_* variables; None: not named."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    config: Path | None = None
    profile: str | None = None
    model: ModelRef | None = None
    base_url: BaseUrl | None = None
    reasoning: Reasoning | None = None
    max_tool_calls: ToolCallLimit | None = None
    max_budget_usd: BudgetUsd | None = None
    output: Output | None = None
    loop_guard: Mode | None = None  # the mode
    loop_guard_model: ModelRef | None = None
    loop_guard_reasoning: Reasoning | None = None
    loop_guard_check_every: CheckEvery | None = None
    permission_mode: PermissionMode | None = None
    loop_guard_config: str | None = None  # the whole loopGuard section as JSON (scheduled runs)
    goal_model: ModelRef | None = None
    goal_reasoning: Reasoning | None = None
    goal_max_turns: GoalTurns | None = None
    sandbox: ModeName | None = None  # the sandbox mode
    add_dir: list[str] | None = None  # more writable roots, added to the profile's addDirs
    allowed_tools: list[str] | None = None  # allow rules for this run only
    disallowed_tools: list[str] | None = None  # deny rules for this run only
    image: list[str] | None = None  # image files attached to the prompt


__all__ = ["ENV_FIELDS", "ENV_VARIABLES", "Flags", "Overrides", "given_flags", "read_flags"]


def flag_spelling(name: str, value: Any) -> str:
    """How an error names a flag's value: `--reasoning 'max'`."""
    return f"--{name.replace('_', '-')} {value!r}"


def read_flags(flags: Flags, spelling: Callable[[str, Any], str] = flag_spelling) -> Overrides:
    """The flags, validated. A bad one is one line naming it: `--reasoning 'max': …`
    (`spelling` names it otherwise: the Python API says `reasoning='max'`)."""
    try:
        return Overrides.model_validate(dict(flags))
    except ValidationError as exc:
        item = exc.errors()[0]
        named = spelling(str(item["loc"][0]), item["input"])
        raise ConfigError(f"{named}: {error_message(Overrides, item)}") from None
