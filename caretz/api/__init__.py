"""caretz's Python API (docs/python-api.md): `Session`, what a run returns, what
`stream()` yields, and what `on_permission` is asked and answers.

Importing it starts nothing; a `Session` opens its session when it is made. Each name is
loaded from its module when first asked for, so the CLI's `-p`, which runs through
`Session`, loads only what it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caretz.lazy import lazy_module

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

if TYPE_CHECKING:
    from caretz import config_base as _config_base
    from caretz import messages as _messages
    from caretz.api import events as _events
    from caretz.api import result as _result
    from caretz.api import session as _session
    from caretz.tools import asking as _asking
else:
    # Each name's module, loaded when the name is first asked for.
    _events = lazy_module("caretz.api.events")
    _result = lazy_module("caretz.api.result")
    _session = lazy_module("caretz.api.session")
    _config_base = lazy_module("caretz.config_base")
    _messages = lazy_module("caretz.messages")
    _asking = lazy_module("caretz.tools.asking")

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
        _events,
    ),
    **dict.fromkeys(("GuardVerdict", "PermissionDenial", "RunResult"), _result),
    "Session": _session,
    "ConfigError": _config_base,
    "Usage": _messages,
    "Answer": _asking,
    "Question": _asking,
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
    return getattr(module, name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
