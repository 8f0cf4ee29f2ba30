"""stdin for headless runs, through the real CLI: piped text joined to -p, `-p -`, an open
pipe that sends nothing, and `--input-format stream-json` sessions."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from tests.e2e.conftest import WAIT_S, Caretz, PipeLines
from tests.modelserver import error, text


def user_text(request: Any, index: int = -1) -> str:
    """The text of a request's user message (the last one by default)."""
    users = [m for m in request.messages if m["role"] == "user"]
    content = users[index]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if block.get("type") == "text")


def json_lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def message(content: Any) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": content}}) + "\n"


def test_piped_text_reaches_the_request_after_the_prompt(caretz: Caretz, server):
    server.add(text("The disk is full."))
    run = caretz("-p", "summarize this log", stdin="boot ok\nerror: disk full\n")
    assert run.code == 0, run.stderr
    assert user_text(server.requests[0]) == (
        "summarize this log\n\n```\nboot ok\nerror: disk full\n```"
    )
    started = next(e for e in caretz.events(run.session_id) if e["type"] == "Turn.Started")
    assert started["prompt"].endswith("error: disk full\n```")  # the log keeps what was sent


def test_an_empty_pipe_adds_nothing(caretz: Caretz, server):
    server.add(text("Hi."))
    run = caretz("-p", "hello", stdin="")
    assert run.code == 0, run.stderr
    assert user_text(server.requests[0]) == "hello"


def test_dash_p_dash_reads_the_prompt_from_stdin(caretz: Caretz, server):
    server.add(text("Fixed."))
    run = caretz("-p", "-", stdin="fix the failing test\n")
    assert run.code == 0, run.stderr
    assert user_text(server.requests[0]) == "fix the failing test"


def test_dash_p_dash_with_nothing_to_read_is_a_usage_error(caretz: Caretz, server):
    run = caretz("-p", "-", "--output", "json", stdin="")
    assert run.code == 2
    assert run.stderr.strip() == (
        "caretz: -p - read an empty stdin: pipe the prompt in (caretz -p - < task.md)"
    )
    assert json_lines(run.stdout)[-1]["status"] == "usage_error"
    assert server.requests == []


