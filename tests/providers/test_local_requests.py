"""A provider's default tool choice and forced-call prefix, on the wire of both protocols."""

from __future__ import annotations

import dataclasses

import pytest

from caretz.messages import Message, ModelRequest, ToolSpec
from caretz.providers.base import ProviderError, collect
from caretz.providers.registry import (
    BUILTIN_PROVIDERS,
    ProviderEntry,
    RequestDefaults,
    create_provider,
    with_request_defaults,
)
from tests.modelserver import ModelServer, text, tool

BASH = ToolSpec("bash", "Run a command", {"type": "object", "properties": {"command": {}}})
PREFIX = "<tool_call>\n"
FORCING = ProviderEntry(
    name="smol",
    protocol="openai",
    base_url="http://127.0.0.1:9/v1",
    tool_choice="required",
    tool_call_prefix=PREFIX,
)


def ask(*, tools: bool = True, tool_choice: str | None = None, **kw) -> ModelRequest:
    return ModelRequest(
        model="smol",
        system="Be brief.",
        messages=[Message(role="user", content="list the files")],
        tools=[BASH] if tools else [],
        tool_choice=tool_choice,
        **kw,
    )


def test_a_forced_default_adds_the_prefix_as_a_trailing_reply() -> None:
    request = with_request_defaults(ask(), FORCING)

    assert request.tool_choice == "required"
    assert [(m.role, m.content) for m in request.messages[-2:]] == [
        ("user", "list the files"),
        ("assistant", PREFIX),
    ]


def test_the_requests_own_choice_wins_and_unforced_choices_get_no_prefix() -> None:
    for choice in ("none", "auto"):
        request = with_request_defaults(ask(tool_choice=choice), FORCING)
        assert request.tool_choice == choice
        assert request.messages[-1].role == "user"


def test_a_named_tool_is_forced_too() -> None:
    request = with_request_defaults(ask(tool_choice="bash"), FORCING)
    assert request.messages[-1] == Message(role="assistant", content=PREFIX)


def test_requests_without_tools_are_left_alone() -> None:
    original = ask(tools=False)
    assert with_request_defaults(original, FORCING) is original


def test_a_reply_already_started_is_not_prefixed_twice() -> None:
    started = ask()
    started.messages.append(Message(role="assistant", content="<tool_call>\n{"))
    assert with_request_defaults(started, FORCING).messages == started.messages


def test_the_original_request_is_not_changed() -> None:
    original = ask()
    with_request_defaults(original, FORCING)
    assert original.tool_choice is None and len(original.messages) == 1


def test_openai_wire_carries_the_default_choice_and_the_prefix(server: ModelServer) -> None:
    server.add(tool("bash", command="ls"))
    entry = dataclasses.replace(FORCING, base_url=server.openai_url)
    provider = create_provider(entry, None, max_retries=0)

    response = collect(provider.stream(ask()))

    assert isinstance(provider, RequestDefaults) and provider.name == "smol"
    body = server.requests[0].body
    assert body["tool_choice"] == "required"
    assert body["messages"][-1] == {"role": "assistant", "content": PREFIX}
    assert response.message.tool_calls[0].name == "bash"


def test_anthropic_wire_carries_the_default_choice_and_the_prefix(server: ModelServer) -> None:
    server.add(tool("bash", command="ls"))
    entry = dataclasses.replace(FORCING, protocol="anthropic", base_url=server.url)
    provider = create_provider(entry, None, max_retries=0)

    collect(provider.stream(ask()))

    body = server.requests[0].body
    assert body["tool_choice"] == {"type": "any"}
    last = body["messages"][-1]
    assert last["role"] == "assistant" and last["content"][0]["text"] == PREFIX


def test_a_final_report_without_tools_keeps_its_none(server: ModelServer) -> None:
    server.add(text("Here is what I changed."))
    entry = dataclasses.replace(FORCING, base_url=server.openai_url)

    collect(create_provider(entry, None, max_retries=0).stream(ask(tool_choice="none")))

    body = server.requests[0].body
    assert "tool_choice" not in body and "tools" not in body
    assert body["messages"][-1]["role"] == "user"


def test_a_provider_without_defaults_is_not_wrapped(server: ModelServer) -> None:
    made = create_provider(BUILTIN_PROVIDERS["ollama"], None, base_url=server.openai_url)
    assert not isinstance(made, RequestDefaults)


def test_the_wrapper_passes_other_attributes_through(server: ModelServer) -> None:
    entry = dataclasses.replace(FORCING, base_url=server.openai_url)
    provider = create_provider(entry, None)
    assert provider.base_url == server.openai_url  # type: ignore[attr-defined]
    provider.close()  # type: ignore[attr-defined]


def test_an_unstarted_local_entry_cannot_make_a_provider() -> None:
    with pytest.raises(ProviderError, match="runs a local model"):
        create_provider(BUILTIN_PROVIDERS["local"], None)
