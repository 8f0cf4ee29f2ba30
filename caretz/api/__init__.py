"""caretz's Python API (docs/python-api.md): `Session`, what a run returns, what
`stream()` yields, and what `on_permission` is asked and answers.

Importing it starts nothing; a `Session` opens its session when it is made. Each name is
loaded from its module when first asked for, so the CLI's `-p`, which runs through
`Session`, loads only what it uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from caretz.api.events import (
        Event,
        Finished,
        GuardNotice,
        PermissionDecision,
        Retrying,
        SessionEvent,
        TextDelta,
        ThinkingDelta,
        ToolCall,
        ToolResult,
    )
    from caretz.api.result import GuardVerdict, PermissionDenial, RunResult
    from caretz.api.session import Session
    from caretz.config_base import ConfigError
    from caretz.messages import Usage
    from caretz.tools.asking import Answer, Question

_WHERE = {
    **dict.fromkeys(
        (
            "Event",
            "Finished",
            "GuardNotice",
            "PermissionDecision",
            "Retrying",
            "SessionEvent",
            "TextDelta",
            "ThinkingDelta",
            "ToolCall",
            "ToolResult",
        ),
        "caretz.api.events",
    ),
    **dict.fromkeys(("GuardVerdict", "PermissionDenial", "RunResult"), "caretz.api.result"),
    "Session": "caretz.api.session",
    "ConfigError": "caretz.config_base",
    "Usage": "caretz.messages",
    "Answer": "caretz.tools.asking",
    "Question": "caretz.tools.asking",
}

__all__ = [
    "Answer",
    "ConfigError",
    "Event",
    "Finished",
    "GuardNotice",
    "GuardVerdict",
    "PermissionDecision",
    "PermissionDenial",
    "Question",
    "Retrying",
    "RunResult",
    "Session",
    "SessionEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolCall",
    "ToolResult",
    "Usage",
]


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'caretz.api' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
