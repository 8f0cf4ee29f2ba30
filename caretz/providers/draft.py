"""The reply being assembled from a stream: text, reasoning and tool calls as they
arrive, then one ModelResponse.

Every protocol parser fills a MessageDraft, and only the draft makes what the turn gets
from a provider (the deltas, the calls, the usage, the reply): each value a server sent
passes caretz/inbound.py here and leaves with the type the turn expects, whatever the
server put in its place (tests/test_architecture.py holds the providers to it). The
draft also counts what streamed, for the output bound (sse.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import field
from typing import Any

from caretz import inbound
from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import Message, ModelRequest, ModelResponse, ToolCall, Usage
from caretz.providers.base import StreamEvent, TextDelta, ThinkingDelta, ToolCallStarted

CLIP_CHARS = inbound.CLIP_CHARS  # text a server sent, quoted in an error message

# A reply is read to its output limit's worth of text and no further: a token is about
# 4 characters, so 16 is far above any real reply, and a server that streams without
# end is stopped as if the reply had hit max_tokens. Events are bounded alike (a stream
# of empty deltas or pings).
CHARS_PER_TOKEN_BOUND = 16
EVENTS_PER_TOKEN_BOUND = 4
BOUND_MARGIN = 64 * 1024
MAX_TOKENS_KEYS = ("max_tokens", "max_completion_tokens", "max_output_tokens")


@lazy_dataclass
class PendingCall:
    id: str
    name: str
    parts: list[str] = field(default_factory=list)
    # Arguments sent whole in the opening event (used when no fragments follow).
    initial: dict[str, Any] | None = None

    def finish(self) -> ToolCall:
        raw = "".join(self.parts)
        arguments, error = inbound.tool_arguments(raw, self.initial)
        sent = inbound.clipped(raw) if error and raw.strip() else None
        return ToolCall(
            id=word(self.id),
            name=word(self.name),
            arguments=arguments,
            arguments_error=error,
            raw_arguments=sent,
        )


@lazy_dataclass(kw_only=True)
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
    size: int = 0  # characters of text, reasoning and arguments streamed so far

    def add_text(self, text: Any) -> Iterator[StreamEvent]:
        """Keep a piece of the answer and pass it on; empty or non-text pieces are dropped."""
        text = inbound.text(text)
        if text:
            self.text.append(text)
            self.size += len(text)
            yield TextDelta(text)

    def add_thinking(self, text: Any) -> Iterator[StreamEvent]:
        """Keep a piece of reasoning and pass it on; empty or non-text pieces are dropped."""
        text = inbound.text(text)
        if text:
            self.thinking.append(text)
            self.size += len(text)
            yield ThinkingDelta(text)

    def started(self, call: PendingCall) -> Iterator[StreamEvent]:
        """The event that shows a call has begun, with the id and name it has so far."""
        yield ToolCallStarted(word(call.id), word(call.name))

    def add_arguments(self, call: PendingCall, piece: Any, *, whole: bool = False) -> None:
        """A piece of a call's arguments (`whole`: all of them, as a server repeats them
        at the end); a piece that is not text is none."""
        piece = piece if isinstance(piece, str) else ""
        if whole:
            self.size -= sum(len(part) for part in call.parts)
            call.parts[:] = []
        call.parts.append(piece)
        self.size += len(piece)

    def add_server_input(self, index: int, piece: Any) -> None:
        if isinstance(piece, str):
            self.server_inputs.setdefault(index, []).append(piece)
            self.size += len(piece)

    def set_usage(self, **counts: Any) -> None:
        """The token counts as the server gave them; one that is not a count is 0."""
        self.usage = Usage(**{name: count(value) for name, value in counts.items()})

    def finished_server_blocks(self) -> list[dict[str, Any]]:
        return [
            finished_input(block, self.server_inputs.get(index, []))
            for index, block in sorted(self.server_blocks.items(), key=by_index)
        ]

    def partial(self) -> Message:
        """What streamed so far, for the log when the stream breaks."""
        return Message(
            role="assistant", content="".join(self.text), thinking="".join(self.thinking)
        )

    def response(self, fallback_model: str, stop_aliases: Mapping[str, str]) -> ModelResponse:
        tool_calls = [call.finish() for _, call in sorted(self.calls.items(), key=by_index)]
        message = Message(
            role="assistant",
            content="".join(self.text),
            tool_calls=tool_calls,
            thinking="".join(self.thinking),
            thinking_signature=word(self.signature) or None,
            reasoning_items=list(self.reasoning_items),
            server_blocks=self.finished_server_blocks(),
        )
        stop = normalize_stop(word(self.stop_reason) or None, bool(tool_calls), stop_aliases)
        return ModelResponse(message, self.usage, stop, word(self.model) or fallback_model)


def joined(first: ModelResponse, rest: ModelResponse) -> ModelResponse:
    """A paused reply and its continuation as one reply (the continuation's calls and stop)."""
    a, b = first.message, rest.message
    # One thinking block goes back, and its signature covers its own text only: the first's.
    thinking = a if a.thinking_signature else b
    message = Message(
        role="assistant",
        content=a.content + b.content,
        tool_calls=b.tool_calls,
        thinking=thinking.thinking,
        thinking_signature=thinking.thinking_signature,
        server_blocks=[*a.server_blocks, *b.server_blocks],
    )
    return ModelResponse(message, first.usage + rest.usage, rest.stop_reason, rest.model)


def by_index(item: tuple[Any, Any]) -> tuple[int, int, str]:
    """A stream's order for what it numbered: by the number, and what a server numbered
    with something else (null, text) after, in a stable order."""
    index = item[0]
    if isinstance(index, int) and not isinstance(index, bool):
        return 0, index, ""
    return 1, 0, repr(index)


def word(value: Any) -> str:
    """An id, a name, a model or a stop reason a server sent: text, or "" for anything else."""
    return inbound.text(value)


def count(value: Any) -> int:
    """A token count a server sent: a whole number of at least 0, else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def finished_input(block: dict[str, Any], parts: list[str]) -> dict[str, Any]:
    """A server_tool_use block with the input its deltas streamed (as sent when none did)."""
    arguments, error = inbound.tool_arguments("".join(parts))
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


@lazy_dataclass(frozen=True)
class OutputBound:
    """How much of a reply is read before caretz stops it as a max_tokens stop."""

    chars: int
    events: int

    @classmethod
    def of(cls, body: Mapping[str, Any], request: ModelRequest) -> OutputBound:
        limits = [body.get(key) for key in MAX_TOKENS_KEYS]
        tokens = max([request.max_tokens, *(n for n in limits if isinstance(n, int))])
        return cls(
            tokens * CHARS_PER_TOKEN_BOUND + BOUND_MARGIN,
            tokens * EVENTS_PER_TOKEN_BOUND + BOUND_MARGIN,
        )

    def reached(self, draft: MessageDraft, events: int) -> bool:
        return draft.size > self.chars or events > self.events
