"""The task tool: subagents with their own conversation, inheriting the loop guard."""

from __future__ import annotations

from tests.modelserver import text, tool


def test_a_subagent_does_a_job_and_reports_back(caretz, server, workspace):
    (workspace / "data.txt").write_text("the secret number is 7\n")
    server.add(
        tool("task", agent="reader", prompt="Read data.txt and tell me the number."),
        tool("read", path="data.txt"),  # the subagent's first request
        text("The number is 7."),  # the subagent's report
        text("The subagent found 7."),  # the main agent's answer
    )

    run = caretz("-p", "find the number")

    assert run.code == 0, run.stderr
    assert "The subagent found 7." in run.stdout
    main_first, child_first, child_second, main_second = server.requests
    # The subagent starts from an empty conversation with its own instructions.
    assert child_first.messages[0]["content"] == "Read data.txt and tell me the number."
    assert "subagent named 'reader'" in child_first.system
    assert "task" in child_first.tool_names
    result = main_second.messages[-1]["content"][0]
    assert result["type"] == "tool_result" and result["content"] == "The number is 7."
    events = caretz.events(run.session_id)
    child_calls = [e for e in events if e["type"] == "Tool.Called" and e["agent"] == "reader"]
    assert [e["call"]["name"] for e in child_calls] == ["read"]
    # Resume rebuilds only the main agent's conversation.
    listing = caretz("sessions", "list")
    assert "1 turn(s)" in listing.stdout


def test_a_circular_hand_off_is_refused_by_the_active_guard(caretz, server):
    server.add(
        tool("task", agent="reviewer", prompt="Review the change."),
        tool("task", agent="main", prompt="Please do the change yourself."),  # back to main
        text("I could not hand it back; the change looks fine."),
        text("Reviewed."),
    )

    run = caretz("-p", "change and review", "--loop-guard", "active")

    assert run.code == 0, run.stderr
    refusal = server.requests[2].messages[-1]["content"][0]
    assert refusal["is_error"] is True and "refused and did not run" in refusal["content"]
    assert "main → reviewer → main" in refusal["content"]
    assert "[loop-guard] subagents:" in run.stderr
