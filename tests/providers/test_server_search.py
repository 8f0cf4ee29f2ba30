"""The provider's own web search in the request bodies, and its blocks on the message:
offered only with tools, kept through the session log, sent back in order."""

from __future__ import annotations

import json

from caretz.messages import Message, ModelRequest, ToolSpec
from caretz.providers import anthropic, openai_responses
from caretz.providers.anthropic import AnthropicParser
from caretz.providers.sse import SSEEvent

TOOLS = [ToolSpec("read", "Read a file", {"type": "object", "properties": {}})]
CALL = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
RESULT = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": [{"type": "web_search_result", "url": "https://a.example/", "title": "A",
                 "encrypted_content": "enc-1", "page_age": None}],
}  # fmt: skip


def request(tools: list[ToolSpec]) -> ModelRequest:
    return ModelRequest(
        model="m", system="system", messages=[Message(role="user", content="hi")], tools=tools
    )


def test_the_search_is_offered_first_and_only_in_a_request_with_tools():
    body = anthropic.request_body(request(TOOLS), server_search=4)
    search, read = body["tools"]
    assert search == {"type": "web_search_20250305", "name": "web_search", "max_uses": 4}
    assert read["cache_control"] == {"type": "ephemeral"}  # the breakpoint stays last
    assert "tools" not in anthropic.request_body(request([]), server_search=4)
    assert [t["name"] for t in anthropic.request_body(request(TOOLS))["tools"]] == ["read"]
    responses = openai_responses.request_body(request(TOOLS), server_search=True)
    assert responses["tools"][0] == {"type": "web_search"}
    assert "tools" not in openai_responses.request_body(request([]), server_search=True)


def stream(*events: dict) -> Message:
    parser = AnthropicParser()
    for data in events:
        list(parser.feed(SSEEvent(data["type"], json.dumps(data))))
    return parser.draft.response("m", {}).message


def test_the_parser_keeps_the_blocks_with_the_input_that_streamed():
    message = stream(
        {"type": "content_block_start", "index": 0, "content_block": CALL},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": '{"query": "a'}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": ' b"}'}},
        {"type": "content_block_start", "index": 1, "content_block": RESULT},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 2,
         "delta": {"type": "citations_delta", "citation": {"url": "https://a.example/"}}},
        {"type": "content_block_delta", "index": 2,
         "delta": {"type": "text_delta", "text": "Found."}},
    )  # fmt: skip

    assert message.content == "Found."
    assert message.server_blocks == [{**CALL, "input": {"query": "a b"}}, RESULT]
    again = Message.from_dict(message.to_dict())  # as the session log keeps it
    assert again.server_blocks == message.server_blocks


def test_the_blocks_go_back_before_the_text_and_are_never_a_cache_breakpoint():
    searched = Message(
        role="assistant", content="Found.", server_blocks=[{**CALL, "input": {"q": 1}}, RESULT]
    )
    only_search = Message(role="assistant", content="", server_blocks=[CALL, RESULT])
    wire = anthropic.wire_messages([Message(role="user", content="hi"), searched])
    assert [block["type"] for block in wire[1]["content"]] == [
        "server_tool_use",
        "web_search_tool_result",
        "text",
    ]
    paused = anthropic.wire_messages([Message(role="user", content="hi"), only_search])
    assert all("cache_control" not in block for block in paused[1]["content"])


def test_a_paused_reply_is_sent_back_and_its_parts_come_back_as_one():
    from caretz.providers.anthropic import AnthropicProvider
    from caretz.providers.base import collect
    from caretz.providers.registry import BUILTIN_PROVIDERS
    from tests.modelserver import ModelServer, Reply

    hits = [("https://a.example/", "A")]
    with ModelServer() as server:
        server.add(
            Reply(web_searches=[("first", hits)], text="Searching. ", stop_reason="pause_turn"),
            Reply(web_searches=[("second", hits)], text="Found it.", usage=(50, 10, 0)),
        )
        provider = AnthropicProvider(
            BUILTIN_PROVIDERS["anthropic"], "sk-ant-test-0123456789", base_url=server.url
        )
        response = collect(provider.stream(request(TOOLS)))

    assert response.stop_reason == "end_turn"
    assert response.message.content == "Searching. Found it."
    queries = [b["input"]["query"] for b in response.message.server_blocks if "input" in b]
    assert queries == ["first", "second"]
    assert response.usage.input_tokens == 150 and response.usage.output_tokens == 30
    first, second = server.requests
    paused = second.messages[-1]
    assert paused["role"] == "assistant"
    assert [block["type"] for block in paused["content"]] == [
        "server_tool_use",
        "web_search_tool_result",
        "text",
    ]
