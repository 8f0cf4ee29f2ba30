"""Rebuilding a conversation from the log when it holds rewinds of the conversation."""

from __future__ import annotations

from caretz.providers.anthropic import wire_messages
from caretz.session.records.base import Record
from caretz.session.records.checkpoints import CheckpointRestored
from caretz.session.records.loop import ModelReplied, ToolReturned, TurnEnded, TurnStarted
from caretz.session.store import rebuild_history, turn_prompt


def turn(number: int, prompt: str, answer: str, agent: str = "main") -> list[Record]:
    return [
        TurnStarted(turn=number, agent=agent, prompt=prompt),
        ModelReplied(agent=agent, message={"role": "assistant", "content": answer}),
        TurnEnded(turn=number, agent=agent, text=answer),
    ]


def rewound(scope: str, to: str, to_turn: int, before: str) -> CheckpointRestored:
    return CheckpointRestored(scope=scope, to=to, to_turn=to_turn, to_session="s1", before=before)


def contents(events: list[Record]) -> list[str]:
    return [m.content for m in rebuild_history(events).conversation]


def test_a_conversation_rewind_goes_back_to_before_the_turn_and_numbers_keep_growing():
    events = [*turn(1, "one", "1"), *turn(2, "two", "2"), *turn(3, "three", "3")]
    events.append(rewound("conversation", "cp-turn-2", 2, "cp-rewind-a"))

    history = rebuild_history(events)

    assert [m.content for m in history.conversation] == ["one", "1"]
    assert history.turns == 3 and history.live_turns == (1,)
    assert (history.last_request, history.last_answer) == ("one", "1")


def test_rewinding_to_a_rewinds_checkpoint_brings_back_what_it_dropped():
    events = [*turn(1, "one", "1"), *turn(2, "two", "2")]
    events.append(rewound("both", "cp-turn-1", 1, "cp-rewind-a"))
    events += turn(3, "three", "3")
    events.append(rewound("both", "cp-rewind-a", 2, "cp-rewind-b"))

    history = rebuild_history(events)

    assert [m.content for m in history.conversation] == ["one", "1", "two", "2"]
    assert history.live_turns == (1, 2)
    events.append(rewound("conversation", "cp-rewind-b", 3, "cp-rewind-c"))  # undo the undo
    assert contents(events) == ["three", "3"]


def test_a_files_only_rewind_leaves_the_conversation_and_subagents_are_not_in_it():
    events = [*turn(1, "one", "1"), *turn(1, "job", "report", agent="helper")]
    events.append(rewound("files", "cp-turn-1", 1, "cp-rewind-a"))

    assert contents(events) == ["one", "1"]
    assert turn_prompt(events, 1) == "one"
    assert turn_prompt(events, 5) is None


def test_a_resumed_conversation_tells_the_model_which_calls_failed():
    calls = [
        {"id": "c1", "name": "bash", "arguments": {"command": "make"}},
        {"id": "c2", "name": "read", "arguments": {"path": "a.py"}},
    ]
    events: list[Record] = [
        TurnStarted(turn=1, prompt="build it"),
        ModelReplied(message={"role": "assistant", "content": "", "tool_calls": calls}),
        ToolReturned(index=0, call_id="c1", name="bash", ok=False, output="make: *** Error 2"),
        ToolReturned(index=1, call_id="c2", name="read", ok=True, output="print(1)"),
        ModelReplied(message={"role": "assistant", "content": "The build fails."}),
        TurnEnded(turn=1, text="The build fails."),
    ]

    conversation = rebuild_history(events).conversation

    results = [(m.tool_call_id, m.is_error) for m in conversation if m.role == "tool"]
    assert results == [("c1", True), ("c2", False)]
    (_, _, sent, _) = wire_messages(conversation)  # what the next request sends
    assert [(b["tool_use_id"], b["is_error"]) for b in sent["content"]] == [
        ("c1", True),
        ("c2", False),
    ]
