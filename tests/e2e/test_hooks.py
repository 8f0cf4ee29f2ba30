"""Tool hooks through the real CLI (`caretz -p`): PreToolUse and PostToolUse hook scripts
in the project's `.caretz/settings.json`, the loopback model server, real commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.conftest import types
from tests.e2e.hook_scripts import (
    LOG_EVENT,
    NO_PUSH,
    REWRITE,
    hooks_entry,
    logged_events,
    permission_decision,
    project_settings,
    write_hook,
)
from tests.modelserver import RecordedRequest, calls, text, tool
from tests.sandbox.helpers import marker, sleepers, wait_for


def tool_results(request: RecordedRequest) -> list[str]:
    """The text of each tool result in the request's last user message."""
    results = []
    for block in request.messages[-1]["content"]:
        if block.get("type") == "tool_result":
            content = block["content"]
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content)
            results.append(content)
    return results


def hook_runs(events: list[dict[str, Any]], event: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "Hook.Ran" and e["event"] == event]


def test_a_pre_tool_use_hook_blocks_git_push_and_the_model_reads_why(caretz, server, workspace):
    command = write_hook(workspace, "no_push", NO_PUSH)
    project_settings(workspace, {"hooks": {"PreToolUse": [hooks_entry(command, "Bash")]}})
    server.add(tool("bash", command="echo pushed > pushed.txt && git push origin main"))
    server.add(tool("bash", command="echo fine > fine.txt"))
    server.add(text("I will open a pull request instead."))

    run = caretz("-p", "ship it")

    assert run.code == 0, run.stderr
    blocked = tool_results(server.requests[1])[0]
    assert "pushing is not allowed from this project; open a pull request" in blocked
    assert "blocked and did not run" in blocked
    assert not (workspace / "pushed.txt").exists()  # the command never ran
    assert (workspace / "fine.txt").read_text() == "fine\n"  # the hook let this one through
    assert "[hook] PreToolUse" in run.stderr and "blocked a bash call" in run.stderr
    runs = hook_runs(caretz.events(run.session_id), "PreToolUse")
    assert [(r["exit_code"], r["decision"]) for r in runs] == [(2, "block"), (0, None)]
    assert runs[0]["about"] == "bash" and "pushing is not allowed" in runs[0]["stderr"]
    shown = caretz("sessions", "show", run.session_id)
    assert "[hook PreToolUse]" in shown.stdout and "exit 2" in shown.stdout


def test_a_hook_rewrites_the_input_and_the_rules_judge_what_it_wrote(caretz, server, workspace):
    (workspace / "v").mkdir()
    (workspace / "v" / "keep.txt").write_text("precious")
    command = write_hook(workspace, "rewrite", REWRITE)
    project_settings(
        workspace,
        {
            "permissions": {"deny": ["Bash(rm:*)"]},
            "hooks": {"PreToolUse": [hooks_entry(command, "bash")]},
        },
    )
    server.add(calls(("bash", {"command": "echo one"}), ("bash", {"command": "echo two"})))
    server.add(text("done"))

    run = caretz("-p", "say one and two")

    assert run.code == 0, run.stderr
    ran, refused = tool_results(server.requests[1])
    assert ran.startswith("REWRITTEN-ONE")  # the tool ran with the hook's input
    assert '"command": "echo REWRITTEN-ONE"' in ran  # and the model is told it changed
    assert "denied by the deny rule Bash(rm:*)" in refused  # the rules judged `rm -rf v`
    assert (workspace / "v" / "keep.txt").read_text() == "precious"
    events = caretz.events(run.session_id)
    assert [r["decision"] for r in hook_runs(events, "PreToolUse")] == ["rewrite", "rewrite"]
    denied = [e for e in events if e["type"] == "Permission.Decided"]
    assert [d["input"] for d in denied] == ["rm -rf v"]


def test_a_hooks_allow_skips_asking_but_never_a_deny_rule(caretz, server, workspace):
    command = write_hook(workspace, "allow", permission_decision("allow", "trusted"))
    project_settings(
        workspace,
        {
            "permissions": {"deny": ["Bash(rm:*)"]},
            "hooks": {"PreToolUse": [hooks_entry(command)]},
        },
    )
    server.add(calls(("bash", {"command": "echo asked"}), ("bash", {"command": "rm -rf x"})))
    server.add(text("done"))

    # In ask mode every command asks, and nobody can answer a -p run: the hook's allow
    # lets the first run; the deny rule still refuses the second.
    run = caretz("-p", "go", "--permission-mode", "ask")

    assert run.code == 0, run.stderr
    ran, refused = tool_results(server.requests[1])
    assert ran.startswith("asked")
    assert "denied by the deny rule Bash(rm:*)" in refused


def test_a_hook_that_asks_is_a_refusal_where_nobody_can_answer(caretz, server, workspace):
    command = write_hook(workspace, "ask", permission_decision("ask", "a human should look"))
    project_settings(workspace, {"hooks": {"PreToolUse": [hooks_entry(command, "Bash")]}})
    server.add(tool("bash", command="echo hi > hi.txt"), text("ok"))

    run = caretz("-p", "go")  # auto mode: this command would run in the sandbox unasked

    assert run.code == 0, run.stderr
    refused = tool_results(server.requests[1])[0]
    assert "asks first: a human should look" in refused
    assert not (workspace / "hi.txt").exists()


