"""Claude Code's other hook events through the real CLI: Notification (a permission
question in a pseudo-terminal), SessionEnd, SubagentStop, PostToolUseFailure, `async`
hooks, and a settings file with events caretz skips or refuses."""

from __future__ import annotations

import re
from pathlib import Path

from tests.e2e.conftest import types
from tests.e2e.hook_scripts import (
    LOG_EVENT,
    hooks_entry,
    logged_events,
    project_settings,
    write_hook,
)
from tests.modelserver import text, tool

# Logs the event, then blocks the first time it runs for a subagent (exit 2).
BLOCK_SUBAGENT_ONCE = (
    LOG_EVENT
    + """
if not event["stop_hook_active"]:
    print("also list the failing test names", file=sys.stderr)
    sys.exit(2)
"""
)

# Logs the event and sends the model a hint on stderr (exit 2).
FAILURE_HINT = (
    LOG_EVENT
    + """
print("the build is broken; run make clean first", file=sys.stderr)
sys.exit(2)
"""
)

# Waits until the model's next call has run (go.txt), then writes a marker and tries to
# block: as an async hook it decides nothing. Waited for, it would wait out its 20 s and
# the next call would find the marker.
SLOW_MARKER = """
import os, sys, time
project = os.environ["CARETZ_PROJECT_DIR"]
deadline = time.monotonic() + 20
while not os.path.exists(os.path.join(project, "go.txt")) and time.monotonic() < deadline:
    time.sleep(0.05)
open(os.path.join(project, "async-done.txt"), "w").write("done")
print("too late to block anything", file=sys.stderr)
sys.exit(2)
"""

STYLE = r"(?:\x1b\[[0-9;]*m)*"


