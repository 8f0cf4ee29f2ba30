"""Hooks around turns through the real CLI: SessionStart, UserPromptSubmit, Stop, and the
loop guard's LoopGuardJudged / LoopGuardStopped driven by a real loop-guard stop."""

from __future__ import annotations

import json

from tests.e2e import test_loop_guard
from tests.e2e.conftest import types
from tests.e2e.hook_scripts import (
    LOG_EVENT,
    hooks_entry,
    logged_events,
    project_settings,
    write_hook,
)
from tests.e2e.test_loop_guard import GO_TEST, JUDGE, STUCK, verdict, with_judge
from tests.modelserver import text, tool

NO_DEPLOYS = """
import json, sys
event = json.load(sys.stdin)
if "deploy" in event["prompt"]:
    print("no deploys on Fridays", file=sys.stderr)
    sys.exit(2)
print("Ticket ABC-123 is the one being worked on.")
"""

go_project = test_loop_guard.go_project  # the fake Go project whose tests keep failing


def last_user_text(request) -> str:
    content = request.messages[-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


def test_user_prompt_submit_blocks_a_prompt_before_any_model_call(caretz, server, workspace):
    command = write_hook(workspace, "no_deploys", NO_DEPLOYS)
    project_settings(workspace, {"hooks": {"UserPromptSubmit": [hooks_entry(command)]}})

    run = caretz("-p", "deploy to production")

    assert run.code == 6
    assert server.requests == []  # the prompt was not sent
    assert "no deploys on Fridays" in run.stderr
    assert "a UserPromptSubmit hook blocked the prompt; it was not sent" in run.stderr
    events = caretz.events(run.session_id)
    assert "Turn.Started" not in types(events)
    blocked = [e for e in events if e["type"] == "Hook.PromptBlocked"]
    assert blocked[0]["prompt"] == "deploy to production"


def test_user_prompt_submit_stdout_is_context_sent_with_the_prompt(caretz, server, workspace):
    command = write_hook(workspace, "no_deploys", NO_DEPLOYS)
    project_settings(workspace, {"hooks": {"UserPromptSubmit": [hooks_entry(command)]}})
    server.add(text("Looking at ABC-123."))

    run = caretz("-p", "fix the bug")

    assert run.code == 0, run.stderr
    sent = last_user_text(server.requests[0])
    assert sent.startswith("fix the bug\n\n[caretz] Context from the user's UserPromptSubmit hook")
    assert sent.endswith("Ticket ABC-123 is the one being worked on.")


def test_session_start_runs_with_its_source_and_its_output_reaches_the_first_prompt(
    caretz, server, workspace
):
    log = write_hook(workspace, "log", LOG_EVENT)
    hello = "echo 'The staging database is read-only today.'"
    project_settings(
        workspace, {"hooks": {"SessionStart": [hooks_entry(log), hooks_entry(hello, "startup")]}}
    )
    server.add(text("Noted."), text("Again."))

    run = caretz("-p", "hello")
    resumed = caretz("-p", "and again", "--resume", run.session_id)

    assert run.code == 0 and resumed.code == 0, run.stderr + resumed.stderr
    first, second = logged_events(workspace)
    assert first["hook_event_name"] == "SessionStart" and first["source"] == "startup"
    assert first["model"] == "anthropic/claude-test" and first["session_id"] == run.session_id
    assert second["source"] == "resume"
    assert "The staging database is read-only today." in last_user_text(server.requests[0])
    # The "startup" matcher does not run on resume.
    assert "staging database" not in last_user_text(server.requests[1])


def test_a_stop_hook_carries_the_work_on_a_bounded_number_of_times(caretz, server, workspace):
    log = write_hook(workspace, "log", LOG_EVENT)
    nag = "echo 'run the tests before you stop' >&2; exit 2"
    project_settings(workspace, {"hooks": {"Stop": [hooks_entry(log), hooks_entry(nag)]}})
    server.add(text("Done 1."), text("Done 2."), text("Done 3."), text("Done 4."))

    run = caretz("-p", "do it")

    assert run.code == 0, run.stderr
    assert len(server.requests) == 4  # the answer, then at most 3 continuations
    marked = last_user_text(server.requests[1])
    assert marked.startswith("[caretz] Automated message from the user's Stop hook")
    assert marked.endswith("run the tests before you stop")
    logged = logged_events(workspace)
    assert [e["stop_hook_active"] for e in logged] == [False, True, True, True]
    assert [e["last_assistant_message"] for e in logged] == ["Done 1.", "Done 2.", "Done 3.",
                                                              "Done 4."]  # fmt: skip
    assert "Stop hooks carried the work on 3 times; the turn ends" in run.stderr
    events = caretz.events(run.session_id)
    started = [e for e in events if e["type"] == "Turn.Started"]
    assert [e["from_user"] for e in started] == [True, False, False, False]


def test_the_loop_guard_still_counts_the_same_answer_across_stop_continuations(
    caretz, server, workspace
):
    nag = "echo 'not yet' >&2; exit 2"
    project_settings(workspace, {"hooks": {"Stop": [hooks_entry(nag)]}})
    server.add(*[text("All done.") for _ in range(4)])
    server.add(verdict(STUCK), model=JUDGE)  # the stop needs the judge's "stuck"

    run = caretz("-p", "do it", *with_judge("active"))

    assert run.code == 3, run.stderr  # the guard ended it before the hooks' bound did
    events = caretz.events(run.session_id)
    stopped = [e for e in events if e["type"] == "LoopGuard.Stopped"]
    assert stopped and stopped[0]["detector"] == "same-answer"
    assert "Hook.StopLimit" not in types(events)


def test_a_loop_guard_stopped_hook_is_told_the_verdict_and_the_session(caretz, server, go_project):
    tell = 'cat > "$CARETZ_PROJECT_DIR/stopped.json"'
    judged = write_hook(go_project, "log", LOG_EVENT)
    project_settings(
        go_project,
        {
            "hooks": {
                "LoopGuardStopped": [hooks_entry(tell)],
                "LoopGuardJudged": [hooks_entry(judged, "redirect|stop")],
            }
        },
    )
    server.add(*[tool("bash", command=GO_TEST) for _ in range(6)])
    server.add(text("I changed nothing that worked; I need the build tags."))
    server.add(verdict(STUCK), verdict(STUCK), model=JUDGE)

    run = caretz("-p", "make the integration tests pass", *with_judge("active"))

    assert run.code == 3, run.stderr
    told = json.loads((go_project / "stopped.json").read_text())
    assert told["hook_event_name"] == "LoopGuardStopped"
    assert told["session_id"] == run.session_id
    assert told["notice"] and told["detector"] and told["judged"] is True
    assert told["verdict"]["stuck"] is True
    assert told["verdict"]["reason"] == STUCK["reason"]
    judgements = logged_events(go_project)
    assert [e["action"] for e in judgements] == ["redirect", "stop"]
    assert all(e["verdict"]["try_instead"] == STUCK["try_instead"] for e in judgements)
