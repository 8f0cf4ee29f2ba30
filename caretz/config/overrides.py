"""What the command line and the CARETZ_* variables override, in one validated model.

The flags are declared once, as the command's Typer options; their values arrive
here by name (`Flags`) and are validated by `Overrides`. The CARETZ_* variables are
validated by the same model (see `caretz.config.env`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from caretz.config.errors import error_message
from caretz.config.schema import (
    BaseUrl,
    BudgetUsd,
    CheckEvery,
    GoalTurns,
    ModelRef,
    Output,
    ToolCallLimit,
)
from caretz.config_base import ConfigError
from caretz.guard.model import Mode
from caretz.messages import Reasoning
from caretz.permissions.modes import PermissionMode
from caretz.sandbox.config import ModeName

# Command-line values by Overrides field name, as given; a missing or None value was not given.
Flags = Mapping[str, Any]


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


def given_flags(params: Mapping[str, Any]) -> dict[str, Any]:
    """The overrides among a command's parameters (Typer's `ctx.params`) that were given."""
    return {
        name: value
        for name, value in params.items()
        if name in Overrides.model_fields and value is not None and value != []
    }


def read_flags(flags: Flags) -> Overrides:
    """The flags, validated. A bad one is one line naming it: `--reasoning 'max': …`."""
    try:
        return Overrides.model_validate(dict(flags))
    except ValidationError as exc:
        item = exc.errors()[0]
        flag = "--" + str(item["loc"][0]).replace("_", "-")
        raise ConfigError(f"{flag} {item['input']!r}: {error_message(Overrides, item)}") from None
