"""The output-limit rule on its own: what becomes of a reply cut off at max_tokens, as
the turn loop (turn.py) stores it, asks for the rest and ends."""

from __future__ import annotations

from caretz.agent.output_limit import (
    CALL_IN_CUT_REPLY,
    CUT_CALL,
    MAX_CONTINUATIONS,
    CutReplies,
)
from caretz.messages import Message, ToolCall

LIMIT = 1000


def reply(text: str = "", *calls: ToolCall, thinking: str = "") -> Message:
    return Message(role="assistant", content=text, tool_calls=list(calls), thinking=thinking)


def test_a_continued_reply_is_one_assistant_message_joined_in_order():
    conversation = [Message(role="user", content="write the essay")]
    replies = CutReplies(LIMIT)

    first = replies.keep(conversation, reply("The first half, ", thinking="plan it"))
    outcome = replies.on_limit(first)
    assert (outcome.record.action, outcome.record.continuation, outcome.ended) == (
        "continued",
        1,
        None,
    )
    assert replies.take_note() == [
        f"Your reply hit the {LIMIT:,}-token output limit and was cut off. Continue exactly "
        "where it stopped, without repeating what you already wrote."
    ]
    assert replies.take_note() == []  # the note goes with one request only
    replies.keep(conversation, reply("the second half."))

    assert [message.role for message in conversation] == ["user", "assistant"]
    assert conversation[-1].content == "The first half, the second half."
    assert conversation[-1].thinking == "plan it"  # no calls after it: the first one's
    # A reply after the continuation is a reply of its own again.
    replies.keep(conversation, reply("Anything else?"))
    assert [message.role for message in conversation] == ["user", "assistant", "assistant"]


def test_a_continuation_with_calls_keeps_the_thinking_that_goes_with_them():
    conversation: list[Message] = []
    replies = CutReplies(LIMIT)
    replies.on_limit(replies.keep(conversation, reply("Reading ", thinking="old")))
    call = ToolCall(id="c1", name="read", arguments={"path": "a.py"})

    joined = replies.keep(conversation, reply("a.py.", call, thinking="new"))

    assert conversation == [joined]
    assert (joined.content, joined.tool_calls, joined.thinking) == ("Reading a.py.", [call], "new")


def test_a_reply_with_calls_runs_none_of_them_and_says_which_was_cut():
    calls = [
        ToolCall(id="c1", name="write", arguments={"path": "a.py"}),
        ToolCall(id="c2", name="write", arguments={}),
    ]
    replies = CutReplies(LIMIT)

    outcome = replies.on_limit(reply("Writing both.", *calls))

    assert (outcome.record.action, outcome.record.tool_calls) == ("calls_not_run", ["write"] * 2)
    assert outcome.ended is None and replies.take_note() == []
    assert [(r.role, r.tool_call_id, r.is_error) for r in outcome.results] == [
        ("tool", "c1", True),
        ("tool", "c2", True),
    ]
    assert outcome.results[0].content == CALL_IN_CUT_REPLY.format(limit=LIMIT)
    assert outcome.results[1].content == CUT_CALL.format(limit=LIMIT)
    assert "1,000-token output limit" in outcome.results[1].content


def test_an_empty_reply_is_told_to_think_less():
    replies = CutReplies(LIMIT)
    assert replies.on_limit(reply("   ")).record.action == "continued"
    (note,) = replies.take_note()
    assert "before it said anything" in note and "Think less and answer now" in note


def test_the_third_cut_reply_ends_the_turn_saying_how_to_fix_it():
    replies = CutReplies(LIMIT)
    conversation: list[Message] = []
    actions = []
    for piece in ["one ", "two ", "three"]:
        outcome = replies.on_limit(replies.keep(conversation, reply(piece)))
        replies.take_note()
        actions.append(outcome.record.action)

    assert MAX_CONTINUATIONS == 2
    assert actions == ["continued", "continued", "ended"]
    assert [message.content for message in conversation] == ["one two three"]
    assert outcome.ended == (
        "the reply hit the 1,000-token output limit 3 times and is cut off; raise "
        "maxTokens in the profile or ask for a shorter answer"
    )
