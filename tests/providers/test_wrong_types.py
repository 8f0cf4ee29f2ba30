"""A server that sends the wrong type in any field of any event: each protocol's stream
(as tests/modelserver.py renders a reply with reasoning, text and a tool call) with one
value swapped, field by field, for each of a set of wrong ones. The reply either fails as
one StreamFailure line or comes out with the types the turn expects; nothing else."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from caretz.messages import ModelResponse
from caretz.providers.anthropic import AnthropicParser
from caretz.providers.base import TextDelta, ThinkingDelta, ToolCallStarted
from caretz.providers.openai import OpenAIParser
from caretz.providers.openai_responses import ResponsesParser
from caretz.providers.sse import SSEEvent, StreamFailure, StreamParser, read_event
from tests.modelserver import (
    Reply,
    _Call,
    _Rendered,
    anthropic_events,
    openai_events,
    responses_events,
)

WRONG = [None, 7, 2.5, True, "text", [], {"k": [None]}]
REPLY = Reply(text="All green.", thinking="Run the tests.", chunk_size=64)
RENDERED = _Rendered(REPLY, "scripted-model", [_Call("call_1", "bash", '{"command": "ls"}')])
PROTOCOLS: dict[str, tuple[Callable[[], StreamParser], list[Any]]] = {
    "anthropic": (AnthropicParser, anthropic_events(RENDERED)),
    "openai": (OpenAIParser, openai_events(RENDERED, include_usage=True)),
    "responses": (ResponsesParser, responses_events(RENDERED)),
}


def paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in `value` a field sits: each key of each object, each list item."""
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    for key, item in items:
        yield (*at, key)
        yield from paths(item, (*at, key))


def swapped(events: list[Any], index: int, path: tuple[Any, ...], wrong: Any) -> list[Any]:
    events = copy.deepcopy(events)
    holder = events[index]
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = wrong
    return events


def sse(event: Any) -> SSEEvent:
    if isinstance(event, tuple):  # (name, payload): Anthropic and Responses name events
        return SSEEvent(event[0], json.dumps(event[1]))
    return SSEEvent("", event if isinstance(event, str) else json.dumps(event))


def play(parser: StreamParser, events: list[Any]) -> tuple[list[Any], ModelResponse]:
    streamed = []
    for event in events:
        streamed += read_event(parser, sse(event))
        if parser.done:
            break
    return streamed, parser.draft.response("fallback-model", {})


def wrong_typed(streamed: list[Any], response: ModelResponse) -> list[str]:
    """What in a finished reply has another type than the turn expects."""
    problems = []
    for event in streamed:
        if isinstance(event, TextDelta | ThinkingDelta) and not isinstance(event.text, str):
            problems.append(f"delta {event!r}")
        if isinstance(event, ToolCallStarted) and not (
            isinstance(event.id, str) and isinstance(event.name, str)
        ):
            problems.append(f"call started {event!r}")
    message = response.message
    texts = [message.content, message.thinking, response.stop_reason, response.model]
    problems += [f"text {text!r}" for text in texts if not isinstance(text, str)]
    for call in message.tool_calls:
        if not (isinstance(call.id, str) and isinstance(call.name, str)):
            problems.append(f"call {call!r}")
        if not isinstance(call.arguments, dict):
            problems.append(f"arguments {call.arguments!r}")
    usage = response.usage
    counts = [usage.input_tokens, usage.output_tokens, usage.cache_read_tokens]
    counts += [usage.cache_write_tokens, usage.reasoning_tokens]
    problems += [f"usage {count!r}" for count in counts if type(count) is not int]
    return problems


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_wrong_type_in_any_field_is_a_stream_failure_or_a_well_typed_reply(protocol):
    make_parser, events = PROTOCOLS[protocol]
    played = failed = 0
    problems: list[str] = []
    for index, event in enumerate(events):
        payload = event[1] if isinstance(event, tuple) else event
        for path in paths(payload):
            full = (1, *path) if isinstance(event, tuple) else path
            for wrong in WRONG:
                played += 1
                try:
                    streamed, response = play(make_parser(), swapped(events, index, full, wrong))
                except StreamFailure:
                    failed += 1
                    continue
                found = wrong_typed(streamed, response)
                problems += [f"{index}{list(path)}={wrong!r}: {p}" for p in found]
    assert problems == []
    assert played > 300 and 0 < failed < played  # both outcomes were met
