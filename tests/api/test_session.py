"""caretz.Session: run and stream against the loopback server, bad input, one run at a
time, and a session the CLI carries on afterwards."""

from __future__ import annotations

import subprocess
import sys

import pytest

import caretz
from caretz.api import (
    ConfigError,
    Finished,
    SessionEvent,
    TextDelta,
    ToolCall,
    ToolCallResult,
    Usage,
)
from tests.api.conftest import API_KEY, events_of, sessions_folder
from tests.modelserver import Reply, text, tool


def test_run_returns_the_answer_and_what_the_run_used(server, open_session, workspace):
    (workspace / "notes.txt").write_text("the build is green\n")
    server.add(
        Reply(tool_calls=[("read", {"path": "notes.txt"})], usage=(100, 20, 0)),
        text("The build is green.", usage=(150, 10, 0)),
    )
    session = open_session()
    result = session.run("what do the notes say?")

    assert (result.status, result.exit_code, result.ok) == ("done", 0, True)
    assert result.text == "The build is green."
    assert result.session_id == session.id and result.message == ""
    assert result.tool_calls == 1
    assert result.usage == Usage(input_tokens=250, output_tokens=30)
    assert result.cost_usd is None  # claude-test has no known price
    assert result.permission_denials == () and result.guard_verdicts == ()
    assert server.requests[0].headers["x-api-key"] == API_KEY
    assert "what do the notes say?" in str(server.requests[0].messages)
    # The session's log is caretz's own: the tool's result is in it.
    (read,) = [e for e in events_of(session) if e["type"] == "Tool.Result"]
    assert "the build is green" in read["output"]


def test_a_second_run_carries_the_conversation_on_and_counts_only_its_own_use(server, open_session):
    server.add(text("one", usage=(100, 5, 0)), text("two", usage=(300, 7, 0)))
    session = open_session()
    session.run("first")
    second = session.run("second")
    assert second.text == "two" and second.usage == Usage(input_tokens=300, output_tokens=7)
    assert "first" in str(server.requests[1].messages)


def test_stream_yields_the_typed_events_as_they_happen_then_the_result(server, open_session):
    server.add(tool("bash", command="echo hi"), text("It printed hi, as asked."))
    session = open_session()
    events = list(session.stream("run echo hi"))

    assert isinstance(events[-1], Finished)
    result = events[-1].result
    assert (result.status, result.text) == ("done", "It printed hi, as asked.")
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == result.text  # streamed in pieces
    (call,) = [e for e in events if isinstance(e, ToolCall)]
    (done,) = [e for e in events if isinstance(e, ToolCallResult)]
    assert (call.name, call.arguments) == ("bash", {"command": "echo hi"})
    assert (done.call_id, done.ok, done.output.strip()) == (call.id, True, "hi")
    assert events.index(call) < events.index(done)
    kinds = [e.type for e in events if isinstance(e, SessionEvent)]
    assert kinds[0] == "Turn.Started" and "Turn.Ended" in kinds


def test_bad_input_is_one_config_error_and_nothing_starts(open_session, env, server):
    with pytest.raises(ConfigError) as bad_mode:
        open_session(permission_mode="sometimes")
    assert str(bad_mode.value).startswith("permission_mode='sometimes': ")
    with pytest.raises(ConfigError, match="unknown profile 'nope'"):
        open_session(profile="nope")
    with pytest.raises(ConfigError, match="no-such-session"):
        open_session(resume="no-such-session")
    assert not sessions_folder(env).exists() or not any(sessions_folder(env).iterdir())
    assert server.requests == []


def test_a_slash_name_that_is_no_command_is_one_line_and_nothing_is_sent(
    server, open_session, workspace
):
    commands = workspace / ".caretz" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("Review pull request $1.\n")
    session = open_session()

    typo = session.run("/revew 42")

    assert (typo.status, typo.exit_code) == ("usage_error", 2)
    assert typo.message == "unknown command /revew: did you mean /review? (nothing was sent)"
    assert typo.text == "" and server.requests == []


def test_one_run_at_a_time(server, open_session):
    server.add(text("streamed"))
    session = open_session()
    events = session.stream("first")
    next(events)  # the stream's work has started
    with pytest.raises(RuntimeError, match="one run at a time"):
        session.run("second")
    assert isinstance(list(events)[-1], Finished)
    session.close()
    with pytest.raises(RuntimeError, match="closed"):
        session.run("third")


def test_the_cli_carries_on_the_apis_session_with_continue(server, open_session, env, workspace):
    server.add(text("Noted: the password is swordfish."), text("It was swordfish."))
    session = open_session()
    session.run("remember: the password is swordfish")
    session.close()

    done = subprocess.run(
        [sys.executable, "-m", "caretz", "-c", "-p", "what was the password?"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "It was swordfish."
    assert f"session {session.id}" in done.stderr
    resumed = server.requests[1].messages
    assert "remember: the password is swordfish" in str(resumed)
    assert "Noted: the password is swordfish." in str(resumed)
    types = [e["type"] for e in events_of(session)]
    assert types.count("Session.Started") == 1 and "Session.Resumed" in types


def test_a_session_resumes_one_the_cli_started(server, open_session, env, workspace):
    server.add(text("first answer"), text("second answer"))
    subprocess.run(
        [sys.executable, "-m", "caretz", "-p", "hello"],
        cwd=workspace,
        env=env,
        capture_output=True,
        check=True,
        timeout=120,
    )
    session = open_session(resume="latest")
    assert session.run("again").text == "second answer"
    assert "first answer" in str(server.requests[1].messages)


def test_import_caretz_stays_light_and_session_is_found_on_first_use():
    check = (
        "import sys, caretz; assert 'caretz.api' not in sys.modules, 'loaded at import'; "
        "from caretz import Session; assert 'caretz.api' in sys.modules; "
        "assert 'caretz.app.session' not in sys.modules, 'the app loads when a session opens'; "
        "print(Session.__module__)"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "caretz.api.session"
    assert caretz.Session is caretz.api.Session
