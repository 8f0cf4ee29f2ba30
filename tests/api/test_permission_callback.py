"""on_permission answers what a person would be asked; without it nothing that asks runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from caretz.api import Answer, Finished, PermissionDecision, Question
from tests.api.conftest import events_of
from tests.modelserver import text, tool


def results(session):
    return [e for e in events_of(session) if e["type"] == "Tool.Result"]


def test_true_allows_the_call_once(server, open_session, workspace):
    asked: list[Question] = []

    def allow(question: Question) -> bool:
        asked.append(question)
        return True

    server.add(tool("bash", command="echo allowed > out.txt"), text("Done."))
    session = open_session(permission_mode="ask", on_permission=allow)
    result = session.run("write the file")

    (question,) = asked
    assert (question.tool, question.summary) == ("bash", "echo allowed > out.txt")
    assert question.arguments["command"] == "echo allowed > out.txt"
    assert question.reason  # why it asks, as the interactive prompt says
    assert (workspace / "out.txt").read_text() == "allowed\n"
    assert result.permission_denials == () and result.text == "Done."
    assert not (workspace / ".caretz" / "settings.json").exists()  # once: no rule saved


def test_false_refuses_and_the_result_says_so(server, open_session, workspace):
    server.add(tool("bash", command="echo no > out.txt"), text("I could not."))
    session = open_session(permission_mode="ask", on_permission=lambda question: False)
    events = list(session.stream("write the file"))

    assert not (workspace / "out.txt").exists()
    (decision,) = [e for e in events if isinstance(e, PermissionDecision)]
    assert (decision.tool, decision.allowed, decision.asked) == ("bash", False, True)
    result = events[-1].result if isinstance(events[-1], Finished) else None
    assert result is not None and result.status == "done"
    (denial,) = result.permission_denials
    assert (denial.tool, denial.input) == ("bash", "echo no > out.txt")
    assert "declined" in denial.reason
    (refused,) = results(session)
    assert not refused["ok"] and "The user declined" in refused["output"]


def test_a_note_reaches_the_model_and_always_saves_the_rule(server, open_session, workspace):
    answers = iter([Answer("no", "use printf instead"), Answer("always")])
    server.add(
        tool("bash", command="echo one"),
        tool("bash", command="printf two"),
        tool("bash", command="printf two"),
        text("Done."),
    )
    session = open_session(permission_mode="ask", on_permission=lambda q: next(answers))
    session.run("print things")

    declined = results(session)[0]["output"]
    assert "The user's note: use printf instead" in declined
    settings = json.loads((workspace / ".caretz" / "settings.json").read_text())
    assert settings["permissions"]["allow"] == ["Bash(printf two)"]  # the rule it offered
    assert [r["ok"] for r in results(session)] == [False, True, True]  # the third not asked


def test_without_a_callback_nothing_that_asks_runs(server, open_session, workspace):
    server.add(tool("bash", command="echo x > out.txt"), text("Refused."))
    result = open_session(permission_mode="ask").run("write it")
    assert not (workspace / "out.txt").exists()
    assert [d.tool for d in result.permission_denials] == ["bash"]


def test_a_failing_callback_refuses_ends_the_turn_and_raises_after(server, open_session, workspace):
    def broken(question: Question) -> bool:
        raise LookupError("no such policy")

    server.add(tool("bash", command="echo x > out.txt"))
    session = open_session(permission_mode="ask", on_permission=broken)
    with pytest.raises(LookupError, match="no such policy"):
        session.run("write it")

    assert not (workspace / "out.txt").exists()
    assert len(server.requests) == 1  # the turn ended at the call: no request after it
    (refused,) = results(session)
    assert not refused["ok"] and "on_permission callback failed" in refused["output"]
    server.add(text("Still here."))
    assert session.run("hello").text == "Still here."  # the session goes on


def test_the_projects_allow_rules_hold_only_when_the_client_trusts_the_project(
    server, open_session, workspace, env
):
    (workspace / ".caretz").mkdir()
    rules = {"permissions": {"allow": ["Bash(touch:*)"]}}
    (workspace / ".caretz" / "settings.json").write_text(json.dumps(rules))
    server.add(tool("bash", command="touch made.txt"), text("Tried."))
    server.add(tool("bash", command="touch made.txt"), text("Made."))

    untrusted = open_session(permission_mode="ask").run("make it")
    trusted = open_session(permission_mode="ask", trust_project=True).run("make it")

    assert [d.tool for d in untrusted.permission_denials] == ["bash"]
    assert trusted.permission_denials == () and (workspace / "made.txt").exists()
    assert not (Path(env["CARETZ_DATA_DIR"]) / "project-trust.json").exists()  # nothing stored
