"""The plain data every part of caretz shares: conversation, usage, tool specs,
model requests and responses.

A leaf: it imports nothing from caretz. Providers translate these to and from
their wire formats; the turn loop, the tools, the guard and the session log only
ever see these.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["user", "assistant", "tool"]


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]
    # Set when the model sent arguments that are not a JSON object; the call
    # then comes back to the model as a failed result instead of running.
    arguments_error: str | None = None
    raw_arguments: str | None = None  # what was sent instead (cut short), for people to read

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "name": self.name, "arguments": self.arguments}
        if self.arguments_error:
            data["arguments_error"] = self.arguments_error
        if self.raw_arguments is not None:
            data["raw_arguments"] = self.raw_arguments
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCall:
        return cls(
            id=data["id"],
            name=data["name"],
            arguments=data.get("arguments") or {},
            arguments_error=data.get("arguments_error"),
            raw_arguments=data.get("raw_arguments"),
        )


@dataclass
class Message:
    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None  # role == "tool": the call this answers
    is_error: bool = False  # role == "tool": the call failed
    thinking: str = ""  # role == "assistant": reasoning text, kept for the log
    thinking_signature: str | None = None  # Anthropic's signature for thinking blocks
    # role == "assistant": the Responses API's reasoning items (encrypted content and
    # all) and its own web_search_call items, in the order received, sent back as they
    # are; opaque to everything else.
    reasoning_items: list[dict[str, Any]] = field(default_factory=list)
    # role == "assistant": Anthropic's server tool blocks (server_tool_use and
    # web_search_tool_result: the provider's own search), sent back as they came.
    server_blocks: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [call.to_dict() for call in self.tool_calls]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        if self.is_error:
            data["is_error"] = True
        if self.thinking:
            data["thinking"] = self.thinking
        if self.thinking_signature:
            data["thinking_signature"] = self.thinking_signature
        if self.reasoning_items:
            data["reasoning_items"] = self.reasoning_items
        if self.server_blocks:
            data["server_blocks"] = self.server_blocks
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        return cls(
            role=data["role"],
            content=data.get("content", ""),
            tool_calls=[ToolCall.from_dict(c) for c in data.get("tool_calls", [])],
            tool_call_id=data.get("tool_call_id"),
            is_error=data.get("is_error", False),
            thinking=data.get("thinking", ""),
            thinking_signature=data.get("thinking_signature"),
            reasoning_items=list(data.get("reasoning_items") or []),
            server_blocks=list(data.get("server_blocks") or []),
        )


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0  # the part of output_tokens spent reasoning, where told

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        data = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        }
        if self.reasoning_tokens:
            data["reasoning_tokens"] = self.reasoning_tokens
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        names = [*cls().to_dict(), "reasoning_tokens"]
        return cls(**{k: int(data.get(k, 0)) for k in names})


def answer_dangling_calls(
    conversation: list[Message], text: str | Callable[[ToolCall], str]
) -> None:
    """Give every tool call of the last assistant message a result.

    Both protocols reject a conversation with an unanswered tool call, so a turn
    that ended mid-batch (a stop, Ctrl-C, a killed process) is closed with `text`
    (or the text it gives for each call).
    """
    for position in range(len(conversation) - 1, -1, -1):
        message = conversation[position]
        if message.role != "assistant":
            continue
        answered = {m.tool_call_id for m in conversation[position + 1 :]}
        for call in message.tool_calls:
            if call.id not in answered:
                answer = text if isinstance(text, str) else text(call)
                conversation.append(Message("tool", answer, tool_call_id=call.id, is_error=True))
        return


Reasoning = Literal["off", "low", "medium", "high"]
ProtocolName = Literal["anthropic", "openai", "responses"]


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
