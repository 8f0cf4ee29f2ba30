"""The Anthropic Messages API, streamed: POST {base}/v1/messages."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

from caretz.messages import Image, Message, ModelRequest, ModelResponse, ToolSpec
from caretz.providers.base import Completed, StreamEvent
from caretz.providers.draft import PendingCall, joined
from caretz.providers.sse import (
    SSEEvent,
    SSEProvider,
    StreamFailure,
    StreamParser,
    is_transient,
    load_chunk,
)

API_VERSION = "2023-06-01"
THINKING_BUDGETS = {"low": 1024, "medium": 4096, "high": 16384}
MIN_THINKING_BUDGET = 1024  # the API's floor
# Lets Claude think between tool calls too, not only at the start of its reply.
INTERLEAVED_THINKING = "interleaved-thinking-2025-05-14"
SCHEMA_INSTRUCTION = "Answer with only a JSON object matching this schema: "
# Anthropic's own web search, run on its servers; its blocks come back in the reply.
WEB_SEARCH_TOOL = "web_search_20250305"
# The API paused a reply whose own tool use (server searches) ran long: sent back, it goes
# on. At most this many times for one reply; then the reply is what came.
PAUSED = "pause_turn"
MAX_CONTINUATIONS = 3
# Blocks sent back as they came, never marked as a cache breakpoint.
UNMARKED_BLOCKS = frozenset({"thinking", "server_tool_use", "web_search_tool_result"})


class AnthropicProvider(SSEProvider):
    path = "/v1/messages"

    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        return request_body(request, self.server_search)

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        """The reply; one the API paused (`pause_turn`) is sent back to be continued, and
        its parts come back as one reply, so the turn loop never sees a paused one."""
        done: ModelResponse | None = None
        for _ in range(MAX_CONTINUATIONS + 1):
            part: ModelResponse | None = None
            for event in super().stream(request):
                if isinstance(event, Completed):
                    part = event.response
                else:
                    yield event
            if part is None:
                return  # closed early
            done = part if done is None else joined(done, part)
            if part.stop_reason != PAUSED:
                break
            request = dataclasses.replace(request, messages=[*request.messages, done.message])
        assert done is not None
        yield Completed(done)

    def new_parser(self) -> AnthropicParser:
        return AnthropicParser()

    def request_headers(self, body: dict[str, Any]) -> dict[str, str]:
        """With thinking on, the interleaved-thinking beta, joined to any configured betas."""
        if "thinking" not in body:
            return {}
        key, configured = "anthropic-beta", ""
        for name, value in self.entry.headers.items():
            if name.lower() == key:  # the configured spelling, so the header is sent once
                key, configured = name, value
        betas = [beta.strip() for beta in configured.split(",") if beta.strip()]
        if INTERLEAVED_THINKING not in betas:
            betas.append(INTERLEAVED_THINKING)
        return {key: ",".join(betas)}


def request_body(request: ModelRequest, server_search: int | None = None) -> dict[str, Any]:
    """The Messages API body; `server_search`: offer Anthropic's web search, at most this
    many searches per request (only in a request that offers tools: an agent's)."""
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "stream": True,
        "messages": wire_messages(request.messages),
    }
    system = system_blocks(request)
    if system:
        body["system"] = system
    if request.tools:
        body["tools"] = tool_definitions(request.tools)
        if server_search:
            search = {"type": WEB_SEARCH_TOOL, "name": "web_search", "max_uses": server_search}
            body["tools"].insert(0, search)  # before the cache breakpoint on the last tool
        choice = tool_choice(request.tool_choice)
        if choice:
            body["tool_choice"] = choice
    budget = thinking_budget(request.reasoning, request.max_tokens)
    # The API refuses thinking together with a forced tool choice; the forced choice wins.
    forced = body.get("tool_choice", {}).get("type") in ("any", "tool")
    if budget and not forced:
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        if request.max_tokens <= budget:  # too small for even the floor: room is made
            body["max_tokens"] = budget + request.max_tokens
    return body


def thinking_budget(reasoning: str, max_tokens: int) -> int | None:
    """The level's budget, kept within max_tokens (at most half of it, so the reply
    keeps room) where the API's 1,024-token floor allows; None: thinking off."""
    budget = THINKING_BUDGETS.get(reasoning)
    if budget is None:
        return None
    return max(min(budget, max_tokens // 2), MIN_THINKING_BUDGET)


def system_blocks(request: ModelRequest) -> list[dict[str, Any]]:
    texts = [request.system] if request.system else []
    if request.response_schema is not None:
        texts.append(SCHEMA_INSTRUCTION + json.dumps(request.response_schema))
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text} for text in texts]
    if blocks:
        blocks[-1]["cache_control"] = {"type": "ephemeral"}
    return blocks


