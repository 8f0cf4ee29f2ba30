"""The plain data every part of caretz shares: conversation, usage, tool specs,
model requests and responses.

A leaf: it imports nothing from caretz. Providers translate these to and from
their wire formats; the turn loop, the tools, the guard and the session log only
ever see these.
"""

from __future__ import annotations

import base64 as base64_codec
from collections.abc import Callable
from dataclasses import field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass

if TYPE_CHECKING:
    import hashlib
else:
    # An image's digest and its bytes for a request: loaded with the first image.
    hashlib = lazy_module("hashlib")

Role = Literal["user", "assistant", "tool"]
# Anthropic counts an image as about width × height / 750 tokens; OpenAI's tiles come close.
PIXELS_PER_TOKEN = 750


@lazy_dataclass(frozen=True, kw_only=True)
class Image:
    """An image the model sees: its bytes in one of the formats every protocol takes
    (PNG, JPEG, GIF, WebP), already within the size caps (caretz/tools/image_fit.py)."""

    media_type: str  # image/png, image/jpeg, image/gif or image/webp
    data: bytes = field(repr=False)
    width: int = 0
    height: int = 0
    source: str = ""  # where it came from (a path, an MCP tool), for people

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def base64(self) -> str:
        return base64_codec.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.base64()}"

    @property
    def tokens(self) -> int:
        """About what it costs in the context window."""
        return max(self.width * self.height // PIXELS_PER_TOKEN, 1)

    def ref(self) -> dict[str, Any]:
        """What the session log keeps: everything but the bytes, which it stores once
        in a file named by their digest (caretz/session/images.py)."""
        return {
            "media_type": self.media_type,
            "sha256": self.sha256,
            "bytes": len(self.data),
            "width": self.width,
            "height": self.height,
            "source": self.source,
        }


# An image's bytes back from its `ref()`; None when they are gone.
ImageLoader = Callable[[dict[str, Any]], Image | None]


@lazy_dataclass(kw_only=True)
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


@lazy_dataclass(kw_only=True)
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
    # role == "user" or "tool": images the model sees with the text.
    images: list[Image] = field(default_factory=list)
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
        if self.images:
            data["images"] = [image.ref() for image in self.images]
        if self.server_blocks:
            data["server_blocks"] = self.server_blocks
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], load_image: ImageLoader | None = None) -> Message:
        """The message `to_dict` wrote; its images read back with `load_image` (one that
        cannot be is named in the text instead)."""
        images, missing = restore_images(data.get("images") or [], load_image)
        return cls(
            role=data["role"],
            content=data.get("content", "") + missing,
            tool_calls=[ToolCall.from_dict(c) for c in data.get("tool_calls", [])],
            tool_call_id=data.get("tool_call_id"),
            is_error=data.get("is_error", False),
            thinking=data.get("thinking", ""),
            thinking_signature=data.get("thinking_signature"),
            reasoning_items=list(data.get("reasoning_items") or []),
            images=images,
            server_blocks=list(data.get("server_blocks") or []),
        )


def restore_images(
    refs: list[dict[str, Any]], load_image: ImageLoader | None
) -> tuple[list[Image], str]:
    """The images `refs` name, and a note for those that could not be read back."""
    images: list[Image] = []
    lost: list[str] = []
    for ref in refs:
        image = load_image(ref) if load_image is not None else None
        if image is None:
            lost.append(str(ref.get("source") or ref.get("sha256", "?")[:12]))
        else:
            images.append(image)
    note = f"\n[image not available any more: {', '.join(lost)}]" if lost else ""
    return images, note


@lazy_dataclass(kw_only=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0  # the part of output_tokens spent reasoning, where told

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
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
                conversation.append(
                    Message(role="tool", content=answer, tool_call_id=call.id, is_error=True)
                )
        return


Reasoning = Literal["off", "low", "medium", "high"]
ProtocolName = Literal["anthropic", "openai", "responses"]


@lazy_dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments object


@lazy_dataclass(kw_only=True)
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


@lazy_dataclass
class ModelResponse:
    message: Message  # role "assistant": text, tool calls, thinking
    usage: Usage
    stop_reason: str
    model: str
