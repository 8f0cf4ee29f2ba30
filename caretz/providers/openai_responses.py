"""OpenAI's Responses API, streamed and stateless: POST {base}/responses.

Nothing is stored on the server (`store: false`): every request carries the whole
conversation as `input` items. The model's reasoning survives between requests as
encrypted reasoning items (`include: ["reasoning.encrypted_content"]`), which the
reply keeps on its Message (`reasoning_items`) and the next request sends back
exactly as they came; so do the `web_search_call` items of OpenAI's own search (the
`web_search` tool, offered when the session's settings ask for it). Reasoning summaries
stream as thinking.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from caretz.messages import Image, Message, ModelRequest, ToolSpec
from caretz.providers.base import StreamEvent
from caretz.providers.draft import PendingCall
from caretz.providers.openai import bearer_headers
from caretz.providers.sse import (
    SSEEvent,
    SSEProvider,
    StreamFailure,
    StreamParser,
    is_transient,
    load_chunk,
)

ENCRYPTED_REASONING = "reasoning.encrypted_content"
# Why a response came back incomplete, in caretz's stop reasons.
STOP_ALIASES = {"max_output_tokens": "max_tokens", "content_filter": "refusal"}


class ResponsesProvider(SSEProvider):
    path = "/responses"
    stop_aliases = STOP_ALIASES

    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        return bearer_headers(api_key)

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        return request_body(request, bool(self.server_search))

    def new_parser(self) -> ResponsesParser:
        return ResponsesParser()


def request_body(request: ModelRequest, server_search: bool = False) -> dict[str, Any]:
    """The Responses body; `server_search`: offer OpenAI's own web search (only in a
    request that offers tools: an agent's)."""
    body: dict[str, Any] = {
        "model": request.model,
        "input": wire_input(request.messages),
        "stream": True,
        "store": False,
        "include": [ENCRYPTED_REASONING],
        "max_output_tokens": request.max_tokens,
    }
    if request.system:
        body["instructions"] = request.system
    # "none" keeps the tools declared: the API honours it, and the cached prefix stays.
    if request.tools:
        body["tools"] = tool_definitions(request.tools)
        if server_search:
            body["tools"].insert(0, {"type": "web_search"})
        choice = tool_choice(request.tool_choice)
        if choice is not None:
            body["tool_choice"] = choice
    if request.reasoning != "off":
        body["reasoning"] = {"effort": request.reasoning, "summary": "auto"}
    if request.response_schema is not None:
        body["text"] = {
            "format": {
                "type": "json_schema",
                "name": "reply",
                "schema": request.response_schema,
                "strict": False,
            }
        }
    return body


def tool_definitions(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
            "strict": False,  # caretz's schemas are not all in the strict subset
        }
        for tool in tools
    ]


def tool_choice(choice: str | None) -> str | dict[str, Any] | None:
    if choice is None or choice in ("auto", "required", "none"):
        return choice
    return {"type": "function", "name": choice}


def wire_input(messages: list[Message]) -> list[dict[str, Any]]:
    """caretz messages as Responses input items, in conversation order."""
    items: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id,
                    "output": content(message),
                }
            )
        elif message.role == "user":
            items.append({"role": "user", "content": content(message)})
        else:
            items.extend(assistant_items(message))
    return items


def content(message: Message) -> str | list[dict[str, Any]]:
    """A prompt's or a tool result's text, or its text and images as input parts (a
    function_call_output's output takes the same parts as a message)."""
    if not message.images:
        return message.content
    text = [{"type": "input_text", "text": message.content}] if message.content else []
    return [*text, *(input_image(image) for image in message.images)]


def input_image(image: Image) -> dict[str, Any]:
    return {"type": "input_image", "image_url": image.data_url()}


def assistant_items(message: Message) -> list[dict[str, Any]]:
    # The reply's own order: reasoning first, then its text, then its calls.
    items = [dict(item) for item in message.reasoning_items]
    if message.content:
        items.append({"role": "assistant", "content": message.content})
    for call in message.tool_calls:
        items.append(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": json.dumps(call.arguments),
            }
        )
    return items


