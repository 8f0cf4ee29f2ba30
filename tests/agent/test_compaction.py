"""Compaction: trim older tool output first, then summarize; AGENTS.md is never touched.

Real sessions (start_session) against the loopback model server, real bash,
real session logs; the conversation is rebuilt from the log as a resume does.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from caretz.agent.compaction import (
    SUMMARY_HEADER,
    SUMMARY_SYSTEM,
    TASK_HEADER,
    CompactionPolicy,
    ContextMeter,
    compact,
    estimate_tokens,
    head_and_tail,
)
from caretz.app.session import AppSession, start_session
from caretz.config.settings import resolve_settings
from caretz.messages import Message, ToolCall
from caretz.session.events import read_events
from caretz.session.records.base import Record
from caretz.session.records.session import SessionCompacted
from caretz.session.store import rebuild_history
from caretz.ui.live import LiveView
from caretz.ui.repl import Repl
from tests.modelserver import ModelServer, error, text, tool

AGENTS = "# House rules\n\nAlways run `make check` before answering.\nNever touch vendor/.\n"
BIG_OUTPUT = "head -c 6000 /dev/zero | tr '\\0' x"


class Recorder:
    """A quiet Output that keeps every event."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def on_text(self, text: str) -> None:
        pass

    def on_thinking(self, text: str) -> None:
        pass

    def on_retry(self, event: object) -> None:
        pass

    def on_response_start(self) -> None:
        pass

    def on_waiting(self, event: object) -> None:
        pass

    def on_event(self, event: Record) -> None:
        self.events.append(event.to_dict())


@pytest.fixture
def env(server: ModelServer) -> dict[str, str]:
    return {
        "ANTHROPIC_API_KEY": "sk-test",
        "ANTHROPIC_BASE_URL": server.url,
        "CARETZ_MODEL": "anthropic/claude-test",
        "CARETZ_DATA_DIR": os.environ["CARETZ_DATA_DIR"],
        "CARETZ_CONFIG": os.environ["CARETZ_CONFIG"],
    }


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "AGENTS.md").write_text(AGENTS)
    return folder


def open_session(env: dict[str, str], workspace: Path, resume: str | None = None) -> AppSession:
    settings = resolve_settings({}, env)
    return start_session(settings, Recorder(), env, resume=resume, workspace=workspace)


def run_big_turns(session: AppSession, server: ModelServer, count: int) -> None:
    """`count` turns, each one bash call with 6000 characters of output, then an answer."""
    for number in range(1, count + 1):
        server.add(tool("bash", command=BIG_OUTPUT), text(f"answer {number}"))
        result = session.agent.run_turn(f"turn {number}")
        assert result.status == "done"


def policy_between(session: AppSession, trigger: int, target: int) -> CompactionPolicy:
    window = 100_000
    return CompactionPolicy(
        context_window=window,
        trigger_ratio=trigger / window,
        target_ratio=target / window,
        keep_recent_turns=2,
        keep_chars=500,
    )


def tool_outputs(conversation: list[Message]) -> list[str]:
    return [m.content for m in conversation if m.role == "tool"]


def test_the_summary_comes_first_and_nothing_is_trimmed_when_it_is_enough(env, workspace, server):
    session = open_session(env, workspace)
    run_big_turns(session, server, 4)
    agent = session.agent
    before = estimate_tokens(agent.config.system, agent.conversation.messages)
    server.add(text("SUMMARY: turns 1 and 2 printed x characters."))

    result = agent.compact(policy_between(session, before - 10, 10))

    assert result is not None and result.summarized == 8 and result.trimmed == 0
    assert tool_outputs(agent.conversation.messages) == ["x" * 6000, "x" * 6000]  # kept whole
    assert result.tokens_after < result.tokens_before


