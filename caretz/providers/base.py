"""What every provider speaks: one request in, a stream of plain events out."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from caretz.agent.messages import Message, Usage

Reasoning = Literal["off", "low", "medium", "high"]
ProtocolName = Literal["anthropic", "openai"]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments object


@dataclass
class ModelRequest:
    model: str  # the bare model ID the endpoint knows
    system: str
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    reasoning: Reasoning = "off"
    max_tokens: int = 8192
    # "auto" | "required" | "none" | a tool name; None leaves the endpoint's default.
    tool_choice: str | None = None
    # A JSON schema the reply must follow (used by the judge); None = free text.
    response_schema: dict[str, Any] | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)


@dataclass
class ModelResponse:
    message: Message  # role "assistant": text, tool calls, thinking
    usage: Usage
    stop_reason: str
    model: str


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True)
class ToolCallStarted:
    id: str
    name: str


@dataclass(frozen=True)
class Retrying:
    attempt: int
    delay_s: float
    reason: str


@dataclass(frozen=True)
class Completed:
    response: ModelResponse


StreamEvent = TextDelta | ThinkingDelta | ToolCallStarted | Retrying | Completed


class Provider(Protocol):
    """A model endpoint. `stream` yields deltas, then exactly one `Completed`.

    Closing the iterator early aborts the HTTP request.
    """

    name: str

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]: ...


class ProviderError(Exception):
    """A provider failed in a way retrying will not fix (or retries ran out)."""

    def __init__(self, message: str, *, status: int | None = None, partial: Message | None = None):
        super().__init__(message)
        self.status = status
        # What had streamed before a mid-stream failure, so the log keeps it.
        self.partial = partial


def collect(events: Iterator[StreamEvent]) -> ModelResponse:
    """Drain a stream and return its final response."""
    for event in events:
        if isinstance(event, Completed):
            return event.response
    raise ProviderError("the stream ended without a final response")