class ResponsesParser(StreamParser):
    """Turns Responses stream events into caretz stream events."""

    def __init__(self) -> None:
        super().__init__()
        self._summary_part: tuple[Any, Any] | None = None  # (item id, summary index)

    def feed(self, event: SSEEvent) -> Iterator[StreamEvent]:
        if event.data.strip() == "[DONE]":
            self.done = True
            return
        data = load_chunk(event.data)
        kind = data.get("type") or event.event
        if kind in ("response.created", "response.in_progress"):
            response = data.get("response") or {}
            self.draft.model = self.draft.model or response.get("model")
        elif kind == "response.output_item.added":
            yield from self._item_added(data.get("output_index", 0), data.get("item") or {})
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            yield from self.draft.add_text(data.get("delta"))
        elif kind == "response.function_call_arguments.delta":
            self.draft.add_arguments(self._call_at(data), data.get("delta"))
        elif kind == "response.function_call_arguments.done":
            if isinstance(data.get("arguments"), str):
                self.draft.add_arguments(self._call_at(data), data["arguments"], whole=True)
        elif kind == "response.reasoning_summary_text.delta":
            yield from self._summary(data)
        elif kind == "response.reasoning_text.delta":  # open models' raw reasoning
            yield from self.draft.add_thinking(data.get("delta"))
        elif kind == "response.output_item.done":
            yield from self._item_done(data.get("output_index", 0), data.get("item") or {})
        elif kind in ("response.completed", "response.incomplete"):
            self._finish(data.get("response") or {})
        elif kind == "response.failed":
            raise failure((data.get("response") or {}).get("error") or {})
        elif kind == "error":
            error = data.get("error")
            raise failure(error if isinstance(error, dict) else data)
        # Other events (content parts, *.done echoes, newer types) need nothing.

    def _item_added(self, index: int, item: dict[str, Any]) -> Iterator[StreamEvent]:
        if item.get("type") != "function_call" or index in self.draft.calls:
            return
        call = PendingCall(item.get("call_id") or item.get("id") or "", item.get("name", ""))
        self.draft.add_arguments(call, item.get("arguments"))
        self.draft.calls[index] = call
        yield from self.draft.started(call)

    def _item_done(self, index: int, item: dict[str, Any]) -> Iterator[StreamEvent]:
        kind = item.get("type")
        if kind == "reasoning":
            # Without its encrypted content a stateless request could not send it back.
            if item.get("encrypted_content"):
                self.draft.reasoning_items.append(item)
            if not self.draft.thinking:  # a server that sent the summary only here
                texts = [part.get("text") for part in item.get("summary") or []]
                yield from self.draft.add_thinking("\n\n".join(t for t in texts if t))
        elif kind == "web_search_call":
            # OpenAI's own search ran: the item goes back with the reasoning, in order.
            self.draft.reasoning_items.append(item)
        elif kind == "function_call":
            if index not in self.draft.calls:
                yield from self._item_added(index, item)
            elif isinstance(item.get("arguments"), str):
                self.draft.add_arguments(self.draft.calls[index], item["arguments"], whole=True)

    def _call_at(self, data: dict[str, Any]) -> PendingCall:
        index = data.get("output_index", 0)
        call = self.draft.calls.get(index)
        if call is None:
            raise StreamFailure(f"arguments for a tool call that never started (output {index})")
        return call

    def _summary(self, data: dict[str, Any]) -> Iterator[StreamEvent]:
        part = (data.get("item_id"), data.get("summary_index"))
        if self._summary_part is not None and part != self._summary_part and self.draft.thinking:
            yield from self.draft.add_thinking("\n\n")
        self._summary_part = part
        yield from self.draft.add_thinking(data.get("delta"))

    def _finish(self, response: dict[str, Any]) -> None:
        self.done = True
        self.draft.model = response.get("model") or self.draft.model
        if response.get("status") == "incomplete":
            reason = (response.get("incomplete_details") or {}).get("reason")
            self.draft.stop_reason = str(reason or "max_output_tokens")
        self._set_usage(response.get("usage") or {})

    def _set_usage(self, data: dict[str, Any]) -> None:
        # input_tokens is the whole prompt, cached part included; output_tokens holds reasoning.
        self.draft.set_usage(
            input_tokens=data.get("input_tokens") or 0,
            output_tokens=data.get("output_tokens") or 0,
            cache_read_tokens=(data.get("input_tokens_details") or {}).get("cached_tokens") or 0,
            reasoning_tokens=(data.get("output_tokens_details") or {}).get("reasoning_tokens") or 0,
        )


def failure(error: dict[str, Any]) -> StreamFailure:
    """An `error` event or a failed response as one line, retried if the kind is transient."""
    kind = str(error.get("code") or error.get("type") or "")
    if kind == "error":
        kind = ""
    message = error.get("message") or "the server reported an error"
    reason = f"{kind}: {message}" if kind else str(message)
    return StreamFailure(reason, retryable=is_transient(kind))