def test_summary_replaces_older_turns_when_trimming_is_not_enough(env, workspace, server):
    session = open_session(env, workspace)
    run_big_turns(session, server, 4)
    agent = session.agent
    system_before = agent.config.system
    server.add(text("SUMMARY: turns 1 and 2 printed 6000 x characters each."))

    result = agent.compact(policy_between(session, 90_000, 10))

    assert result is not None and result.summarized == 8 and result.summary_error is None
    summary_request = server.requests[-1]
    assert summary_request.system == SUMMARY_SYSTEM
    assert "make check" not in str(summary_request.body)  # AGENTS.md is never summarized
    assert "turn 1" in summary_request.messages[0]["content"]
    first, ack = agent.conversation.messages[:2]
    assert first.role == "user" and first.content.startswith(SUMMARY_HEADER)
    assert "SUMMARY: turns 1 and 2" in first.content and ack.role == "assistant"
    assert [m.content for m in agent.conversation.messages if m.role == "user"][1:] == [
        "turn 3",
        "turn 4",
    ]
    assert agent.config.system == system_before

    server.add(text("carrying on"))
    agent.run_turn("turn 5")

    request = server.requests[-1]
    assert AGENTS.strip() in request.system  # sent again, whole
    assert request.messages[0]["content"].startswith(SUMMARY_HEADER)
    assert [m["content"] for m in request.messages if m["role"] == "user"][-1] == "turn 5"
    assert "x" * 6000 in str(request.messages)  # the kept turns' output is whole


def test_the_compacted_conversation_is_an_event_and_a_resume_rebuilds_it(env, workspace, server):
    session = open_session(env, workspace)
    run_big_turns(session, server, 3)
    server.add(text("SUMMARY of turn 1"))
    session.agent.compact(policy_between(session, 90_000, 90_000), reason="manual")
    server.add(text("answer 4"))
    session.agent.run_turn("turn 4")
    session.log.close()

    events = list(read_events(session.events_path))
    compacted = [e.to_dict() for e in events if isinstance(e, SessionCompacted)]
    assert len(compacted) == 1 and compacted[0]["reason"] == "manual"
    assert compacted[0]["summarized"] == 4  # turn 1: prompt, call, result, answer
    rebuilt = rebuild_history(events)
    expected = [m.to_dict() for m in session.agent.conversation.messages]
    assert [m.to_dict() for m in rebuilt.conversation] == expected
    assert rebuilt.turns == 4

    resumed = open_session(env, workspace, resume=session.id)
    assert [m.to_dict() for m in resumed.agent.conversation.messages] == expected
    resumed.log.close()


def test_a_failed_summary_trims_all_but_the_newest_step_and_says_why(env, workspace, server):
    session = open_session(env, workspace)
    run_big_turns(session, server, 3)
    server.add(error(400, "context too long for the summary"))

    result = session.agent.compact(policy_between(session, 90_000, 10))

    assert result is not None and result.summarized == 0 and result.trimmed == 2
    assert "context too long for the summary" in (result.summary_error or "")
    outputs = tool_outputs(session.agent.conversation.messages)
    assert [len(out) < 1000 for out in outputs] == [True, True, False]
    assert outputs[-1] == "x" * 6000  # the newest step's result is never cut
    assert [m.content for m in session.agent.conversation.messages if m.role == "user"][
        0
    ] == "turn 1"


def test_manual_compaction_of_a_short_conversation_does_nothing(env, workspace, server):
    session = open_session(env, workspace)
    server.add(text("hi"))
    session.agent.run_turn("hello")
    conversation = session.agent.conversation.messages

    assert session.agent.compact(CompactionPolicy(), reason="manual") is None
    assert session.agent.conversation.messages is conversation
    assert len(server.requests) == 1


def test_the_newest_step_is_never_cut_even_when_it_alone_is_over_the_window(env, workspace, server):
    session = open_session(env, workspace)
    run_big_turns(session, server, 1)

    result = session.agent.compact(policy_between(session, 10, 10))

    assert result is None
    assert tool_outputs(session.agent.conversation.messages) == ["x" * 6000]


def test_the_meter_counts_the_last_response_then_estimates_what_follows():
    meter = ContextMeter()
    conversation = [Message(role="user", content="hi")]
    usage = {"input_tokens": 1000, "cache_read_tokens": 5000, "output_tokens": 50}

    meter.measured(usage, conversation)
    conversation.append(Message(role="assistant", content="hello"))
    assert meter.estimate("system", conversation) == 6050
    conversation.append(Message(role="tool", content="y" * 400, tool_call_id="call_1"))
    assert meter.estimate("system", conversation) == 6050 + 100 + 4
    # A new conversation (a compaction, /clear) falls back to counting characters.
    fresh = list(conversation)
    assert meter.estimate("system", fresh) == estimate_tokens("system", fresh)


