"""caretz's Python API (docs/python-api.md): `Session`, what a run returns, what
`stream()` yields, and what `on_permission` is asked and answers.

Importing it starts nothing; a `Session` opens its session when it is made.
"""

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
