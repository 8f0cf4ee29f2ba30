"""Every tool result fits its cap: the cap from the room the context has left, and the
registry fitting whatever a tool (or a hook) returns, the rest kept in a file it names."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from caretz.agent.compaction import CompactionPolicy, compact
from caretz.messages import Message, ToolCall, ToolSpec
from caretz.tools.base import ToolContext, ToolResult, object_schema
from caretz.tools.files import ReadTool
from caretz.tools.registry import ToolRegistry
from caretz.tools.result_cap import MAX_RESULT_CHARS, NOTE_ROOM_CHARS, cap_chars

WIDE = "".join(f"{n:08d} " + "x" * 200 + "\n" for n in range(5000))  # about 1 MB


class Flood:
    """A tool that ignores its cap (as an MCP server's result or a careless tool would)."""

    effect = "external"
    spec = ToolSpec("flood", "returns a megabyte", object_schema())

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(ok=True, output=WIDE)


def kept_file(output: str) -> str:
    found = re.search(r"is in (\S+caretz-output-\S+\.txt)", output)
    assert found, output
    return Path(found.group(1)).read_text()


def test_the_cap_follows_the_room_left_within_bounds():
    assert cap_chars(1_000_000) == MAX_RESULT_CHARS == 87_500  # 25k tokens, Claude Code's read
    assert cap_chars(10_000) == 17_500  # half the room, at 3.5 characters a token
    assert cap_chars(10_000, calls=5) == 3_500  # a batch shares it
    assert cap_chars(-4_000) == cap_chars(0) == 1_750  # never below 500 tokens


@pytest.mark.parametrize("path", ["run", "batch"])
def test_no_tool_returns_more_than_its_cap_and_the_whole_is_kept(tmp_path, path):
    def hook_adds(call: ToolCall, result: ToolResult, ctx: ToolContext) -> None:
        result.output += "\n" + "hook says " * 10_000  # a PostToolUse hook's addition

    registry = ToolRegistry([Flood(), ReadTool()], after_call=[hook_adds])
    ctx = ToolContext(workspace=tmp_path, output_limit_chars=10_000)
    call = ToolCall(id="c1", name="flood", arguments={})
    if path == "run":
        result = registry.run(call, ctx)
    else:
        ready = registry.start(call, ctx)
        assert not isinstance(ready, ToolResult)
        result = registry.finish(ready, registry.invoke(ready))

    assert len(result.output) <= 10_000 + NOTE_ROOM_CHARS
    assert result.output.startswith(WIDE[:3000]) and result.output.rstrip().endswith("hook says")
    assert kept_file(result.output).startswith(WIDE) and "hook says" in kept_file(result.output)


def test_a_read_stops_at_the_cap_on_a_line_and_says_where_to_go_on(tmp_path):
    (tmp_path / "wide.h").write_text(WIDE)
    registry = ToolRegistry([ReadTool()])
    cap = cap_chars(2_000)  # a small window's room
    result = registry.run(
        ToolCall(id="c1", name="read", arguments={"path": "wide.h"}),
        ToolContext(workspace=tmp_path, output_limit_chars=cap),
    )
    assert len(result.output) <= cap + 200
    last = result.output.splitlines()[-1]
    assert last.startswith("[lines 1–") and f"(the output limit of {cap:,} characters)" in last


def test_an_overflow_shortens_the_newest_result_when_nothing_else_frees_enough():
    call = ToolCall(id="c1", name="read", arguments={"path": "wide.h"})
    conversation = [
        Message(role="user", content="read it"),
        Message(role="assistant", tool_calls=[call]),
        Message(role="tool", content=WIDE[:100_000], tool_call_id="c1"),
    ]
    policy = CompactionPolicy(context_window=8_000)

    def summary(messages: list[Message]) -> str:
        return "The user asked to read wide.h."

    auto = compact(conversation, "", policy, summary, reason="auto")
    first = compact(conversation, "", policy, summary, reason="overflow")
    result = compact(conversation, "", policy, summary, reason="overflow", shorten_newest=True)

    # Before a refusal, and at the first one, the newest step stays whole.
    assert auto is not None and first is not None and auto.shortened == first.shortened == 0
    assert result is not None and result.shortened == 1 and result.trimmed == 0
    assert result.tokens_after < policy.trigger_tokens
    shortened = result.conversation[-1].content
    assert "characters cut here: this result did not fit the model's context window" in shortened
    assert shortened.startswith(WIDE[:1000]) and kept_file(shortened) == WIDE[:100_000]
