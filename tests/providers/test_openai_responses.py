"""The OpenAI Responses provider against the loopback model server."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

from caretz.messages import Message, ModelRequest, ToolCall, ToolSpec, Usage
from caretz.providers.base import (
    ProviderError,
    Retrying,
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
    collect,
)
from caretz.providers.openai_responses import ResponsesParser, ResponsesProvider
from caretz.providers.registry import BUILTIN_PROVIDERS, create_provider, entry_for_model
from caretz.providers.resolve import resolve_model
from caretz.providers.sse import SSEEvent, StreamFailure
from tests.modelserver import ModelServer, Reply, calls, error, text
from tests.providers.streams import completed

KEY = "sk-proj-test-0123456789"
ENTRY = BUILTIN_PROVIDERS["openai"]
BASH = ToolSpec("bash", "Run a command", {"type": "object", "properties": {"command": {}}})


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def provider(server: ModelServer, sleeps: list[float]) -> Iterator[ResponsesProvider]:
    made = ResponsesProvider(ENTRY, KEY, base_url=server.openai_url, sleep=sleeps.append)
    yield made
    made.close()


def ask(*messages: Message, **kw) -> ModelRequest:
    return ModelRequest(
        model="gpt-5-codex",
        system="You are terse.",
        messages=list(messages) or [Message(role="user", content="hi")],
        **kw,
    )


# --- Streaming replies ----------------------------------------------------------------


def test_text_streams_and_is_reassembled(server, provider):
    server.add(text("Lorem ipsum dolor sit amet.", chunk_size=5))

    events = list(provider.stream(ask()))

    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) == 6
    response = completed(events).response
    assert response.message.content == "Lorem ipsum dolor sit amet."
    assert response.stop_reason == "end_turn" and response.model == "gpt-5-codex"


def test_function_calls_with_split_arguments(server, provider):
    server.add(calls(("bash", {"command": "pytest -q"}), ("bash", {"command": "git status"})))

    events = list(provider.stream(ask(tools=[BASH])))

    started = [(e.id, e.name) for e in events if isinstance(e, ToolCallStarted)]
    assert started == [("call_1", "bash"), ("call_2", "bash")]
    response = completed(events).response
    assert response.message.tool_calls == [
        ToolCall(id="call_1", name="bash", arguments={"command": "pytest -q"}),
        ToolCall(id="call_2", name="bash", arguments={"command": "git status"}),
    ]
    assert response.stop_reason == "tool_use"


def test_reasoning_summary_is_thinking_and_the_encrypted_item_is_kept(server, provider):
    server.add(text("42", thinking="Six times seven.", encrypted_reasoning="gAAAA-opaque"))

    events = list(provider.stream(ask(reasoning="high")))

    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "Six times seven."
    message = completed(events).response.message
    assert message.thinking == "Six times seven."
    (item,) = message.reasoning_items
    assert item["type"] == "reasoning" and item["encrypted_content"] == "gAAAA-opaque"
    assert item["summary"] == [{"type": "summary_text", "text": "Six times seven."}]
    assert server.requests[0].body["reasoning"] == {"effort": "high", "summary": "auto"}
    # The item survives the session log's round trip unchanged.
    assert Message.from_dict(json.loads(json.dumps(message.to_dict()))) == message


def test_usage_has_cached_and_reasoning_tokens(server, provider):
    server.add(text("ok", thinking="hmm", usage=(1500, 40, 1024)))

    usage = collect(provider.stream(ask())).usage

    assert usage == Usage(
        input_tokens=1500, output_tokens=40, cache_read_tokens=1024, reasoning_tokens=3
    )
    assert Usage.from_dict(usage.to_dict()) == usage


def test_an_incomplete_response_stops_at_max_tokens(server, provider):
    server.add(text("cut o", stop_reason="max_tokens"))

    assert collect(provider.stream(ask())).stop_reason == "max_tokens"


# --- Request shape --------------------------------------------------------------------


def test_request_body_is_stateless_and_sends_reasoning_back_as_received(server, provider):
    server.add(text("ok"))
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc-1"}
    history = [
        Message(role="user", content="Fix it."),
        Message(
            role="assistant",
            content="Running the tests.",
            tool_calls=[ToolCall(id="call_9", name="bash", arguments={"command": "pytest"})],
            reasoning_items=[reasoning],
        ),
        Message(role="tool", content="2 failed", tool_call_id="call_9", is_error=True),
    ]

    collect(provider.stream(ask(*history, tools=[BASH])))

    recorded = server.requests[0]
    assert recorded.path == "/v1/responses"
    assert recorded.headers["authorization"] == f"Bearer {KEY}"
    body = recorded.body
    assert body["store"] is False and body["stream"] is True
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["instructions"] == "You are terse." and body["max_output_tokens"] == 8192
    assert "reasoning" not in body and "tool_choice" not in body
    assert body["tools"] == [
        {
            "type": "function",
            "name": "bash",
            "description": "Run a command",
            "parameters": BASH.parameters,
            "strict": False,
        }
    ]
    assert body["input"] == [
        {"role": "user", "content": "Fix it."},
        reasoning,
        {"role": "assistant", "content": "Running the tests."},
        {
            "type": "function_call",
            "call_id": "call_9",
            "name": "bash",
            "arguments": '{"command": "pytest"}',
        },
        {"type": "function_call_output", "call_id": "call_9", "output": "2 failed"},
    ]


def test_the_final_report_keeps_tools_declared_but_forbids_them(server, provider):
    server.add(text("Report."))

    collect(provider.stream(ask(tools=[BASH], tool_choice="none")))

    body = server.requests[0].body
    assert body["tool_choice"] == "none" and [t["name"] for t in body["tools"]] == ["bash"]


def test_a_named_tool_choice_and_a_response_schema(server, provider):
    server.add(text("{}"))
    schema = {"type": "object", "properties": {"stuck": {"type": "boolean"}}}

    collect(provider.stream(ask(tools=[BASH], tool_choice="bash", response_schema=schema)))

    body = server.requests[0].body
    assert body["tool_choice"] == {"type": "function", "name": "bash"}
    assert body["text"]["format"]["schema"] == schema


# --- Errors and retries ---------------------------------------------------------------


def test_a_429_is_retried_after_the_servers_pause(server, provider, sleeps):
    server.add(error(429, "Rate limit reached", retry_after=3), text("ok"))

    events = list(provider.stream(ask()))

    (retry,) = [e for e in events if isinstance(e, Retrying)]
    assert retry.delay_s == 3 and "HTTP 429" in retry.reason and sleeps == [3]
    assert completed(events).response.message.content == "ok"


def test_a_transient_error_event_is_retried(server, provider, sleeps):
    server.add(text("Partial answer", error_after_events=3), text("Whole answer"))

    events = list(provider.stream(ask()))

    (retry,) = [e for e in events if isinstance(e, Retrying)]
    assert "server_error: scripted error" in retry.reason
    assert completed(events).response.message.content == "Whole answer"


def test_a_lasting_error_event_fails_in_one_line(server, provider):
    server.add(Reply(text="x", error_after_events=2, error_code="invalid_prompt"))

    with pytest.raises(ProviderError) as failure:
        collect(provider.stream(ask()))

    assert str(failure.value) == "openai: invalid_prompt: scripted error"
    assert len(server.requests) == 1


def test_a_failed_response_carries_its_error():
    parser = ResponsesParser()
    failed = {"type": "response.failed", "response": {"status": "failed", "error": {}}}
    failed["response"]["error"] = {"code": "rate_limit_exceeded", "message": "slow down"}

    with pytest.raises(StreamFailure) as failure:
        list(parser.feed(SSEEvent("response.failed", json.dumps(failed))))

    assert failure.value.reason == "rate_limit_exceeded: slow down" and failure.value.retryable


def test_arguments_for_an_unknown_call_are_a_stream_failure():
    parser = ResponsesParser()
    delta = {"type": "response.function_call_arguments.delta", "output_index": 4, "delta": "{"}

    with pytest.raises(StreamFailure, match="never started"):
        list(parser.feed(SSEEvent("", json.dumps(delta))))


# --- Which protocol a model speaks ----------------------------------------------------


@pytest.mark.parametrize(
    ("model", "protocol"),
    [
        ("gpt-5-codex", "responses"),
        ("gpt-5.1-codex-max", "responses"),
        ("codex-mini-latest", "responses"),
        ("o3-pro", "responses"),
        ("gpt-5-pro", "responses"),
        ("gpt-5", "openai"),
        ("gpt-4.1-mini", "openai"),
        ("o3", "openai"),
    ],
)
def test_the_builtin_openai_entry_picks_the_protocol_per_model(model, protocol):
    assert entry_for_model(ENTRY, model).protocol == protocol


def test_a_providers_own_entry_decides_its_protocol():
    file_entry = resolve_model("mine/gpt-5-codex", {"mine": BUILTIN_PROVIDERS["ollama"]}, None, {})
    assert file_entry.entry.protocol == "openai"  # no model table: as configured
    builtin = resolve_model("openai/gpt-5-codex", BUILTIN_PROVIDERS, None, {})
    assert builtin.entry.protocol == "responses"
    assert isinstance(create_provider(builtin.entry, KEY), ResponsesProvider)


def test_the_module_is_imported_only_when_the_protocol_is_used():
    script = (
        "import sys\n"
        "from caretz.providers.registry import BUILTIN_PROVIDERS, create_provider\n"
        "from caretz.providers.resolve import resolve_model\n"
        "chat = resolve_model('openai/gpt-5', BUILTIN_PROVIDERS, None, {})\n"
        "create_provider(chat.entry, 'k')\n"
        "assert 'caretz.providers.openai_responses' not in sys.modules\n"
        "codex = resolve_model('openai/gpt-5-codex', BUILTIN_PROVIDERS, None, {})\n"
        "create_provider(codex.entry, 'k')\n"
        "assert 'caretz.providers.openai_responses' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
