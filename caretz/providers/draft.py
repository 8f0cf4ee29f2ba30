"""The reply being assembled from a stream: text, reasoning and tool calls as they
arrive, then one ModelResponse. Both protocol parsers fill a MessageDraft."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import field
from typing import Any

from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import Message, ModelResponse, ToolCall, Usage
from caretz.providers.base import StreamEvent, TextDelta, ThinkingDelta
from caretz.text import shorten

CLIP_CHARS = 200  # text a server sent, quoted in an error message, is cut to this


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Tool-call arguments as a dict, or ({}, what was wrong) — never raises."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        # Some messages end in "at" already ("Unterminated string starting at").
        where = "char" if exc.msg.endswith(" at") else "at char"
        problem = f"the arguments are not valid JSON ({exc.msg} {where} {exc.pos})"
        return {}, f"{problem}: {shorten(raw, CLIP_CHARS)}"
    if not isinstance(value, dict):
        kind = type(value).__name__
        return {}, f"the arguments must be a JSON object, not {kind}: {shorten(raw, CLIP_CHARS)}"
    return value, None


@lazy_dataclass
class PendingCall:
    id: str
    name: str
    parts: list[str] = field(default_factory=list)
    # Arguments sent whole in the opening event (used when no fragments follow).
    initial: dict[str, Any] | None = None

    def finish(self) -> ToolCall:
        raw = "".join(self.parts)
        if not raw.strip() and self.initial:
            return ToolCall(self.id, self.name, dict(self.initial))
        arguments, error = parse_arguments(raw)
        sent = shorten(raw, CLIP_CHARS) if error else None
        return ToolCall(self.id, self.name, arguments, error, raw_arguments=sent)


@lazy_dataclass
class MessageDraft:
    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    signature: str | None = None
    reasoning_items: list[dict[str, Any]] = field(default_factory=list)  # Responses API
    # Anthropic's server tool blocks by the stream's index, and a server_tool_use's
    # input as it streams.
    server_blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    server_inputs: dict[int, list[str]] = field(default_factory=dict)
    calls: dict[int, PendingCall] = field(default_factory=dict)  # by the stream's index
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None  # as the server said it
    model: str | None = None

    def add_text(self, text: Any) -> Iterator[StreamEvent]:
        """Keep a piece of the answer and pass it on; empty or non-text pieces are dropped."""
        if isinstance(text, str) and text:
            self.text.append(text)
            yield TextDelta(text)

    def add_thinking(self, text: Any) -> Iterator[StreamEvent]:
        """Keep a piece of reasoning and pass it on; empty or non-text pieces are dropped."""
        if isinstance(text, str) and text:
            self.thinking.append(text)
            yield ThinkingDelta(text)

    def finished_server_blocks(self) -> list[dict[str, Any]]:
        return [
            finished_input(block, self.server_inputs.get(index, []))
            for index, block in sorted(self.server_blocks.items())
        ]

    def partial(self) -> Message:
        """What streamed so far, for the log when the stream breaks."""
        return Message("assistant", "".join(self.text), thinking="".join(self.thinking))

    def response(self, fallback_model: str, stop_aliases: Mapping[str, str]) -> ModelResponse:
        tool_calls = [call.finish() for _, call in sorted(self.calls.items())]
        message = Message(
            "assistant",
            "".join(self.text),
            tool_calls=tool_calls,
            thinking="".join(self.thinking),
            thinking_signature=self.signature,
            reasoning_items=list(self.reasoning_items),
            server_blocks=self.finished_server_blocks(),
        )
        stop = normalize_stop(self.stop_reason, bool(tool_calls), stop_aliases)
        return ModelResponse(message, self.usage, stop, self.model or fallback_model)


def finished_input(block: dict[str, Any], parts: list[str]) -> dict[str, Any]:
    """A server_tool_use block with the input its deltas streamed (as sent when none did)."""
    arguments, error = parse_arguments("".join(parts))
    if error is not None or not arguments:
        return block
    return {**block, "input": arguments}


def normalize_stop(raw: str | None, has_calls: bool, aliases: Mapping[str, str]) -> str:
    if raw is None:
        return "tool_use" if has_calls else "end_turn"
    reason = aliases.get(raw, raw)
    # Some OpenAI-compatible servers say "stop" even when the reply is tool calls.
    if has_calls and reason == "end_turn":
        return "tool_use"
    return reason