def test_head_and_tail_keeps_both_ends_around_a_marker():
    text_in = "START" + "m" * 10_000 + "END"
    cut = head_and_tail(text_in, 200)
    assert cut.startswith("START") and cut.endswith("END")
    assert "characters trimmed here" in cut and len(cut) < 300
    assert head_and_tail("short", 200) == "short"


def test_the_session_compacts_by_itself_before_a_turn_near_the_window(
    env, workspace, server, isolated_user_state
):
    config = Path(env["CARETZ_CONFIG"])
    config.write_text('{"profiles": {"general": {"contextWindow": 4000}}}')
    console = Console(file=io.StringIO(), width=100)
    view = LiveView(console)
    session = start_session(resolve_settings({}, env), view, env, workspace=workspace)
    repl = Repl(session, view, console, env)
    for number, input_tokens in ((1, 900), (2, 2100), (3, 3500)):
        # The server reports how full the context was: the meter goes by that.
        server.add(
            tool("bash", command=BIG_OUTPUT), text(f"answer {number}", usage=(input_tokens, 20, 0))
        )
        repl.run_turn(f"turn {number}")
    assert not any(isinstance(e, SessionCompacted) for e in read_events(session.events_path))
    server.add(text("SUMMARY of turn 1"), text("answer 4"))

    repl.run_turn("turn 4")

    compacted = [
        e.to_dict() for e in read_events(session.events_path) if isinstance(e, SessionCompacted)
    ]
    assert len(compacted) == 1 and compacted[0]["reason"] == "auto"
    screen = console.file.getvalue()
    assert "compacted the conversation" in screen and "answer 4" in screen
    last = server.requests[-1]
    assert last.messages[-1]["content"] == "turn 4"
    assert "turn 1" not in [m["content"] for m in last.messages if m["role"] == "user"]


def _step(call_id: str, name: str, arguments: dict[str, Any], output: str) -> list[Message]:
    call = ToolCall(id=call_id, name=name, arguments=arguments)
    return [
        Message(role="assistant", tool_calls=[call]),
        Message(role="tool", content=output, tool_call_id=call_id),
    ]


def _never(messages: list[Message]) -> str:
    raise AssertionError("no summary should be asked for")


def test_a_second_compaction_carries_the_first_ones_files_and_plan_and_the_task():
    plan = {"todos": [{"content": "Fix the parser", "status": "in_progress"}]}
    turn = [
        Message(role="user", content="fix the parser"),
        *_step("c1", "todo", plan, "plan set"),
        *_step("c2", "write", {"path": "a.py", "content": "x"}, "wrote a.py"),
        *_step("c3", "bash", {"command": "pytest"}, "y" * 8000),
        *_step("c4", "edit", {"path": "b.py", "old": "1", "new": "2"}, "z" * 8000),
    ]
    policy = CompactionPolicy(context_window=6000, keep_ratio=0.1)

    first = compact(turn, "system", policy, lambda older: "FIRST SUMMARY")
    assert first is not None and first.summarized == 7
    summary = first.conversation[0].content
    assert "[>] Fix the parser" in summary and "Files changed so far: a.py" in summary
    assert summary.endswith(f"{TASK_HEADER}\n\nfix the parser")

    later = [*first.conversation, *_step("c5", "bash", {"command": "ls"}, "w" * 8000)]
    second = compact(later, "system", policy, lambda older: "SECOND SUMMARY")

    assert second is not None and second.summarized == 3
    summary = second.conversation[0].content
    assert "SECOND SUMMARY" in summary and "FIRST SUMMARY" not in summary
    assert "[>] Fix the parser" in summary
    assert "Files changed so far: a.py, b.py" in summary
    assert summary.endswith(f"{TASK_HEADER}\n\nfix the parser")
    assert second.conversation[-1].content == "w" * 8000  # the newest result, whole


def test_a_summary_alone_before_a_step_over_the_window_is_not_summarized_again():
    conversation = [
        Message(role="user", content=f"{SUMMARY_HEADER}\n\nS\n\n{TASK_HEADER}\n\ntask"),
        *_step("c1", "bash", {"command": "cat big"}, "v" * 40_000),
    ]

    result = compact(conversation, "", CompactionPolicy(context_window=4000), _never)

    assert result is None  # nothing older to summarize or trim; the newest step stays whole
