"""The OpenAI Chat Completions provider against the loopback model server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from caretz.messages import Message, ModelRequest, ToolCall, ToolSpec, Usage
from caretz.providers.base import (
    ProviderError,
    Retrying,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
    collect,
)
from caretz.providers.openai import OpenAIParser, OpenAIProvider
from caretz.providers.registry import BUILTIN_PROVIDERS, ProviderEntry, create_provider
from caretz.providers.sse import SSEEvent, iter_sse
from tests.modelserver import ModelServer, Reply, calls, error, text
from tests.providers.streams import completed

KEY = "sk-proj-test-0123456789"
ENTRY = BUILTIN_PROVIDERS["openai"]
BASH = ToolSpec("bash", "Run a command", {"type": "object", "properties": {"command": {}}})
EDIT = ToolSpec("edit", "Edit a file", {"type": "object", "properties": {"path": {}}})


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def provider(server: ModelServer, sleeps: list[float]) -> Iterator[OpenAIProvider]:
    made = OpenAIProvider(ENTRY, KEY, base_url=server.openai_url, sleep=sleeps.append)
    yield made
    made.close()


def ask(prompt: str = "hi", **kw) -> ModelRequest:
    return ModelRequest(
        model="gpt-test",
        system="You are terse.",
        messages=[Message(role="user", content=prompt)],
        **kw,
    )


# --- Streaming replies ----------------------------------------------------------------


def test_text_arrives_in_chunks_and_is_reassembled(server, provider):
    server.add(text("Lorem ipsum dolor sit amet, consectetur.", chunk_size=6))

    events = list(provider.stream(ask()))

    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) == 7
    response = completed(events).response
    assert response.message.content == "".join(deltas) == "Lorem ipsum dolor sit amet, consectetur."
    assert response.stop_reason == "end_turn"
    assert response.model == "gpt-test"


def test_several_tool_calls_with_split_argument_json(server, provider):
    server.add(
        calls(
            ("bash", {"command": "ruff check . && pytest -q", "cwd": "/repo"}),
            ("edit", {"path": "src/x.py", "old": "a = 1", "new": "a = 2"}),
            ("bash", {"command": "git diff --stat"}),
        ),
    )

    events = list(provider.stream(ask(tools=[BASH, EDIT])))

    started = [(e.id, e.name) for e in events if isinstance(e, ToolCallStarted)]
    assert started == [("call_1", "bash"), ("call_2", "edit"), ("call_3", "bash")]
    response = completed(events).response
    assert response.message.tool_calls == [
        ToolCall(
            id="call_1",
            name="bash",
            arguments={"command": "ruff check . && pytest -q", "cwd": "/repo"},
        ),
        ToolCall(
            id="call_2", name="edit", arguments={"path": "src/x.py", "old": "a = 1", "new": "a = 2"}
        ),
        ToolCall(id="call_3", name="bash", arguments={"command": "git diff --stat"}),
    ]
    assert response.message.content == ""
    assert response.stop_reason == "tool_use"


def test_reasoning_content_streams_as_thinking(server, provider):
    server.add(text("42", thinking="Six times seven."))

    events = list(provider.stream(ask(reasoning="high")))

    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "Six times seven."
    assert completed(events).response.message.thinking == "Six times seven."
    assert server.requests[0].body["reasoning_effort"] == "high"


def test_usage_includes_cached_prompt_tokens(server, provider):
    server.add(text("ok", usage=(1500, 12, 1024)))

    usage = collect(provider.stream(ask())).usage

    assert usage == Usage(input_tokens=1500, output_tokens=12, cache_read_tokens=1024)


def test_arguments_that_are_not_json_become_an_arguments_error(server, provider):
    server.add(Reply(tool_calls=[("bash", {})], raw_arguments='{"command": ls}'))

    call = collect(provider.stream(ask(tools=[BASH]))).message.tool_calls[0]

    assert call.arguments == {}
    assert "not valid JSON" in call.arguments_error and '{"command": ls}' in call.arguments_error


def test_max_tokens_stop_is_normalized(server, provider):
    server.add(text("cut o", stop_reason="max_tokens"))

    assert collect(provider.stream(ask())).stop_reason == "max_tokens"


# --- Request shape --------------------------------------------------------------------


def test_request_body_shape(server, provider):
    server.add(text("ok"))
    history = [
        Message(role="user", content="Fix it."),
        Message(
            role="assistant",
            content="",
            tool_calls=[ToolCall(id="c1", name="bash", arguments={"command": "pytest"})],
        ),
        Message(role="tool", content="2 failed", tool_call_id="c1", is_error=True),
        Message(
            role="assistant",
            content="Trying again.",
            tool_calls=[ToolCall(id="c2", name="edit", arguments={"path": "a"})],
        ),
        Message(role="tool", content="edited", tool_call_id="c2"),
        Message(role="user", content="[loop-guard] Change approach."),
    ]
    request = ModelRequest(
        model="gpt-test", system="You are caretz.", messages=history, tools=[BASH, EDIT]
    )

    collect(provider.stream(request))

    recorded = server.requests[0]
    assert recorded.path == "/v1/chat/completions"
    assert recorded.headers["authorization"] == f"Bearer {KEY}"
    body = recorded.body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 8192 and "max_completion_tokens" not in body
    assert (
        "reasoning_effort" not in body
        and "tool_choice" not in body
        and "response_format" not in body
    )
    assert body["tools"][0] == {
        "type": "function",
        "function": {"name": "bash", "description": "Run a command", "parameters": BASH.parameters},
    }
    assert body["messages"] == [
        {"role": "system", "content": "You are caretz."},
        {"role": "user", "content": "Fix it."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "pytest"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "2 failed"},
        {
            "role": "assistant",
            "content": "Trying again.",
            "tool_calls": [
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "edit", "arguments": '{"path": "a"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "edited"},
        {"role": "user", "content": "[loop-guard] Change approach."},
    ]


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("required", "required"),
        ("bash", {"type": "function", "function": {"name": "bash"}}),
    ],
)
def test_tool_choice(server, provider, choice, wire):
    server.add(text("ok"))

    collect(provider.stream(ask(tools=[BASH], tool_choice=choice)))

    assert server.requests[0].body["tool_choice"] == wire


def test_tool_choice_none_sends_no_tools(server, provider):
    server.add(text("ok"))

    collect(provider.stream(ask(tools=[BASH], tool_choice="none")))

    body = server.requests[0].body
    assert "tools" not in body
    assert "tool_choice" not in body


def test_response_schema_becomes_response_format(server, provider):
    schema = {"type": "object", "properties": {"stuck": {"type": "boolean"}}, "required": ["stuck"]}
    server.add(text('{"stuck": true}'))

    collect(provider.stream(ask(response_schema=schema, reasoning="low")))

    body = server.requests[0].body
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "reply", "schema": schema},
    }
    assert body["reasoning_effort"] == "low"


def test_the_official_api_gets_max_completion_tokens():
    official = OpenAIProvider(ENTRY, KEY)
    local = OpenAIProvider(BUILTIN_PROVIDERS["ollama"], None)

    assert official.url == "https://api.openai.com/v1/chat/completions"
    assert official.build_body(ask(max_tokens=100))["max_completion_tokens"] == 100
    assert "max_tokens" not in official.build_body(ask())
    assert local.build_body(ask(max_tokens=100))["max_tokens"] == 100


def test_extra_body_merges_entry_then_request_and_entry_headers_are_sent(server):
    entry = ProviderEntry(
        name="vllm",
        protocol="openai",
        base_url=server.openai_url,
        api_key_env=None,
        headers={"x-tenant": "acme"},
        extra_body={"temperature": 0.2, "top_p": 0.9},
    )
    server.add(text("ok"))

    collect(create_provider(entry, None).stream(ask(extra_body={"temperature": 0.7, "seed": 1})))

    recorded = server.requests[0]
    assert (
        recorded.body["temperature"] == 0.7
        and recorded.body["top_p"] == 0.9
        and recorded.body["seed"] == 1
    )
    assert recorded.headers["x-tenant"] == "acme"
    assert "authorization" not in recorded.headers


def test_registry_creates_an_openai_provider_and_rejects_unknown_protocols(server):
    made = create_provider(BUILTIN_PROVIDERS["groq"], KEY, base_url=server.openai_url)
    assert isinstance(made, OpenAIProvider) and made.name == "groq"

    odd = ProviderEntry(name="odd", protocol="gemini", base_url="https://example.invalid")  # type: ignore[arg-type]
    with pytest.raises(
        ProviderError, match="unknown protocol 'gemini'; use one of: anthropic, openai"
    ):
        create_provider(odd, None)


# --- Retries and errors ---------------------------------------------------------------


def test_rate_limit_is_retried_after_the_servers_retry_after(server, provider, sleeps):
    server.add(error(429, "Rate limit reached", retry_after=2), text("done"))

    events = list(provider.stream(ask()))

    assert sleeps == [2.0]
    assert [e for e in events if isinstance(e, Retrying)] == [
        Retrying(1, 2.0, "HTTP 429 rate_limit_error: Rate limit reached")
    ]
    assert completed(events).response.message.content == "done"


def test_server_errors_exhaust_retries(server, sleeps):
    server.add(*[error(502, "bad gateway")] * 4)
    provider = OpenAIProvider(
        ENTRY, KEY, base_url=server.openai_url, max_retries=3, sleep=sleeps.append
    )

    with pytest.raises(ProviderError) as raised:
        collect(provider.stream(ask()))

    assert (
        str(raised.value) == "openai: gave up after 4 attempts: HTTP 502 server_error: bad gateway"
    )
    assert sleeps == [1.0, 2.0, 4.0]


def test_running_out_of_script_fails_fast_and_says_why(server, sleeps):
    provider = OpenAIProvider(ENTRY, KEY, base_url=server.openai_url, sleep=sleeps.append)

    with pytest.raises(ProviderError, match="no scripted reply left for model gpt-test"):
        collect(provider.stream(ask()))

    assert sleeps == [0.0] * 4


def test_rejected_key_names_the_env_var_and_hides_the_key(server, provider):
    server.add(error(401, f"Incorrect API key provided: {KEY}."))

    with pytest.raises(ProviderError) as raised:
        collect(provider.stream(ask()))

    assert str(raised.value).startswith(
        "openai rejected the API key (HTTP 401): check OPENAI_API_KEY"
    )
    assert KEY not in str(raised.value)


def test_forbidden_without_an_env_var_points_at_the_provider(server):
    server.add(error(403, "nope"))
    provider = OpenAIProvider(
        ProviderEntry(name="box", protocol="openai", base_url=server.openai_url), None
    )

    with pytest.raises(
        ProviderError, match=r"box rejected the API key \(HTTP 403\): check the API key configured"
    ):
        collect(provider.stream(ask()))


@pytest.fixture
def no_retries(server: ModelServer, sleeps: list[float]) -> Iterator[OpenAIProvider]:
    made = OpenAIProvider(
        ENTRY, KEY, base_url=server.openai_url, max_retries=0, sleep=sleeps.append
    )
    yield made
    made.close()


def test_a_dropped_stream_after_output_raises_with_the_partial_reply(server, no_retries):
    # role chunk, then two text chunks, then the connection drops.
    server.add(text("0123456789", chunk_size=3, drop_after_events=3))

    with pytest.raises(ProviderError) as raised:
        collect(no_retries.stream(ask()))

    assert "broke off mid-stream" in str(raised.value)
    assert raised.value.partial.content == "012345"
    assert len(server.requests) == 1


def test_a_dropped_stream_after_output_is_asked_again(server, provider, sleeps):
    server.add(text("0123456789", chunk_size=3, drop_after_events=3), text("0123456789"))

    events = list(provider.stream(ask()))

    retry = next(e for e in events if isinstance(e, Retrying))
    assert retry.discarded is not None and retry.discarded.content == "012345"
    assert completed(events).response.message.content == "0123456789"
    assert sleeps == [1.0] and len(server.requests) == 2


def test_an_error_object_in_the_stream_raises_with_the_partial_reply(server, no_retries):
    server.add(text("half", chunk_size=10, error_after_events=2, error_message="upstream died"))

    with pytest.raises(ProviderError) as raised:
        collect(no_retries.stream(ask()))

    assert "server_error: upstream died" in str(raised.value)
    assert raised.value.partial.content == "half"


def test_closing_the_stream_early_aborts_it_and_the_provider_still_works(server, provider):
    server.add(text("token " * 2000, chunk_size=6), text("next"))

    stream = provider.stream(ask())
    assert isinstance(next(stream), TextDelta)
    stream.close()

    with pytest.raises(StopIteration):
        next(stream)
    assert collect(provider.stream(ask())).message.content == "next"


# --- Dialects the parser accepts --------------------------------------------------------


def feed(parser: OpenAIParser, *chunks: dict | str) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    for chunk in chunks:
        data = chunk if isinstance(chunk, str) else json.dumps(chunk)
        events.extend(parser.feed(SSEEvent("", data)))
    return events


def test_parser_accepts_calls_without_index_reasoning_field_and_stop_with_calls():
    parser = OpenAIParser()
    call = {"id": "x1", "function": {"name": "bash", "arguments": {"command": "ls"}}}
    events = feed(
        parser,
        {"model": "qwen3", "choices": [{"delta": {"reasoning": "hm"}}]},
        {"choices": [{"delta": {"tool_calls": [call]}}]},
        {
            "choices": [
                {
                    "delta": {
                        "tool_calls": [{"id": "x2", "function": {"name": "read", "arguments": ""}}]
                    }
                }
            ]
        },
        {"choices": [{"delta": {"tool_calls": [{"function": {"arguments": '{"path": "a"}'}}]}}]},
        {"choices": [{"delta": {}, "finish_reason": "stop"}]},
        {
            "choices": [],
            "usage": {"prompt_tokens": 9, "completion_tokens": 2, "prompt_cache_hit_tokens": 4},
        },
        "[DONE]",
    )

    assert events[0] == ThinkingDelta("hm")
    assert [e for e in events if isinstance(e, ToolCallStarted)] == [
        ToolCallStarted("x1", "bash"),
        ToolCallStarted("x2", "read"),
    ]
    response = parser.draft.response("asked", OpenAIProvider.stop_aliases)
    assert parser.done
    assert [(c.name, c.arguments) for c in response.message.tool_calls] == [
        ("bash", {"command": "ls"}),
        ("read", {"path": "a"}),
    ]
    assert response.stop_reason == "tool_use"
    assert response.model == "qwen3"
    assert response.usage == Usage(input_tokens=9, output_tokens=2, cache_read_tokens=4)


def test_parser_invents_an_id_when_the_server_sends_none():
    parser = OpenAIParser()
    events = feed(
        parser,
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"name": "bash"}}]}}]},
    )

    (started,) = events
    assert started.id.startswith("call_") and len(started.id) > 5
    assert parser.draft.response("m", {}).message.tool_calls[0].id == started.id


def test_sse_framing_skips_comments_and_joins_multiline_data():
    lines = [": OPENROUTER PROCESSING", "", "event: x", "data: a", "data: b", "", "data: [DONE]"]

    assert list(iter_sse(lines)) == [SSEEvent("x", "a\nb"), SSEEvent("", "[DONE]")]


def test_a_server_that_does_not_stream_gets_a_clear_error(server, provider, sleeps):
    server.add(text("whole reply"))

    with pytest.raises(ProviderError, match="answered with JSON instead of an event stream"):
        collect(provider.stream(ask(extra_body={"stream": False})))

    assert sleeps == []


def test_long_bad_arguments_are_quoted_cut_to_200_characters(server, provider):
    server.add(Reply(tool_calls=[("bash", {})], raw_arguments='{"command": ' + "x" * 400))

    call = collect(provider.stream(ask(tools=[BASH]))).message.tool_calls[0]

    quoted = call.arguments_error.split(": ", 1)[1]
    assert len(quoted) == 200 and quoted.endswith("…") and quoted.startswith('{"command": xxx')
