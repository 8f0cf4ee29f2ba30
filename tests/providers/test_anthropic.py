"""The Anthropic provider against the loopback model server."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from caretz.messages import Message, ModelRequest, ToolCall, ToolSpec, Usage
from caretz.providers.anthropic import AnthropicParser, AnthropicProvider
from caretz.providers.base import (
    ProviderError,
    Retrying,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
    collect,
)
from caretz.providers.registry import BUILTIN_PROVIDERS, ProviderEntry, create_provider
from caretz.providers.retries import retry_after_seconds, retry_delay
from caretz.providers.sse import SSEEvent
from tests.modelserver import ModelServer, Reply, calls, error, text, tool
from tests.providers.streams import completed

KEY = "sk-ant-test-0123456789"
ENTRY = BUILTIN_PROVIDERS["anthropic"]
BASH = ToolSpec("bash", "Run a command", {"type": "object", "properties": {"command": {}}})
READ = ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {}}})


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def provider(server: ModelServer, sleeps: list[float]) -> Iterator[AnthropicProvider]:
    made = AnthropicProvider(ENTRY, KEY, base_url=server.url + "/", sleep=sleeps.append)
    yield made
    made.close()


def ask(prompt: str = "hi", **kw) -> ModelRequest:
    return ModelRequest(
        model="claude-test",
        system="You are terse.",
        messages=[Message(role="user", content=prompt)],
        **kw,
    )


def run(provider: AnthropicProvider, request: ModelRequest) -> list[StreamEvent]:
    return list(provider.stream(request))


# --- Streaming replies ----------------------------------------------------------------


def test_text_arrives_in_chunks_and_is_reassembled(server, provider):
    server.add(text("The quick brown fox jumps over the lazy dog.", chunk_size=5))

    events = run(provider, ask())

    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) == 9
    response = completed(events).response
    assert (
        response.message.content
        == "".join(deltas)
        == "The quick brown fox jumps over the lazy dog."
    )
    assert response.message.role == "assistant"
    assert response.stop_reason == "end_turn"
    assert response.model == "claude-test"


def test_several_tool_calls_with_split_argument_json(server, provider):
    server.add(
        calls(
            ("bash", {"command": "pytest -x tests/test_a.py", "timeout": 60}),
            ("read", {"path": "src/app.py", "lines": [1, 40]}),
            text="Running the tests.",
        ),
    )

    events = run(provider, ask(tools=[BASH, READ]))

    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [(s.id, s.name) for s in started] == [("call_1", "bash"), ("call_2", "read")]
    message = completed(events).response.message
    assert message.content == "Running the tests."
    assert message.tool_calls == [
        ToolCall(
            id="call_1",
            name="bash",
            arguments={"command": "pytest -x tests/test_a.py", "timeout": 60},
        ),
        ToolCall(id="call_2", name="read", arguments={"path": "src/app.py", "lines": [1, 40]}),
    ]
    assert completed(events).response.stop_reason == "tool_use"


def test_thinking_streams_and_keeps_its_signature(server, provider):
    server.add(text("Answer.", thinking="First, consider the failing test output."))

    events = run(provider, ask(reasoning="medium"))

    thinking = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert thinking == "First, consider the failing test output."
    message = completed(events).response.message
    assert message.thinking == thinking
    assert message.thinking_signature == "scripted-signature"
    assert server.requests[0].body["thinking"] == {"type": "enabled", "budget_tokens": 4096}


def test_usage_includes_cache_tokens(server, provider):
    server.add(text("ok", usage=(42, 17, 3000, 250)))

    usage = collect(provider.stream(ask())).usage

    assert usage == Usage(
        input_tokens=42, output_tokens=17, cache_read_tokens=3000, cache_write_tokens=250
    )


def test_arguments_that_are_not_json_become_an_arguments_error(server, provider):
    broken = '{"command": "ls' + "x" * 300
    server.add(Reply(tool_calls=[("bash", {}), ("read", {"path": "a"})], raw_arguments=broken))

    calls_made = collect(provider.stream(ask(tools=[BASH, READ]))).message.tool_calls

    bad, good = calls_made
    assert bad.arguments == {}
    assert "not valid JSON" in bad.arguments_error
    assert '{"command": "lsxxx' in bad.arguments_error
    assert len(bad.arguments_error) < 300  # the raw text is cut to 200 characters
    assert good.arguments == {"path": "a"} and good.arguments_error is None


def test_arguments_that_are_not_an_object_become_an_arguments_error(server, provider):
    server.add(Reply(tool_calls=[("bash", {})], raw_arguments="[1, 2]"))

    call = collect(provider.stream(ask(tools=[BASH]))).message.tool_calls[0]

    assert call.arguments == {}
    assert "must be a JSON object" in call.arguments_error and "[1, 2]" in call.arguments_error


def test_tool_call_without_arguments_gets_an_empty_dict(server, provider):
    server.add(tool("list_files"))

    call = collect(provider.stream(ask())).message.tool_calls[0]

    assert call.name == "list_files" and call.arguments == {} and call.arguments_error is None


# --- Request shape --------------------------------------------------------------------


def conversation() -> list[Message]:
    return [
        Message(role="user", content="Fix the failing test."),
        Message(
            role="assistant",
            content="Looking.",
            tool_calls=[
                ToolCall(id="t1", name="bash", arguments={"command": "pytest"}),
                ToolCall(id="t2", name="read", arguments={"path": "a.py"}),
            ],
            thinking="Run the tests first.",
            thinking_signature="sig-1",
        ),
        Message(role="tool", content="1 failed", tool_call_id="t1", is_error=True),
        Message(role="tool", content="print('a')", tool_call_id="t2"),
        Message(role="user", content="[loop-guard] Try a different approach."),
    ]


def test_request_body_has_cache_breakpoints_grouped_tool_results_and_the_note(server, provider):
    server.add(text("ok"))
    request = ModelRequest(
        model="claude-test",
        system="You are caretz.",
        messages=conversation(),
        tools=[BASH, READ],
        max_tokens=2048,
    )

    collect(provider.stream(request))

    recorded = server.requests[0]
    assert recorded.path == "/v1/messages"
    assert recorded.headers["x-api-key"] == KEY
    assert recorded.headers["anthropic-version"] == "2023-06-01"
    body = recorded.body
    assert body["model"] == "claude-test" and body["max_tokens"] == 2048 and body["stream"] is True
    assert body["system"] == [
        {"type": "text", "text": "You are caretz.", "cache_control": {"type": "ephemeral"}}
    ]
    assert [t["name"] for t in body["tools"]] == ["bash", "read"]
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][1] == {
        "name": "read",
        "description": "Read a file",
        "input_schema": READ.parameters,
        "cache_control": {"type": "ephemeral"},
    }
    assert "thinking" not in body and "tool_choice" not in body
    user, assistant, results, note = body["messages"]
    assert user == {"role": "user", "content": "Fix the failing test."}
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Run the tests first.", "signature": "sig-1"},
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "pytest"}},
            {"type": "tool_use", "id": "t2", "name": "read", "input": {"path": "a.py"}},
        ],
    }
    assert results["role"] == "user"
    first, second = results["content"]
    assert first == {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": "1 failed",
        "is_error": True,
    }
    # The newest stored turn carries the conversation's cache breakpoint; the note does not.
    assert second == {
        "type": "tool_result",
        "tool_use_id": "t2",
        "content": "print('a')",
        "is_error": False,
        "cache_control": {"type": "ephemeral"},
    }
    assert note == {"role": "user", "content": "[loop-guard] Try a different approach."}


def test_thinking_without_a_signature_is_not_sent_back(server, provider):
    server.add(text("ok"))
    history = [
        Message(role="user", content="a"),
        Message(role="assistant", content="b", thinking="unsigned"),
        Message(role="user", content="c"),
    ]

    collect(provider.stream(ModelRequest(model="m", system="", messages=history)))

    body = server.requests[0].body
    assert "system" not in body
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}}
    ]


@pytest.mark.parametrize(
    ("reasoning", "max_tokens", "budget", "sent_max"),
    [
        ("low", 8192, 1024, 8192),
        ("medium", 32000, 4096, 32000),
        ("medium", 2048, 1024, 2048),  # at most half of max_tokens
        ("high", 8192, 4096, 8192),
        ("low", 1024, 1024, 2048),  # below the API's floor: room is made
    ],
)
def test_reasoning_sets_a_thinking_budget_below_max_tokens(
    server, provider, reasoning, max_tokens, budget, sent_max
):
    server.add(text("ok"))

    collect(provider.stream(ask(reasoning=reasoning, max_tokens=max_tokens)))

    body = server.requests[0].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert body["max_tokens"] == sent_max > budget


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", {"type": "auto"}),
        ("required", {"type": "any"}),
        ("none", {"type": "none"}),
        ("bash", {"type": "tool", "name": "bash"}),
    ],
)
def test_tool_choice_maps_to_the_anthropic_shape(server, provider, choice, wire):
    server.add(text("ok"))

    collect(provider.stream(ask(tools=[BASH], tool_choice=choice)))

    assert server.requests[0].body["tool_choice"] == wire


def test_forced_tool_choice_turns_thinking_off(server, provider):
    server.add(text("ok"))

    collect(provider.stream(ask(tools=[BASH], tool_choice="bash", reasoning="high")))

    assert "thinking" not in server.requests[0].body


def test_response_schema_becomes_a_system_instruction(server, provider):
    server.add(text('{"stuck": false}'))
    schema = {"type": "object", "properties": {"stuck": {"type": "boolean"}}}

    collect(provider.stream(ask(response_schema=schema)))

    system = server.requests[0].body["system"]
    assert system[0] == {"type": "text", "text": "You are terse."}
    assert system[1]["text"].startswith("Answer with only a JSON object matching this schema: ")
    assert '"stuck": {"type": "boolean"}' in system[1]["text"]
    assert system[1]["cache_control"] == {"type": "ephemeral"}


def test_extra_body_and_headers_from_the_entry_and_request(server, sleeps):
    entry = ProviderEntry(
        name="proxy",
        protocol="anthropic",
        base_url=server.url,
        api_key_env="PROXY_KEY",
        headers={"x-team": "blue"},
        extra_body={"top_k": 5, "a": 1},
    )
    server.add(text("ok"))

    collect(create_provider(entry, None, sleep=sleeps.append).stream(ask(extra_body={"a": 2})))

    recorded = server.requests[0]
    assert recorded.body["top_k"] == 5 and recorded.body["a"] == 2
    assert recorded.headers["x-team"] == "blue"
    assert "x-api-key" not in recorded.headers


def test_registry_creates_an_anthropic_provider(server):
    made = create_provider(ENTRY, KEY, base_url=server.url, max_retries=0)

    assert isinstance(made, AnthropicProvider)
    assert made.name == "anthropic" and made.url == server.url + "/v1/messages"
    assert AnthropicProvider(ENTRY, KEY).url == "https://api.anthropic.com/v1/messages"


# --- Retries and errors ---------------------------------------------------------------


def test_rate_limit_is_retried_after_the_servers_retry_after(server, provider, sleeps):
    server.add(error(429, "slow down", retry_after=3), text("done"))

    events = run(provider, ask())

    assert sleeps == [3.0]
    retrying = [e for e in events if isinstance(e, Retrying)]
    assert retrying == [Retrying(1, 3.0, "HTTP 429 rate_limit_error: slow down")]
    assert completed(events).response.message.content == "done"
    assert len(server.requests) == 2


def test_retry_after_ms_is_honoured(server, provider, sleeps):
    server.add(Reply(status=503, headers={"retry-after-ms": "250"}), text("done"))

    collect(provider.stream(ask()))

    assert sleeps == [0.25]


def test_overload_exhausts_retries_with_backoff_and_a_clear_error(server, sleeps):
    server.add(*[error(529, "Overloaded")] * 3)
    provider = AnthropicProvider(
        ENTRY, KEY, base_url=server.url, max_retries=2, sleep=sleeps.append
    )

    with pytest.raises(ProviderError) as raised:
        collect(provider.stream(ask()))

    assert (
        str(raised.value)
        == "anthropic: gave up after 3 attempts: HTTP 529 overloaded_error: Overloaded"
    )
    assert raised.value.status == 529
    assert sleeps == [1.0, 2.0]
    assert len(server.requests) == 3


def test_rejected_key_names_the_env_var_and_hides_the_key(server, provider):
    server.add(error(401, f"invalid x-api-key {KEY}"))

    with pytest.raises(ProviderError) as raised:
        collect(provider.stream(ask()))

    message = str(raised.value)
    assert message.startswith("anthropic rejected the API key (HTTP 401): check ANTHROPIC_API_KEY")
    assert KEY not in message and KEY not in repr(raised.value.args)
    assert raised.value.status == 401
    assert len(server.requests) == 1  # not retried


def test_unknown_model_names_the_model_and_base_url(server, provider):
    server.add(error(404, "model: claude-nope"))

    with pytest.raises(ProviderError) as raised:
        collect(provider.stream(ask()))

    assert "'claude-test'" in str(raised.value) and server.url in str(raised.value)
    assert "model: claude-nope" in str(raised.value)


def test_a_bad_request_reports_the_servers_message_without_retrying(server, provider, sleeps):
    server.add(error(400, "max_tokens: must be at most 64000"))

    with pytest.raises(
        ProviderError, match="anthropic: HTTP 400 invalid_request_error: max_tokens: must be"
    ):
        collect(provider.stream(ask()))

    assert sleeps == [] and len(server.requests) == 1


@pytest.fixture
def no_retries(server: ModelServer, sleeps: list[float]) -> Iterator[AnthropicProvider]:
    made = AnthropicProvider(ENTRY, KEY, base_url=server.url, max_retries=0, sleep=sleeps.append)
    yield made
    made.close()


def test_a_dropped_stream_after_output_raises_with_the_partial_reply(server, no_retries, sleeps):
    # message_start, ping, content_block_start, then three text deltas.
    server.add(text("abcdefghijklmnopqrstuvwxyz", chunk_size=4, drop_after_events=6))
    seen: list[StreamEvent] = []

    with pytest.raises(ProviderError) as raised:
        seen.extend(no_retries.stream(ask()))

    assert "broke off mid-stream" in str(raised.value)
    assert raised.value.partial == Message(role="assistant", content="abcdefghijkl")
    assert [e.text for e in seen if isinstance(e, TextDelta)] == ["abcd", "efgh", "ijkl"]
    assert sleeps == [] and len(server.requests) == 1  # no retries left: not retried


def test_a_dropped_stream_after_output_is_asked_again_and_replaced(server, provider, sleeps):
    server.add(
        text("abcdefghijklmnopqrstuvwxyz", chunk_size=4, drop_after_events=6),
        text("the whole reply", chunk_size=4),
    )

    events = list(provider.stream(ask()))

    retry = next(e for e in events if isinstance(e, Retrying))
    assert retry.discarded == Message(role="assistant", content="abcdefghijkl")
    assert "broke off mid-stream" in retry.reason
    after = events[events.index(retry) + 1 :]
    assert "".join(e.text for e in after if isinstance(e, TextDelta)) == "the whole reply"
    assert completed(events).response.message.content == "the whole reply"
    assert sleeps == [1.0] and len(server.requests) == 2
    assert server.requests[1].body == server.requests[0].body  # the same request again


def test_a_stream_that_keeps_breaking_gives_up_with_the_last_partial_reply(server, sleeps):
    provider = AnthropicProvider(
        ENTRY, KEY, base_url=server.url, max_retries=2, sleep=sleeps.append
    )
    server.add(
        *[text(f"attempt {n} and more", chunk_size=9, drop_after_events=4) for n in (1, 2, 3)]
    )

    with pytest.raises(
        ProviderError, match="gave up after 3 attempts: the reply broke off"
    ) as raised:
        collect(provider.stream(ask()))

    assert raised.value.partial.content == "attempt 3"
    assert sleeps == [1.0, 2.0] and len(server.requests) == 3
    provider.close()


def test_a_drop_before_any_output_is_retried(server, provider, sleeps):
    server.add(text("lost", drop_after_events=2), text("second try"))

    response = collect(provider.stream(ask()))

    assert response.message.content == "second try"
    assert sleeps == [1.0]


def test_an_error_event_mid_stream_raises_with_the_partial_reply(server, no_retries):
    server.add(text("partial answer", chunk_size=100, error_after_events=4))

    with pytest.raises(ProviderError) as raised:
        collect(no_retries.stream(ask()))

    assert "overloaded_error: scripted error" in str(raised.value)
    assert raised.value.partial.content == "partial answer"


def test_an_overload_event_before_output_is_retried(server, provider, sleeps):
    server.add(Reply(text="x", error_after_events=1, error_message="Overloaded"), text("fine"))

    assert collect(provider.stream(ask())).message.content == "fine"
    assert sleeps == [1.0]


def test_connection_refused_is_retried_then_reported(sleeps):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = AnthropicProvider(
        ENTRY, KEY, base_url=f"http://127.0.0.1:{port}", max_retries=1, sleep=sleeps.append
    )

    with pytest.raises(
        ProviderError, match=r"gave up after 2 attempts: could not connect to http://127\.0\.0\.1"
    ):
        collect(provider.stream(ask()))

    assert sleeps == [1.0]


def test_a_slow_server_times_out(server, sleeps):
    server.add(text("late", delay_s=30))
    provider = AnthropicProvider(
        ENTRY, KEY, base_url=server.url, max_retries=0, timeout_s=0.2, sleep=sleeps.append
    )

    with pytest.raises(
        ProviderError, match=r"^anthropic: no answer from .* within 0\.2s \(firstByteTimeout\)$"
    ):
        collect(provider.stream(ask()))


def test_closing_the_stream_early_aborts_it_and_the_provider_still_works(server, provider):
    server.add(text("word " * 2000, chunk_size=5), text("next"))

    stream = provider.stream(ask())
    first = next(stream)
    stream.close()

    assert isinstance(first, TextDelta)
    with pytest.raises(StopIteration):
        next(stream)
    assert collect(provider.stream(ask())).message.content == "next"


# --- Helpers ----------------------------------------------------------------------------


def test_retry_after_accepts_seconds_and_http_dates():
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)

    assert retry_after_seconds({"retry-after": "7"}, now) == 7.0
    assert retry_after_seconds({"retry-after": "Thu, 01 Jan 2026 12:00:30 GMT"}, now) == 30.0
    assert retry_after_seconds({"retry-after": "Thu, 01 Jan 2026 11:00:00 GMT"}, now) == 0.0
    assert retry_after_seconds({"retry-after": "soon"}, now) is None
    assert retry_after_seconds({}, now) is None


def test_backoff_doubles_up_to_thirty_seconds_and_caps_long_hints():
    assert [retry_delay(n, {}) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]
    assert retry_delay(1, {"retry-after": "3600"}) == 60.0


def test_parser_falls_back_to_the_requested_model_and_keeps_raw_stop_reasons():
    parser = AnthropicParser()
    events = [
        SSEEvent(
            "message_start", '{"type": "message_start", "message": {"usage": {"input_tokens": 3}}}'
        ),
        SSEEvent("message_delta", '{"type": "message_delta", "delta": {"stop_reason": "refusal"}}'),
        SSEEvent("message_stop", '{"type": "message_stop"}'),
    ]
    for event in events:
        list(parser.feed(event))

    response = parser.draft.response("claude-asked", {})
    assert parser.done
    assert response.model == "claude-asked" and response.stop_reason == "refusal"
    assert response.usage.input_tokens == 3


def test_a_key_with_a_trailing_newline_is_trimmed(server):
    server.add(text("ok"))

    collect(AnthropicProvider(ENTRY, KEY + "\n", base_url=server.url).stream(ask()))

    assert server.requests[0].headers["x-api-key"] == KEY


@pytest.mark.parametrize("bad_key", ["sk-ant-in\nside", "sk-ant-curly’quote"])
def test_a_key_headers_cannot_carry_is_reported_without_quoting_it(server, bad_key):
    provider = AnthropicProvider(ENTRY, bad_key, base_url=server.url, max_retries=0)

    with pytest.raises(ProviderError) as raised:
        collect(provider.stream(ask()))

    assert "check ANTHROPIC_API_KEY" in str(raised.value)
    assert "sk-ant" not in str(raised.value)
    assert server.requests == []
