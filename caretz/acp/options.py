"""What the editor may switch in a session: the permission mode (ACP's session modes, and
the same as a config option), the model and the loop guard's mode (config options).

ACP 0.12's SDK has no `session/set_model`; a model is a config option of category
"model", which is how current editors show a model picker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from acp.schema import (
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

# ACP's categories of a session option (the client may show them apart).
Category = Literal["mode", "model", "model_config", "thought_level"]
MODEL = "model"
PERMISSION_MODE = "mode"
LOOP_GUARD = "loop_guard"
# What each of permissions.modes.PERMISSION_MODES does, in its order, as the editor shows it.
MODE_TEXTS = {
    "auto": "Commands run in the sandbox without asking; leaving it asks first.",
    "ask": "Every command and every file change asks first; reads do not.",
    "read-only": "No file changes; commands run in the read-only sandbox.",
    "plan": "Read and plan: no changes, only commands shown to change nothing; the plan is "
    "put to you for approval.",
    "yolo": "Nothing asks, and the sandbox is off.",
}
GUARD_MODES = {
    "off": "No loop guard.",
    "shadow": "The guard judges and reports, and changes nothing.",
    "active": "The guard redirects a stuck turn, then ends it with a report.",
}


@dataclass(frozen=True)
class Choices:
    """A session's current model and modes, and the models it may switch to."""

    model: str
    permission_mode: str
    guard_mode: str
    models: tuple[str, ...] = ()


def switch_arguments(option: str, value: str) -> dict[str, str]:
    """`AppSession.switch`'s keyword for a config option; KeyError for one caretz lacks."""
    return {
        MODEL: {"model": value},
        PERMISSION_MODE: {"permission_mode": value},
        LOOP_GUARD: {"guard_mode": value},
    }[option]


def modes(choices: Choices) -> SessionModeState:
    return SessionModeState(
        current_mode_id=choices.permission_mode,
        available_modes=[
            SessionMode(id=mode, name=mode, description=text) for mode, text in MODE_TEXTS.items()
        ],
    )


def config_options(
    choices: Choices,
) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    return [
        _select(MODEL, "Model", choices.model, {ref: "" for ref in choices.models}, "model"),
        _select(PERMISSION_MODE, "Permissions", choices.permission_mode, MODE_TEXTS, "mode"),
        _select(LOOP_GUARD, "Loop guard", choices.guard_mode, GUARD_MODES, None),
    ]


def _select(
    option: str, name: str, current: str, values: dict[str, str], category: Category | None
) -> SessionConfigOptionSelect:
    listed = values if current in values else {current: "", **values}
    return SessionConfigOptionSelect(
        type="select",
        id=option,
        name=name,
        category=category,
        current_value=current,
        options=[
            SessionConfigSelectOption(value=value, name=value, description=text or None)
            for value, text in listed.items()
        ],
    )


def model_choices(current: str, profile_models: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((current, *profile_models)))
