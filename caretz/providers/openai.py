"""OpenAI Chat Completions, streamed: POST {base}/chat/completions.

Also the dialect of vLLM, llama.cpp, Ollama, LM Studio, OpenRouter, Groq and friends,
so the parser accepts the small variations they allow themselves.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from caretz.messages import Image, Message, ModelRequest, ToolSpec
from caretz.providers.base import StreamEvent
from caretz.providers.draft import PendingCall
from caretz.providers.retries import describe_error
from caretz.providers.sse import (
    SSEEvent,
    SSEProvider,
    StreamFailure,
    StreamParser,
    is_transient,
    load_chunk,
)

STOP_ALIASES = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
}


def bearer_headers(api_key: str | None) -> dict[str, str]:
    """OpenAI's authorization, shared by Chat Completions and the Responses API."""
    return {"authorization": f"Bearer {api_key}"} if api_key else {}


class OpenAIProvider(SSEProvider):
    path = "/chat/completions"
    stop_aliases = STOP_ALIASES

    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        return bearer_headers(api_key)

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        # OpenAI's own API wants the newer name; the local servers know only max_tokens.
        official = urlsplit(self.base_url).hostname == "api.openai.com"
        return request_body(
            request, max_tokens_key="max_completion_tokens" if official else "max_tokens"
        )

    def new_parser(self) -> OpenAIParser:
        return OpenAIParser()


def request_body(request: ModelRequest, *, max_tokens_key: str = "max_tokens") -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": request.model,
        "messages": wire_messages(request.system, request.messages),
        "stream": True,
        "stream_options": {"include_usage": True},
        max_tokens_key: request.max_tokens,
    }
    # "none" sends no tools at all: Chat Completions accepts tool calls in the
    # history without them, and some local servers ignore tool_choice "none".
    if request.tools and request.tool_choice != "none":
        body["tools"] = tool_definitions(request.tools)
        choice = tool_choice(request.tool_choice)
        if choice is not None:
            body["tool_choice"] = choice
    if request.reasoning != "off":
        body["reasoning_effort"] = request.reasoning
    if request.response_schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "reply", "schema": request.response_schema},
        }
    return body


def tool_definitions(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            },
        }
        for tool in tools
    ]


def tool_choice(choice: str | None) -> str | dict[str, Any] | None:
    if choice is None or choice in ("auto", "required", "none"):
        return choice
    return {"type": "function", "function": {"name": choice}}


IMAGES_FOLLOW = "[the image this call returned follows in the next user message]"


def wire_messages(system: str, messages: list[Message]) -> list[dict[str, Any]]:
    """caretz messages as Chat Completions messages. A tool message carries text only, so
    the images of a run of tool results follow it in one user message, each named by
    its call."""
    wire: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    shown: list[dict[str, Any]] = []  # the images of the tool results just written
    for message in messages:
        if message.role == "tool":
            wire.append(tool_message(message))
            shown += tool_images(message)
            continue
        if shown:
            wire.append({"role": "user", "content": shown})
            shown = []
        if message.role == "assistant":
            wire.append(assistant_message(message))
        else:
            wire.append({"role": "user", "content": user_content(message)})
    if shown:
        wire.append({"role": "user", "content": shown})
    return wire


def tool_message(message: Message) -> dict[str, Any]:
    content = message.content
    if message.images:
        content = f"{content}\n{IMAGES_FOLLOW}" if content else IMAGES_FOLLOW
    return {"role": "tool", "tool_call_id": message.tool_call_id, "content": content}


def tool_images(message: Message) -> list[dict[str, Any]]:
    if not message.images:
        return []
    label = {"type": "text", "text": f"The image returned by tool call {message.tool_call_id}:"}
    return [label, *(image_part(image) for image in message.images)]


def user_content(message: Message) -> str | list[dict[str, Any]]:
    """A prompt's text, or its text and images as content parts."""
    if not message.images:
        return message.content
    text = [{"type": "text", "text": message.content}] if message.content else []
    return [*text, *(image_part(image) for image in message.images)]


def image_part(image: Image) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": image.data_url()}}


def assistant_message(message: Message) -> dict[str, Any]:
    if not message.tool_calls:
        return {"role": "assistant", "content": message.content}
    calls = [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
        }
        for call in message.tool_calls
    ]
    return {"role": "assistant", "content": message.content or None, "tool_calls": calls}


class OpenAIParser(StreamParser):
    """Turns chat.completion.chunk events into caretz stream events."""

    def feed(self, event: SSEEvent) -> Iterator[StreamEvent]:
        if event.data.strip() == "[DONE]":
            self.done = True
            return
        chunk = load_chunk(event.data)
        if chunk.get("error"):
            error = chunk["error"]
            reason = describe_error(chunk) or "the server reported an error"
            kind = (
                str(error.get("type") or error.get("code") or "") if isinstance(error, dict) else ""
            )
            raise StreamFailure(reason, retryable=is_transient(kind))
        self.draft.model = self.draft.model or chunk.get("model")
        if chunk.get("usage"):
            self._set_usage(chunk["usage"])
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) == 0:
                yield from self._choice(choice)

    def _choice(self, choice: dict[str, Any]) -> Iterator[StreamEvent]:
        delta = choice.get("delta") or {}
        # DeepSeek and vLLM say reasoning_content; OpenRouter and Ollama say reasoning.
        yield from self.draft.add_thinking(delta.get("reasoning_content") or delta.get("reasoning"))
        yield from self.draft.add_text(delta.get("content"))
        for piece in delta.get("tool_calls") or []:
            yield from self._tool_call(piece)
        if choice.get("finish_reason"):
            self.draft.stop_reason = choice["finish_reason"]

    def _tool_call(self, piece: dict[str, Any]) -> Iterator[StreamEvent]:
        index = self._index_of(piece)
        call = self.draft.calls.setdefault(index, PendingCall(piece.get("id") or "", ""))
        call.id = call.id or piece.get("id") or ""
        function = piece.get("function") or {}
        if function.get("name") and not call.name:  # some servers repeat it in every chunk
            call.name = function["name"]
            call.id = call.id or f"call_{uuid.uuid4().hex[:24]}"
            yield from self.draft.started(call)
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # a few servers send the object itself
            call.initial = arguments
        elif arguments:
            self.draft.add_arguments(call, arguments)

    def _index_of(self, piece: dict[str, Any]) -> int:
        index = piece.get("index")
        if isinstance(index, int):
            return index
        # Without an index, a new id starts a new call and anything else continues the last.
        calls = self.draft.calls
        known = {call.id for call in calls.values()}
        if not calls or (piece.get("id") and piece["id"] not in known):
            return len(calls)
        return max(calls)

    def _set_usage(self, usage: dict[str, Any]) -> None:
        details = usage.get("prompt_tokens_details") or {}
        # input_tokens is the whole prompt, cached part included, as the API counts it.
        self.draft.set_usage(
            input_tokens=usage.get("prompt_tokens") or 0,
            output_tokens=usage.get("completion_tokens") or 0,
            cache_read_tokens=(
                details.get("cached_tokens") or usage.get("prompt_cache_hit_tokens") or 0
            ),
        )