def test_post_tool_use_sees_the_result_and_its_stderr_reaches_the_model(caretz, server, workspace):
    log = write_hook(workspace, "log", LOG_EVENT)
    lint = 'echo "lint: line 1 is too long" >&2; exit 2'
    project_settings(
        workspace,
        {"hooks": {"PostToolUse": [hooks_entry(log, "Bash"), hooks_entry(lint, "Bash")]}},
    )
    server.add(tool("bash", command="echo from-the-tool"), text("ok"))

    run = caretz("-p", "go")

    assert run.code == 0, run.stderr
    (event,) = logged_events(workspace)
    assert event["hook_event_name"] == "PostToolUse" and event["tool_name"] == "Bash"
    assert event["tool_input"]["command"] == "echo from-the-tool"
    assert event["tool_response"]["output"].startswith("from-the-tool")
    assert event["tool_response"]["success"] is True
    assert event["session_id"] == run.session_id
    assert event["transcript_path"].endswith(f"{run.session_id}/events.jsonl")
    result = tool_results(server.requests[1])[0]
    assert result.startswith("from-the-tool")
    assert "lint: line 1 is too long" in result  # the tool ran; the model reads the hook too


def test_a_hook_that_hangs_is_killed_at_its_timeout_with_what_it_started(caretz, server, workspace):
    # The hook runs in the sandbox's PID namespace: its processes are found by their sleeps.
    child, shell = marker(), marker()
    hang = f'sleep {child} & echo started > "$CARETZ_PROJECT_DIR/started"; sleep {shell}'
    project_settings(workspace, {"hooks": {"PreToolUse": [hooks_entry(hang, timeout=1)]}})
    server.add(tool("bash", command="echo still-ran"), text("ok"))

    run = caretz("-p", "go")

    assert run.code == 0, run.stderr
    assert "timed out after 1 s and was killed" in run.stderr
    assert tool_results(server.requests[1])[0].startswith("still-ran")  # a warning only
    assert (workspace / "started").exists()
    assert wait_for(lambda: not sleepers(child) and not sleepers(shell))
    (ran,) = hook_runs(caretz.events(run.session_id), "PreToolUse")
    assert ran["timed_out"] is True and ran["exit_code"] is None
    assert ran["decision"] == "warning"


def test_any_other_exit_is_a_warning_and_the_run_goes_on(caretz, server, workspace):
    project_settings(workspace, {"hooks": {"PreToolUse": [hooks_entry("echo oops >&2; exit 1")]}})
    server.add(tool("bash", command="echo went-on"), text("ok"))

    run = caretz("-p", "go")

    assert run.code == 0, run.stderr
    assert "[hook] PreToolUse `echo oops >&2; exit 1` exited with 1: oops" in run.stderr
    assert tool_results(server.requests[1])[0].startswith("went-on")


def test_continue_false_ends_the_turn(caretz, server, workspace):
    stop = """echo '{"continue": false, "stopReason": "the build is frozen"}'"""
    project_settings(workspace, {"hooks": {"PreToolUse": [hooks_entry(stop)]}})
    server.add(tool("bash", command="echo no > no.txt"), text("never sent"))

    run = caretz("-p", "go")

    assert run.code == 6
    assert "the build is frozen" in run.stderr
    assert len(server.requests) == 1 and not (workspace / "no.txt").exists()
    assert types(caretz.events(run.session_id))[-1] == "Turn.Ended"


def test_a_malformed_hooks_entry_is_one_line_naming_the_file_and_key(caretz, server, workspace):
    project_settings(
        workspace, {"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"command": "x"}]}]}}
    )

    run = caretz("-p", "go")

    assert run.code == 2
    settings = workspace / ".caretz" / "settings.json"
    assert run.stderr.strip().splitlines() == [
        f"caretz: {settings}: hooks.PreToolUse[0].matcher: '(' is not a regular expression "
        "(missing ), unterminated subpattern at position 0)"
    ]
    assert server.requests == []


def test_a_misspelt_hook_event_in_profiles_json_is_refused(caretz, server):
    path = caretz.write_config(
        {"profiles": {"general": {"hooks": {"PreToolUs": [hooks_entry("true")]}}}}
    )

    run = caretz("-p", "go")

    assert run.code == 2
    assert run.stderr.strip() == (
        f"caretz: {path}: profiles.general.hooks.PreToolUs: unknown key "
        "(did you mean 'PreToolUse'?)"
    )
    assert server.requests == []


def test_hooks_get_no_provider_keys_and_the_project_dir(caretz, server, workspace: Path):
    dump = 'env > "$CARETZ_PROJECT_DIR/hook-env.txt"; pwd >> "$CARETZ_PROJECT_DIR/hook-env.txt"'
    project_settings(workspace, {"hooks": {"SessionStart": [hooks_entry(dump)]}})
    server.add(text("hi"))

    run = caretz("-p", "go")

    assert run.code == 0, run.stderr
    seen = (workspace / "hook-env.txt").read_text()
    assert "ANTHROPIC_API_KEY" not in seen and "sk-ant-test" not in seen
    assert f"CARETZ_PROJECT_DIR={workspace}" in seen
    assert f"CLAUDE_PROJECT_DIR={workspace}" in seen
    assert seen.rstrip().endswith(str(workspace))  # run from the project's folder
