"""The provider's own web search through the real CLI and the loopback model server: the
request offers the tool, and the search's blocks (Anthropic) or items (OpenAI Responses)
go back in the turn's next request and after `--continue`."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import Caretz
from tests.e2e.test_responses import RESPONSES
from tests.modelserver import ModelServer, Reply, text

SEARCH = {"profiles": {"general": {"webSearch": {"server": True, "maxUses": 3}}}}
QUERY = "httpx default timeout"
HITS = [("https://www.python-httpx.org/advanced/timeouts/", "Timeouts - HTTPX")]


def searched(**extra: Any) -> Reply:
    return Reply(web_searches=[(QUERY, HITS)], **extra)


def block_types(message: dict[str, Any]) -> list[str]:
    return [block["type"] for block in message["content"]]


def test_anthropic_search_blocks_go_back_in_the_turn_and_after_continue(
    caretz: Caretz, server: ModelServer
):
    caretz.write_config(SEARCH)
    server.add(
        searched(text="Let me check the project too.", tool_calls=[("glob", {"pattern": "*"})]),
        text("The default is 5 seconds."),
    )

    run = caretz("-p", "what is httpx's default timeout?")

    assert run.code == 0, run.stderr
    assert "The default is 5 seconds." in run.stdout
    first, second = server.requests
    assert first.body["tools"][0] == {
        "type": "web_search_20250305",
        "name": "web_search",
        "max_uses": 3,
    }
    assert "web_search searches the web (the model provider's own search)" in first.system
    reply = second.messages[1]
    assert block_types(reply) == ["server_tool_use", "web_search_tool_result", "text", "tool_use"]
    call, result = reply["content"][:2]
    assert call == {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": {"query": QUERY},
    }
    assert result["tool_use_id"] == "srvtoolu_1"
    assert [(r["url"], r["encrypted_content"]) for r in result["content"]] == [
        (HITS[0][0], "enc-srvtoolu_1-1")
    ]

    server.add(text("Still 5 seconds."))
    resumed = caretz("-p", "are you sure?", "--continue")

    assert resumed.code == 0, resumed.stderr
    after = server.requests[2].messages[1]
    assert after["content"][:2] == [call, result]


def test_openai_responses_search_items_go_back_after_continue(caretz: Caretz, server):
    caretz.write_config(SEARCH)
    server.add(searched(text="It is 5 seconds."))

    run = caretz("-p", "what is httpx's default timeout?", env=RESPONSES)

    assert run.code == 0, run.stderr
    (first,) = server.requests
    assert first.body["tools"][0] == {"type": "web_search"}
    assert "web_search" in first.tool_names

    server.add(text("Yes."))
    resumed = caretz("-p", "sure?", "--continue", env=RESPONSES)

    assert resumed.code == 0, resumed.stderr
    items = server.requests[1].input
    assert [item.get("type") or item["role"] for item in items] == [
        "user",
        "web_search_call",
        "assistant",
        "user",
    ]
    assert items[1] == {
        "type": "web_search_call",
        "id": "ws_1",
        "status": "completed",
        "action": {"type": "search", "query": QUERY},
    }


def test_without_a_search_the_request_and_the_prompt_do_not_mention_one(caretz, server):
    # The loopback URL is not Anthropic's own, and no backend is configured.
    server.add(text("No search here."))

    run = caretz("-p", "hello")

    assert run.code == 0, run.stderr
    (request,) = server.requests
    assert "web_search" not in request.tool_names
    assert "web_search" not in request.system
    assert "web_fetch" in request.tool_names and "web_fetch reads a URL" in request.system


def test_a_model_switch_in_the_interactive_session_brings_the_search_with_it(
    terminal, caretz: Caretz, server: ModelServer
):
    caretz.write_config(SEARCH)
    server.add(text("Answer from the other Claude."), model="claude-other")
    server.add(text("Answer from the chat model."), model="gpt-4.1")
    term = terminal(env={"OPENAI_API_KEY": "sk-openai-test-0123456789"})

    term.type("/model anthropic/claude-other")
    term.expect("model: anthropic/claude-other; the conversation carries on")
    term.type("search for it")
    term.expect("Answer from the other Claude.")
    term.type("/model openai/gpt-4.1")  # Chat Completions: no search of its own
    term.expect("model: openai/gpt-4.1; the conversation carries on")
    term.type("and now?")
    term.expect("Answer from the chat model.")
    term.ctrl_d()

    claude, chat = server.requests
    assert claude.body["tools"][0]["type"] == "web_search_20250305"
    assert "web_search searches the web (the model provider's own search)" in claude.system
    assert "web_search" not in chat.tool_names and "web_search" not in chat.system