def test_an_open_pipe_that_sends_nothing_does_not_hold_the_run(caretz: Caretz, server):
    server.add(text("Hi."))
    process = subprocess.Popen(
        [sys.executable, "-m", "caretz", "-p", "hello"],
        cwd=caretz.workspace,
        env=caretz.environment(),
        stdin=subprocess.PIPE,  # kept open and silent until the run has ended
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        stdout, stderr = _wait(process)
    finally:
        process.stdin.close()
    assert process.returncode == 0, stderr
    assert stdout.strip() == "Hi."
    assert "caretz: stdin is an open pipe that sent nothing in 3s: going on without it" in stderr
    assert user_text(server.requests[0]) == "hello"


def _wait(process: subprocess.Popen) -> tuple[str, str]:
    """Its output once it exits, stdin left open all the while (what it prints is small)."""
    process.wait(timeout=WAIT_S)
    return process.stdout.read(), process.stderr.read()


def test_a_three_message_stream_json_session(caretz: Caretz, server):
    server.add(text("One."), text("Two."), text("Three."))
    stdin = (
        message("first question")
        + "\n"
        + message([{"type": "text", "text": "second"}, {"type": "text", "text": "question"}])
        + message("third question")
    )
    run = caretz("--input-format", "stream-json", stdin=stdin)
    assert run.code == 0, run.stderr

    lines = json_lines(run.stdout)
    results = [line for line in lines if line["type"] == "result"]
    assert [r["text"] for r in results] == ["One.", "Two.", "Three."]
    assert {r["status"] for r in results} == {"done"}
    assert len({r["session_id"] for r in results}) == 1
    # Each answer's events come before its result, and the session carries on.
    first_result = lines.index(results[0])
    assert any(line["type"] == "Turn.Started" for line in lines[:first_result])
    assert [user_text(r) for r in server.requests] == [
        "first question",
        "second\n\nquestion",
        "third question",
    ]
    third = str(server.requests[2].messages)
    assert "first question" in third and "Two." in third
    events = caretz.events(results[0]["session_id"])
    assert [e["type"] for e in events].count("Session.Started") == 1


def test_stream_json_exits_with_the_last_answers_code(caretz: Caretz, server):
    server.add(error(400, "the first request is refused"), text("Then fine."))
    run = caretz("--input-format", "stream-json", stdin=message("one") + message("two"))

    results = [line for line in json_lines(run.stdout) if line["type"] == "result"]
    assert [(r["status"], r["exit_code"]) for r in results] == [("error", 1), ("done", 0)]
    assert run.code == 0, run.stderr


def test_stream_json_answers_each_message_before_reading_the_next(caretz: Caretz, server):
    server.add(text("Answer one."), text("Answer two."))
    process = subprocess.Popen(
        [sys.executable, "-m", "caretz", "--input-format", "stream-json"],
        cwd=caretz.workspace,
        env=caretz.environment(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        stdout = PipeLines(process.stdout)
        process.stdin.write(message("one"))
        process.stdin.flush()
        first = read_until_result(stdout, process)
        assert first["text"] == "Answer one." and len(server.requests) == 1
        process.stdin.write(message("two"))
        process.stdin.close()
        second = read_until_result(stdout, process)
        assert second["text"] == "Answer two." and second["session_id"] == first["session_id"]
        assert process.wait(timeout=WAIT_S) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def read_until_result(stdout: PipeLines, process: subprocess.Popen) -> dict[str, Any]:
    for line in stdout.until("the answer's result object"):
        data = json.loads(line)
        if data["type"] == "result":
            return data
    process.wait(timeout=WAIT_S)  # its output ended: it is exiting
    raise AssertionError(f"no result; stderr:\n{process.stderr.read()}")


def test_a_bad_stream_json_line_ends_the_run_after_the_answers_before_it(caretz: Caretz, server):
    server.add(text("Fine."))
    stdin = message("good") + '{"type": "user", "message": {"role": "user", "content": 7}}\n'
    run = caretz("--input-format", "stream-json", stdin=stdin + message("never read"))
    assert run.code == 2
    assert run.stderr.strip().endswith(
        "caretz: --input-format stream-json: line 2: "
        '"content" must be a string or a list of text blocks'
    )
    results = [line for line in json_lines(run.stdout) if line["type"] == "result"]
    assert [(r["status"], r["exit_code"]) for r in results] == [("done", 0), ("usage_error", 2)]
    assert results[1]["session_id"] == results[0]["session_id"]
    assert len(server.requests) == 1


def test_stream_json_refuses_what_it_cannot_take(caretz: Caretz, server):
    with_prompt = caretz("--input-format", "stream-json", "-p", "hi", stdin=message("x"))
    assert with_prompt.code == 2
    assert "reads the prompts from stdin: drop -p" in with_prompt.stderr
    assert json_lines(with_prompt.stdout)[-1]["status"] == "usage_error"
    text_output = caretz("--input-format", "stream-json", "--output", "text", stdin="")
    assert text_output.code == 2 and "answers as --output json" in text_output.stderr
    nothing = caretz("--input-format", "stream-json", stdin="\n")
    assert nothing.code == 2 and "no user message on stdin" in nothing.stderr
    assert json_lines(nothing.stdout)[-1]["session_id"] is None
    assert not (caretz.data_dir / "sessions").exists()
    assert server.requests == []


def test_sigterm_while_stream_json_waits_for_a_message_ends_the_run(caretz: Caretz, server):
    server.add(text("Answer one."))
    process = subprocess.Popen(
        [sys.executable, "-m", "caretz", "--input-format", "stream-json"],
        cwd=caretz.workspace,
        env=caretz.environment(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        stdout = PipeLines(process.stdout)
        process.stdin.write(message("one"))
        process.stdin.flush()
        first = read_until_result(stdout, process)
        process.terminate()  # it waits for the next line now
        assert process.wait(timeout=WAIT_S) == 143
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdin.close()
    types = [e["type"] for e in caretz.events(first["session_id"])]
    assert types.count("Turn.Started") == types.count("Turn.Ended") == 1
