"""Background jobs under the session's sandbox: stopping one ends everything it started,
even what left its process group (`setsid`), inside bubblewrap and with the sandbox off."""

from __future__ import annotations

import pytest

from caretz.messages import ToolCall
from caretz.sandbox.detect import check_sandbox
from caretz.sandbox.policy import SandboxMode
from caretz.sandbox.runner import open_sandbox
from caretz.tools.base import ToolContext
from caretz.tools.jobtable import JobTable
from caretz.tools.registry import ToolRegistry, default_tools
from tests.sandbox.helpers import kill_all, marker, sleepers, wait_for


def _context(mode: str, make_policy, bwrap_sandbox) -> ToolContext:
    if mode == "bwrap":
        sandbox = bwrap_sandbox(make_policy())
    else:
        policy = make_policy(mode=SandboxMode.OFF)
        sandbox = open_sandbox(policy, check_sandbox(policy.mode))
    return ToolContext(workspace=sandbox.policy.cwd, sandbox=sandbox, jobs=JobTable())


@pytest.mark.parametrize("mode", ["bwrap", "off"])
def test_stopping_a_job_ends_everything_it_started(mode, make_policy, bwrap_sandbox):
    ctx = _context(mode, make_policy, bwrap_sandbox)
    marks = [marker() for _ in range(3)]
    command = f"sleep {marks[0]} & setsid sleep {marks[1]} & nohup sleep {marks[2]} & wait"
    started = ToolRegistry(default_tools()).run(
        ToolCall(id="call_1", name="bash", arguments={"command": command, "background": True}), ctx
    )
    assert started.ok and "job j1" in started.output
    found = lambda: [pid for mark in marks for pid in sleepers(mark)]  # noqa: E731
    try:
        assert wait_for(lambda: len(found()) == 3, timeout=30)
        assert [job.id for job in ctx.jobs.stop_all()] == ["j1"]
        assert wait_for(lambda: not found(), timeout=30), found()
    finally:
        kill_all(found())


def test_a_command_ended_the_moment_it_started_leaves_nothing(make_policy, bwrap_sandbox):
    """bubblewrap killed before its sandbox init set the parent-death signal would orphan
    the sandbox; ending the group kills that init directly."""
    from caretz.tools.process import end_group, start_shell

    sandbox = bwrap_sandbox(make_policy())
    marks = [marker() for _ in range(8)]
    try:
        for mark in marks:
            end_group(start_shell(f"sleep {mark}", sandbox.policy.cwd, sandbox), 1.0)
        assert wait_for(lambda: not any(sleepers(mark) for mark in marks), timeout=30)
    finally:
        kill_all([pid for mark in marks for pid in sleepers(mark)])