def tool_definitions(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    wire = [
        {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}
        for tool in tools
    ]
    if wire:
        wire[-1]["cache_control"] = {"type": "ephemeral"}
    return wire


def tool_choice(choice: str | None) -> dict[str, Any] | None:
    if choice is None:
        return None
    named = {"auto": "auto", "required": "any", "none": "none"}
    if choice in named:
        return {"type": named[choice]}
    return {"type": "tool", "name": choice}


def wire_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """caretz messages as Anthropic turns; a run of tool results becomes one user turn."""
    wire: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            results.append(tool_result_block(message))
            continue
        if results:
            wire.append({"role": "user", "content": results})
            results = []
        if message.role == "user":
            wire.append({"role": "user", "content": user_content(message)})
            continue
        blocks = assistant_blocks(message)
        if blocks:  # the API refuses an empty assistant turn
            wire.append({"role": "assistant", "content": blocks})
    if results:
        wire.append({"role": "user", "content": results})
    mark_conversation_prefix(wire)
    return wire


def assistant_blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if message.thinking and message.thinking_signature:
        blocks.append(
            {
                "type": "thinking",
                "thinking": message.thinking,
                "signature": message.thinking_signature,
            }
        )
    blocks += [dict(block) for block in message.server_blocks]  # the searches, then the text
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        )
    return blocks


def user_content(message: Message) -> str | list[dict[str, Any]]:
    """A prompt's text, or its images then its text (the order Anthropic advises)."""
    if not message.images:
        return message.content
    blocks = [image_block(image) for image in message.images]
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    return blocks


def tool_result_block(message: Message) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    if message.images:
        text = [{"type": "text", "text": message.content}] if message.content else []
        block["content"] = [*text, *(image_block(image) for image in message.images)]
    elif message.content:
        block["content"] = message.content
    block["is_error"] = message.is_error
    return block


def image_block(image: Image) -> dict[str, Any]:
    source = {"type": "base64", "media_type": image.media_type, "data": image.base64()}
    return {"type": "image", "source": source}


def mark_conversation_prefix(wire: list[dict[str, Any]]) -> None:
    """Put a cache breakpoint on the newest stored turn (tool results or a reply).

    Plain user text at the end (the prompt, or a trailing note that is never stored)
    is skipped, so the next request of the turn reads the cached prefix back.
    """
    for turn in reversed(wire):
        content = turn["content"]
        if isinstance(content, list):
            if content and content[-1]["type"] not in UNMARKED_BLOCKS:
                content[-1]["cache_control"] = {"type": "ephemeral"}
            return


class AnthropicParser(StreamParser):
    """Turns Messages-API stream events into caretz stream events."""

    def feed(self, event: SSEEvent) -> Iterator[StreamEvent]:
        data = load_chunk(event.data)
        kind = data.get("type") or event.event
        if kind == "message_start":
            message = data.get("message") or {}
            self.draft.model = message.get("model") or self.draft.model
            self._add_usage(message.get("usage"))
        elif kind == "content_block_start":
            yield from self._start_block(data.get("index", 0), data.get("content_block") or {})
        elif kind == "content_block_delta":
            yield from self._delta(data.get("index", 0), data.get("delta") or {})
        elif kind == "message_delta":
            self.draft.stop_reason = (data.get("delta") or {}).get("stop_reason") or None
            self._add_usage(data.get("usage"))
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            error = data.get("error") or {}
            reason = f"{error.get('type', 'error')}: {error.get('message', 'no details')}"
            raise StreamFailure(reason, retryable=is_transient(str(error.get("type", ""))))
        # ping, content_block_stop and event types newer than this code need nothing.

    def _start_block(self, index: int, block: dict[str, Any]) -> Iterator[StreamEvent]:
        kind = block.get("type")
        if kind == "text":
            yield from self.draft.add_text(block.get("text"))
        elif kind == "thinking":
            yield from self.draft.add_thinking(block.get("thinking"))
        elif kind == "server_tool_use" or str(kind).endswith("_tool_result"):
            # The provider's own tool (web search) and its result: kept to send back.
            self.draft.server_blocks[index] = dict(block)
        elif kind == "tool_use":
            call = PendingCall(block.get("id", ""), block.get("name", ""))
            if isinstance(block.get("input"), dict):
                call.initial = block["input"]
            self.draft.calls[index] = call
            yield from self.draft.started(call)

    def _delta(self, index: int, delta: dict[str, Any]) -> Iterator[StreamEvent]:
        kind = delta.get("type")
        if kind == "text_delta":
            yield from self.draft.add_text(delta.get("text"))
        elif kind == "thinking_delta":
            yield from self.draft.add_thinking(delta.get("thinking"))
        elif kind == "signature_delta":
            self.draft.signature = delta.get("signature") or self.draft.signature
        elif kind == "input_json_delta" and index in self.draft.server_blocks:
            self.draft.add_server_input(index, delta.get("partial_json"))
        elif kind == "input_json_delta":
            call = self.draft.calls.get(index)
            if call is None:
                raise StreamFailure(f"arguments for a tool call that never started (block {index})")
            self.draft.add_arguments(call, delta.get("partial_json"))

    def _add_usage(self, usage: dict[str, Any] | None) -> None:
        """Usage counts are cumulative: a later event's number replaces an earlier one."""
        if not usage:
            return
        current = self.draft.usage
        self.draft.set_usage(
            input_tokens=usage.get("input_tokens") or current.input_tokens,
            output_tokens=usage.get("output_tokens") or current.output_tokens,
            cache_read_tokens=usage.get("cache_read_input_tokens") or current.cache_read_tokens,
            cache_write_tokens=(
                usage.get("cache_creation_input_tokens") or current.cache_write_tokens
            ),
        )
