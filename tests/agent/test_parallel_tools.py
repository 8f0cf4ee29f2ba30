"""A reply's read-only calls run at the same time; the rest run alone, in order.

Concurrency is shown with a barrier, not a clock: each read-only call waits at a
threading.Barrier that opens only once all of them are inside their tools. Run one after
another, the first would wait alone until the barrier's bound breaks it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from caretz.agent.agent import Agent
from caretz.agent.limits import UsageLimits
from caretz.agent.parts import AgentConfig, AgentParts
from caretz.guard.seam import NullGuard
from caretz.messages import ToolSpec
from caretz.session.events import EventLog
from caretz.tools.base import ToolContext, ToolResult
from caretz.tools.registry import ToolRegistry
from tests.scripted import ScriptedProvider, answer, call, calls

SCHEMA = {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}
FAILS_ONLY_WHEN_SERIAL_S = 60.0  # the barrier's bound: reached only if the calls are serial


class Meeting:
    """What the tools did, in order, from any thread."""

    def __init__(self, *names: str):
        self.names = names  # the calls that wait for each other
        self.barrier = threading.Barrier(len(names))
        self.lock = threading.Lock()
        self.log: list[str] = []
        self.inside = 0

    def note(self, text: str) -> None:
        with self.lock:
            self.log.append(text)


class Looker:
    """A read-only tool that waits at the meeting's barrier."""

    effect = "read"
    spec = ToolSpec("look", "looks", SCHEMA)

    def __init__(self, meeting: Meeting):
        self.meeting = meeting

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        meeting, name = self.meeting, args["who"]
        if name not in meeting.names:
            return ToolResult(ok=True, output=f"{name} looked")
        with meeting.lock:
            meeting.inside += 1
        try:
            meeting.barrier.wait(FAILS_ONLY_WHEN_SERIAL_S)
        except threading.BrokenBarrierError:
            return ToolResult(ok=False, output=f"{name} waited alone")
        finally:
            with meeting.lock:
                meeting.inside -= 1
        return ToolResult(ok=True, output=f"{name} met the others")


class Changer:
    """An editing tool: it notes whether any read-only call was running beside it."""

    effect = "edit"
    spec = ToolSpec("change", "changes", SCHEMA)

    def __init__(self, meeting: Meeting):
        self.meeting = meeting

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        with self.meeting.lock:
            beside = self.meeting.inside
        self.meeting.note(f"{args['who']} ran with {beside} beside it")
        return ToolResult(ok=True, output=f"{args['who']} changed")


def agent_with(tmp_path: Path, meeting: Meeting, provider: ScriptedProvider) -> tuple[Agent, list]:
    events: list[dict[str, Any]] = []
    log = EventLog(None)
    log.subscribe(lambda record: events.append(record.to_dict()))
    parts = AgentParts(
        provider=provider,
        tools=ToolRegistry([Looker(meeting), Changer(meeting)]),
        tool_ctx=ToolContext(workspace=tmp_path),
        log=log,
        guard=NullGuard(),
    )
    config = AgentConfig(model_id="m", model_ref="test/m", system="s", limits=UsageLimits())
    return Agent(config, parts), events


def test_read_only_calls_meet_and_a_change_runs_alone_between_them(tmp_path: Path):
    meeting = Meeting("a", "b", "c")
    reply = calls(
        call("look", who="a"),
        call("look", who="b"),
        call("look", who="c"),
        call("change", who="d"),
        call("look", who="e"),
    )
    provider = ScriptedProvider(reply, answer("done"))
    agent, events = agent_with(tmp_path, meeting, provider)

    result = agent.run_turn("look around")

    assert result.status == "done"
    outputs = [e["output"] for e in events if e["type"] == "Tool.Result"]
    assert outputs == [
        "a met the others",
        "b met the others",
        "c met the others",
        "d changed",
        "e looked",
    ]
    assert meeting.log == ["d ran with 0 beside it"]
    tools = [e["type"] for e in events if e["type"].startswith("Tool.")]
    assert tools == ["Tool.Called"] * 3 + ["Tool.Result"] * 3 + ["Tool.Called", "Tool.Result"] * 2
    sent = [m for m in provider.requests[1].messages if m.role == "tool"]
    assert [m.content for m in sent] == outputs
    assert [e["index"] for e in events if e["type"] == "Tool.Result"] == [0, 1, 2, 3, 4]
