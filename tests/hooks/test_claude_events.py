"""Claude Code's hook events in process: the names caretz accepts, SubagentStop's bound,
and background (`async`) hooks at the session's end; real sessions, real commands."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from caretz.hooks.config import CLAUDE_CODE_EVENTS, HOOK_EVENTS, SKIPPED_EVENTS, ProjectHooks
from caretz.session.events import read_events
from tests.e2e.hook_scripts import gone, hooks_entry, project_settings
from tests.hooks import test_session_hooks
from tests.hooks.test_session_hooks import open_session
from tests.modelserver import text, tool
from tests.sandbox.helpers import marker, sleepers, wait_for

env = test_session_hooks.env  # the loopback server's URL and a test key
workspace = test_session_hooks.workspace  # an empty project folder


def parsed(hooks: dict) -> ProjectHooks:
    return ProjectHooks.model_validate({"hooks": hooks})


def test_every_claude_code_event_loads_and_those_caretz_does_not_run_are_set_aside():
    config = parsed({name: [hooks_entry("true")] for name in CLAUDE_CODE_EVENTS}).hooks

    assert set(config.skipped_events) == set(SKIPPED_EVENTS)
    assert "Notification" not in SKIPPED_EVENTS and "PermissionRequest" in SKIPPED_EVENTS
    assert all(config.for_event(event) for event in HOOK_EVENTS if event in CLAUDE_CODE_EVENTS)
    assert bool(parsed({"TeammateIdle": [hooks_entry("true")]}).hooks)
    with pytest.raises(ValidationError):
        parsed({"Frobnicate": [hooks_entry("true")]})


def test_a_hook_of_another_type_is_refused_where_it_decides_and_kept_aside_elsewhere():
    http = {"hooks": [{"type": "http", "url": "http://127.0.0.1:9", "headers": {"A": "b"}}]}
    for event in ("Stop", "SubagentStop", "PostToolUseFailure", "UserPromptSubmit"):
        with pytest.raises(ValidationError, match="could decide what happens"):
            parsed({event: [http]})
    config = parsed({"SessionEnd": [http], "Notification": [http]}).hooks
    assert config.skipped_types() == [("Notification", "http"), ("SessionEnd", "http")]
    with pytest.raises(ValidationError, match="extra_forbidden"):
        parsed({"Stop": [{"hooks": [{"type": "command", "command": "true", "sheel": "bash"}]}]})


def test_subagent_stop_continuations_are_bounded_like_stop(env, workspace, server):
    always = "echo 'not done yet' >&2; exit 2"
    project_settings(workspace, {"hooks": {"SubagentStop": [hooks_entry(always)]}})
    session = open_session(env, workspace)
    assert session.hooks is not None
    session.hooks.max_stop_continuations = 2
    server.add(
        tool("task", agent="worker", prompt="Do it."),
        text("report 1"),
        text("report 2"),
        text("report 3"),  # after two continuations the hook no longer carries it on
        text("Main is done."),
    )

    result = session.agent.run_turn("go")

    assert result.status == "done" and result.text == "Main is done."
    assert len(server.requests) == 5
    events = list(read_events(session.events_path))
    (limit,) = [e.to_dict() for e in events if e.type == "Hook.StopLimit"]
    assert limit["event"] == "SubagentStop" and limit["continuations"] == 2
    session.close()


def test_a_background_hook_still_running_when_the_session_ends_is_ended(
    env, workspace: Path, server
):
    mark = marker()  # the hook runs in the sandbox's PID namespace: found by its sleep
    entry = {"hooks": [{"type": "command", "command": f"sleep {mark}", "async": True}]}
    project_settings(workspace, {"hooks": {"SessionStart": [entry]}})
    session = open_session(env, workspace)
    assert session.hooks is not None
    session.hooks.background_grace_s = 0.5
    assert wait_for(lambda: sleepers(mark)), "the background hook never started"
    (pid,) = sleepers(mark)

    session.close()

    assert gone(pid)
    ran = [e.to_dict() for e in read_events(session.events_path) if e.type == "Hook.Ran"]
    assert len(ran) == 1 and ran[0]["background"] is True
    assert ran[0]["event"] == "SessionStart" and ran[0]["decision"] == "warning"