def sent_text(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(str(block.get("text") or block.get("content") or "") for block in content)


def test_notification_runs_when_a_permission_question_waits_and_session_end_on_clear_and_exit(
    terminal, caretz, server, workspace: Path
):
    log = write_hook(workspace, "log", LOG_EVENT)
    project_settings(
        workspace,
        {
            "hooks": {
                "SessionStart": [hooks_entry(log)],
                "Notification": [hooks_entry(log, "permission_prompt")],
                "SessionEnd": [hooks_entry(log)],
            }
        },
    )
    server.add(tool("bash", command="touch yes.txt"), text("Made it."))
    term = terminal("--permission-mode", "ask")

    term.type("make the file")
    term.expect(f"caretz asks before it runs {STYLE}bash")
    term.expect("allow\\? ")
    asked = [e for e in logged_events(workspace) if e["hook_event_name"] == "Notification"]
    term.child.send("y\r")
    term.expect("Made it.")
    term.type("/clear")
    term.expect("a new, empty conversation")
    second = term.ctrl_d()

    assert (workspace / "yes.txt").exists()
    assert len(asked) == 1  # the hook ran before the question was answered
    notification = asked[0]
    assert notification["notification_type"] == "permission_prompt"
    assert notification["message"] == "caretz needs your permission to use bash"
    assert notification["title"] == "caretz"
    seen = [
        (e["hook_event_name"], e.get("source") or e.get("reason") or e.get("notification_type"))
        for e in logged_events(workspace)
    ]
    assert seen == [
        ("SessionStart", "startup"),
        ("Notification", "permission_prompt"),
        ("SessionEnd", "clear"),
        ("SessionStart", "clear"),
        ("SessionEnd", "prompt_input_exit"),
    ]
    first = notification["session_id"]
    ended = [e for e in caretz.events(first) if e["type"] == "Hook.Ran"]
    assert [e["event"] for e in ended] == ["SessionStart", "Notification", "SessionEnd"]
    assert [e["event"] for e in caretz.events(second) if e["type"] == "Hook.Ran"] == [
        "SessionStart",
        "SessionEnd",
    ]


def test_session_end_runs_when_a_headless_run_ends_and_is_logged(caretz, server, workspace):
    log = write_hook(workspace, "log", LOG_EVENT)
    project_settings(workspace, {"hooks": {"SessionEnd": [hooks_entry(log, "other")]}})
    server.add(text("Done."))

    run = caretz("-p", "hello")

    assert run.code == 0, run.stderr
    (event,) = logged_events(workspace)
    assert event["hook_event_name"] == "SessionEnd" and event["reason"] == "other"
    assert event["session_id"] == run.session_id
    events = caretz.events(run.session_id)
    ran = [e for e in events if e["type"] == "Hook.Ran"]
    assert [e["event"] for e in ran] == ["SessionEnd"]
    assert types(events).index("Hook.Ran") > types(events).index("Turn.Ended")


def test_subagent_stop_blocks_once_then_the_subagent_finishes(caretz, server, workspace):
    hook = write_hook(workspace, "subagent", BLOCK_SUBAGENT_ONCE)
    project_settings(workspace, {"hooks": {"SubagentStop": [hooks_entry(hook, "tester")]}})
    server.add(
        tool("task", agent="tester", prompt="Run the tests and report."),
        text("2 tests fail."),  # the subagent's first report: the hook blocks it
        text("2 tests fail: test_a, test_b."),  # the subagent goes on
        text("The tester found test_a and test_b failing."),
    )

    run = caretz("-p", "check the tests")

    assert run.code == 0, run.stderr
    main_first, child_first, child_again, main_second = server.requests
    carried = sent_text(child_again.messages[-1]["content"])
    assert "Automated message from the user's SubagentStop hook" in carried
    assert "also list the failing test names" in carried
    result = main_second.messages[-1]["content"][0]
    assert result["content"] == "2 tests fail: test_a, test_b."
    first, second = logged_events(workspace)
    assert [first["stop_hook_active"], second["stop_hook_active"]] == [False, True]
    assert first["agent_type"] == second["agent_type"] == "tester"
    assert first["agent_id"] and first["agent_id"] == second["agent_id"]
    assert first["last_assistant_message"] == "2 tests fail."
    assert second["last_assistant_message"] == "2 tests fail: test_a, test_b."
    decisions = [e["decision"] for e in caretz.events(run.session_id) if e["type"] == "Hook.Ran"]
    assert decisions == ["block", None]


def test_post_tool_use_failure_sees_a_failed_bash_call_and_its_stderr_reaches_the_model(
    caretz, server, workspace
):
    failure = write_hook(workspace, "failure", FAILURE_HINT)
    log = write_hook(workspace, "log", LOG_EVENT)
    project_settings(
        workspace,
        {
            "hooks": {
                "PostToolUseFailure": [hooks_entry(failure, "Bash")],
                "PostToolUse": [hooks_entry(log, "Bash")],  # only for calls that succeed
            }
        },
    )
    server.add(
        tool("bash", command="echo compiling; exit 3"),
        tool("bash", command="echo fine"),
        text("Noted."),
    )

    run = caretz("-p", "build it")

    assert run.code == 0, run.stderr
    failed = server.requests[1].messages[-1]["content"][0]
    assert failed["is_error"] is True
    assert "compiling" in failed["content"]
    assert "the build is broken; run make clean first" in failed["content"]
    assert "PostToolUseFailure hook" in failed["content"]
    events = logged_events(workspace)
    assert [e["hook_event_name"] for e in events] == ["PostToolUseFailure", "PostToolUse"]
    assert events[0]["tool_name"] == "Bash"
    assert events[0]["tool_input"]["command"] == "echo compiling; exit 3"
    assert "compiling" in events[0]["error"] and events[0]["is_interrupt"] is False
    assert "tool_response" not in events[0]
    assert events[1]["tool_input"]["command"] == "echo fine"


def test_an_async_hook_runs_without_being_waited_for_and_decides_nothing(caretz, server, workspace):
    slow = write_hook(workspace, "slow", SLOW_MARKER)
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": slow, "async": True}]}
    project_settings(workspace, {"hooks": {"PostToolUse": [entry]}})
    server.add(
        tool("bash", command="echo first"),
        tool("bash", command="cat async-done.txt || echo not yet; touch go.txt"),
        text("Done."),
    )

    run = caretz("-p", "go")

    assert run.code == 0, run.stderr
    first = server.requests[1].messages[-1]["content"][0]
    assert first["content"].strip() == "first"  # its exit 2 blocked nothing
    second = server.requests[2].messages[-1]["content"][0]
    assert "not yet" in second["content"]  # the run went on while the hook waited
    assert (workspace / "async-done.txt").read_text() == "done"  # waited for at the end
    ran = [e for e in caretz.events(run.session_id) if e["type"] == "Hook.Ran"]
    assert len(ran) >= 1 and all(e["background"] is True for e in ran)
    assert all(e["decision"] is None for e in ran)
    assert "too late to block anything" in ran[0]["stderr"]


def test_claude_code_events_caretz_does_not_run_are_skipped_with_a_note(caretz, server, workspace):
    log = write_hook(workspace, "log", LOG_EVENT)
    project_settings(
        workspace,
        {
            "permissions": {"allow": []},
            "hooks": {
                "PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command"}]}],
                "WorktreeCreate": [hooks_entry("echo made")],
                "SessionStart": [
                    hooks_entry(log),
                    {"hooks": [{"type": "http", "url": "http://127.0.0.1:9/hook"}]},
                ],
            },
        },
    )
    server.add(text("Hello."))

    run = caretz("-p", "hello")

    assert run.code == 0, run.stderr
    assert (
        "hooks: caretz does not run PermissionRequest, WorktreeCreate hooks "
        "(.caretz/settings.json); they are skipped"
    ) in run.stderr
    assert (
        "hooks: caretz runs only command hooks; the http hook of SessionStart is skipped "
        "(.caretz/settings.json)"
    ) in run.stderr
    assert [e["hook_event_name"] for e in logged_events(workspace)] == ["SessionStart"]
    skipped = [e for e in caretz.events(run.session_id) if e["type"] == "Hook.Skipped"]
    assert skipped[0]["events"] == ["PermissionRequest", "WorktreeCreate"]


def test_a_misspelt_event_is_refused_with_a_suggestion(caretz, server, workspace):
    project_settings(workspace, {"hooks": {"PreToolUSe": [hooks_entry("true")]}})

    run = caretz("-p", "go")

    assert run.code == 2
    settings = workspace / ".caretz" / "settings.json"
    assert run.stderr.strip() == (
        f"caretz: {settings}: hooks.PreToolUSe: unknown key (did you mean 'PreToolUse'?)"
    )
    assert server.requests == []


def test_an_http_hook_that_could_decide_is_refused(caretz, server, workspace):
    entry = {"matcher": "Bash", "hooks": [{"type": "http", "url": "http://127.0.0.1:9/check"}]}
    project_settings(workspace, {"hooks": {"PreToolUse": [entry]}})

    run = caretz("-p", "go")

    assert run.code == 2
    line = run.stderr.strip()
    assert re.fullmatch(
        r"caretz: .*settings\.json: hooks\.PreToolUse: \[0\]\.hooks\[0\]\.type: caretz runs "
        r"only command hooks, and a hook of type 'http' on PreToolUse could decide what "
        r"happens, so it is refused",
        line,
    ), line
    assert server.requests == []
