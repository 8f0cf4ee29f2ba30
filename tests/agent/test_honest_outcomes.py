"""A call that started is never reported as "Not run": Ctrl-C reports the time it ran and its
partial output; after a crash, resuming says its outcome is unknown."""

from __future__ import annotations

import _thread
import threading
from pathlib import Path
from typing import Any

import pytest

from caretz.agent.agent import Agent
from caretz.agent.outcomes import SKIPPED_AFTER_INTERRUPT
from caretz.agent.parts import AgentConfig, AgentParts
from caretz.messages import Message, ToolCall, ToolSpec
from caretz.session.events import EventLog
from caretz.session.records.loop import ModelReplied, ToolCalled, TurnStarted
from caretz.session.store import OUTCOME_UNKNOWN, SESSION_ENDED, rebuild_history
from caretz.tools.base import ToolContext, ToolInterrupted, ToolResult, interrupted_result
from caretz.tools.bash import KILLED, BashTool
from caretz.tools.registry import ToolRegistry, default_tools
from tests.scripted import ScriptedProvider, call, calls


class Stuck:
    """A tool that is running when Ctrl-C arrives (KeyboardInterrupt from inside it)."""

    spec = ToolSpec("stuck", "test tool", {"type": "object", "properties": {}})

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise KeyboardInterrupt


class InterruptWhen:
    """Ctrl-C (an interrupt of the main thread) once `path` exists: the command under test
    writes it when it runs, so the interrupt lands mid-command on a machine of any speed."""

    def __init__(self, path: Path):
        self.cancelled = threading.Event()
        self.thread = threading.Thread(target=self._wait, args=(path,), daemon=True)
        self.thread.start()

    def _wait(self, path: Path) -> None:
        while not self.cancelled.wait(0.02):
            if path.exists():
                _thread.interrupt_main()
                return

    def cancel(self) -> None:
        self.cancelled.set()


def test_ctrl_c_in_a_command_reports_the_time_it_ran_and_its_partial_output(tmp_path: Path):
    timer = InterruptWhen(tmp_path / "running")
    command = "echo partial; touch running; sleep 30"
    try:
        with pytest.raises(ToolInterrupted) as caught:
            BashTool().run({"command": command}, ToolContext(workspace=tmp_path))
    finally:
        timer.cancel()
    result = caught.value.result
    assert not result.ok and result.exit_code is None and result.ended_by == "interrupted"
    assert result.output.startswith("partial\n[interrupted by the user after ")
    assert result.output.endswith("the command and everything it started were killed]")
    assert result == interrupted_result(result.duration_s, KILLED, "partial")  # the one form
    assert 0 < result.duration_s < 30  # it ran until the interrupt, not its 30 s


def make_agent(tmp_path: Path, provider: ScriptedProvider) -> tuple[Agent, list[dict]]:
    events: list[dict] = []
    log = EventLog(None)
    log.subscribe(lambda record: events.append(record.to_dict()))
    tools = ToolRegistry([*default_tools(), Stuck()])
    parts = AgentParts(
        provider=provider, tools=tools, tool_ctx=ToolContext(workspace=tmp_path), log=log
    )
    return Agent(
        AgentConfig(model_id="model-1", model_ref="test/model", system="system"), parts
    ), events


def test_an_interrupted_turn_tells_started_calls_from_calls_never_run(tmp_path: Path):
    bash = call("bash", command="echo ran; touch running; sleep 30")
    stuck, never = call("stuck"), call("bash", command="touch never")
    provider = ScriptedProvider(calls(bash), calls(stuck, never))
    agent, events = make_agent(tmp_path, provider)
    timer = InterruptWhen(tmp_path / "running")
    try:
        first = agent.run_turn("run it")
    finally:
        timer.cancel()
    second = agent.run_turn("and the next one")

    assert first.status == second.status == "interrupted"
    answers = {m.tool_call_id: m.content for m in agent.conversation.messages if m.role == "tool"}
    assert answers[bash.id].startswith("ran\n[interrupted by the user after ")
    assert answers[stuck.id].startswith("[interrupted by the user after ")
    assert "had started" in answers[stuck.id] and "is unknown" in answers[stuck.id]
    assert answers[never.id] == SKIPPED_AFTER_INTERRUPT
    assert not (tmp_path / "never").exists()
    results = [e for e in events if e["type"] == "Tool.Result"]
    assert [(e["call_id"], e["ended_by"]) for e in results] == [
        (bash.id, "interrupted"),
        (stuck.id, "interrupted"),
    ]


def test_resume_after_a_crash_says_a_started_call_has_an_unknown_outcome():
    started, never = (
        ToolCall(id="call_1", name="bash", arguments={"command": "make deploy"}),
        ToolCall(id="call_2", name="bash", arguments={"command": "echo later"}),
    )
    asked = Message(role="assistant", content="", tool_calls=[started, never])
    events = [
        TurnStarted(prompt="deploy"),
        ModelReplied(message=asked.to_dict()),
        ToolCalled(index=0, call=started.to_dict()),
        # caretz was killed here: no Tool.Result, no Turn.Ended
    ]

    history = rebuild_history(events)

    answers = {m.tool_call_id: m.content for m in history.conversation if m.role == "tool"}
    assert answers == {"call_1": OUTCOME_UNKNOWN, "call_2": SESSION_ENDED}
    assert "started" in OUTCOME_UNKNOWN and "unknown" in OUTCOME_UNKNOWN
    assert SESSION_ENDED.startswith("Not run")

    # The same holds when the next turn starts after the crash.
    later = rebuild_history([*events, TurnStarted(prompt="status?")])
    assert [m.content for m in later.conversation if m.role == "tool"] == [
        OUTCOME_UNKNOWN,
        SESSION_ENDED,
    ]


class FaultyProvider(ScriptedProvider):
    """A provider whose stream meets a fault no check turned into a result."""

    def stream(self, request):
        yield from ()
        raise LookupError("a fault inside caretz")


def test_a_fault_no_check_caught_still_ends_the_turn_with_one_line(tmp_path: Path):
    agent, events = make_agent(tmp_path, FaultyProvider())

    result = agent.run_turn("go")

    assert (result.status, result.exit_code) == ("error", 1)
    assert result.message.startswith("caretz failed: LookupError: a fault inside caretz, at ")
    assert "test_honest_outcomes.py:" in result.message and "\n" not in result.message
    assert events[-1]["type"] == "Turn.Ended" and events[-1]["message"] == result.message
