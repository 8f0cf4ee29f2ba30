"""What a hook's exit code and stdout mean (hooks/output.py), on real command runs'
results as the runner reports them."""

from __future__ import annotations

import json

from caretz.hooks.output import read_result
from caretz.hooks.runner import CommandRun


def ran(code: int | None, stdout: str = "", stderr: str = "", **kw) -> CommandRun:
    return CommandRun(exit_code=code, stdout=stdout, stderr=stderr, duration_s=0.01, **kw)


def pre(data: dict) -> CommandRun:
    return ran(0, json.dumps(data))


def test_exit_2_blocks_with_stderr_and_ignores_stdout():
    result = read_result("PreToolUse", ran(2, '{"decision": "approve"}', "no pushing\n"), 60)
    assert result.outcome == "block" and result.reason == "no pushing"
    assert read_result("Stop", ran(2), 60).reason == "the hook exited with 2 and gave no reason"


def test_other_exits_timeouts_and_failed_starts_are_warnings():
    assert read_result("Stop", ran(1, "", "boom\nmore"), 60).warning == "exited with 1: boom more"
    timed_out = read_result("Stop", ran(None, timed_out=True), 2.5)
    assert timed_out.outcome == "warning"
    assert timed_out.warning == "timed out after 2.5 s and was killed"
    assert read_result("Stop", ran(None, error="no bash"), 60).warning == "could not start: no bash"


def test_plain_stdout_is_context_only_where_claude_code_reads_it_so():
    assert read_result("UserPromptSubmit", ran(0, "ticket 7\n"), 60).context == "ticket 7"
    assert read_result("SessionStart", ran(0, "hello"), 60).context == "hello"
    assert read_result("PostToolUse", ran(0, "ignored"), 60).context == ""
    assert read_result("PostToolUse", ran(0, "{not json"), 60).decision is None


def test_pre_tool_use_permission_decisions_and_their_reasons():
    allow = read_result(
        "PreToolUse",
        pre({"hookSpecificOutput": {"permissionDecision": "allow",
                                    "permissionDecisionReason": "trusted"}}),
        60,
    )  # fmt: skip
    assert (allow.outcome, allow.permission, allow.reason) == ("ok", "allow", "trusted")
    deny = read_result(
        "PreToolUse", pre({"hookSpecificOutput": {"permissionDecision": "deny"}}), 60
    )
    assert (deny.outcome, deny.permission) == ("block", "deny")
    legacy = read_result("PreToolUse", pre({"decision": "block", "reason": "old style"}), 60)
    assert (legacy.outcome, legacy.reason) == ("block", "old style")
    approve = read_result("PreToolUse", pre({"decision": "approve"}), 60)
    assert approve.permission == "allow"


def test_what_cannot_be_read_is_read_the_safe_way():
    odd = read_result("PreToolUse", pre({"hookSpecificOutput": {"permissionDecision": "yes"}}), 60)
    assert odd.permission == "ask" and "caretz does not know" in odd.reason
    bad_input = read_result("PreToolUse", pre({"hookSpecificOutput": {"updatedInput": "rm"}}), 60)
    assert bad_input.outcome == "block" and "not a JSON object" in bad_input.reason


def test_updated_input_context_continue_and_system_message():
    data = {
        "continue": False,
        "stopReason": "frozen",
        "systemMessage": "heads up",
        "hookSpecificOutput": {"updatedInput": {"command": "ls"}, "additionalContext": "ctx"},
    }
    result = read_result("PreToolUse", pre(data), 60)
    assert result.updated_input == {"command": "ls"} and result.context == "ctx"
    assert result.stop and result.stop_reason == "frozen" and result.message == "heads up"
    assert result.decision == "stop"


def test_decision_block_on_other_events():
    stop = read_result("Stop", pre({"decision": "block", "reason": "tests fail"}), 60)
    assert (stop.outcome, stop.reason) == ("block", "tests fail")
    post = read_result("PostToolUse", pre({"decision": "block"}), 60)
    assert post.outcome == "block" and post.reason == "the hook blocked it"
