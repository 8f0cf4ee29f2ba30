"""Compaction's newest-step rule on its own: where the newest step begins, and that
neither a summary, a failed summary nor the trimming after it ever cuts that step."""

from __future__ import annotations

from typing import Any

from caretz.agent.compaction import (
    SUMMARY_HEADER,
    CompactionPolicy,
    compact,
    keep_start,
    newest_step,
)
from caretz.messages import Message, ToolCall
from caretz.providers.base import ProviderError

BIG = 9000  # characters: far over what trimming keeps of an older result


def step(call_id: str, output: str, **arguments: Any) -> list[Message]:
    call = ToolCall(id=call_id, name="bash", arguments=arguments or {"command": "make"})
    return [
        Message(role="assistant", tool_calls=[call]),
        Message(role="tool", content=output, tool_call_id=call_id),
    ]


def two_calls(output: str, argument: str) -> list[Message]:
    """One reply with two calls, and both results: one step."""
    calls = [
        ToolCall(id="n1", name="write", arguments={"content": argument}),
        ToolCall(id="n2", name="bash", arguments={}),
    ]
    return [
        Message(role="assistant", content="Writing it.", tool_calls=calls),
        Message(role="tool", content=output, tool_call_id="n1"),
        Message(role="tool", content=output, tool_call_id="n2"),
    ]


def failed_summary(messages: list[Message]) -> str:
    raise ProviderError("the summary request failed: HTTP 529")


def test_the_newest_step_is_the_newest_calling_reply_else_the_newest_prompt():
    turn = [Message(role="user", content="one"), *step("a", "1"), *step("b", "2")]
    assert newest_step(turn) == 3  # the reply that made call b, its result after it
    answered = [*turn, Message(role="assistant", content="Done.")]
    assert newest_step(answered) == 3  # a plain answer starts no step
    asked_again = [*answered, Message(role="user", content="two")]
    assert newest_step(asked_again) == 6
    assert newest_step([Message(role="user", content="only")]) == 0
    assert newest_step([*asked_again, *two_calls("x", "y")]) == 7


def test_the_part_kept_whole_never_starts_after_the_newest_step():
    conversation = [
        Message(role="user", content="one"),
        *step("a", "a" * BIG),
        Message(role="user", content="two"),
        *step("b", "b" * BIG),
        *two_calls("c" * BIG, "d" * BIG),
    ]
    tight = CompactionPolicy(context_window=2000, keep_ratio=0.01)
    assert keep_start(conversation, tight) == newest_step(conversation) == 6
    roomy = CompactionPolicy(context_window=200_000, keep_recent_turns=1)
    assert keep_start(conversation, roomy) == 3  # the newest turn whole, no older one


def test_a_failed_summary_trims_older_steps_and_never_the_newest():
    newest = two_calls("n" * BIG, "w" * BIG)
    conversation = [
        Message(role="user", content="fix it"),
        *step("a", "a" * BIG),
        *step("b", "b" * BIG, command="x" * BIG),
        *newest,
    ]
    policy = CompactionPolicy(context_window=4000)

    result = compact(conversation, "system", policy, failed_summary)

    assert result is not None and result.summary_error == "the summary request failed: HTTP 529"
    kept = result.conversation
    assert kept[-3:] == newest  # the step, its long argument and both results, whole
    assert len(kept[2].content) < BIG and len(kept[4].content) < BIG
    assert len(kept[3].tool_calls[0].arguments["command"]) < BIG
    assert result.trimmed == 3


def test_a_summary_keeps_the_newest_step_whole_after_it():
    newest = two_calls("n" * BIG, "w" * BIG)
    conversation = [Message(role="user", content="fix it"), *step("a", "a" * BIG), *newest]
    policy = CompactionPolicy(context_window=4000, keep_ratio=0.01)

    result = compact(conversation, "system", policy, lambda older: "SUMMARY")

    assert result is not None and result.summarized == 3
    assert result.conversation[0].content.startswith(SUMMARY_HEADER)
    assert result.conversation[-3:] == newest
