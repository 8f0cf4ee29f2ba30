"""How a run fails when the model's endpoint does: a server that never answers, a stalled
stream, a closed port, a rejected key, an unknown model, a missing key. The real CLI
against the loopback model server (or a port nothing listens on).

A server that never answers waits for an Event no test sets; a stalled stream waits for the
server's stop. Only a test about a timeout sets it small; the others set it far above need."""

from __future__ import annotations

import json
import re
import socket
import threading
from pathlib import Path

import pytest

from tests.e2e.conftest import Caretz
from tests.e2e.terminal import Screen
from tests.modelserver import ModelServer, Reply, error, text

REPO = Path(__file__).resolve().parents[2]


# The spinner's line as written: its label, colour codes, then the seconds so far.
WAITING = r"waiting for the model(?:\x1b\[[0-9;]*m)*\s+"


def profile(**general: object) -> dict[str, object]:
    return {"profiles": {"general": general}}


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the block ends: nothing listens


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("provider error:")]


def retry_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "retrying" in line]


def test_a_server_that_never_answers_says_so_once_then_fails_after_one_retry(
    caretz: Caretz, server: ModelServer
):
    never = threading.Event()  # the answer waits for this, which nothing sets
    caretz.write_config(profile(firstByteTimeout="2s"))  # maxRetries stays 4
    server.add(Reply(text="never sent", hold=never), Reply(text="never sent", hold=never))

    run = caretz("-p", "hello")

    assert run.code == 1
    assert len(server.requests) == 2  # a silent server is asked again once, not four times
    lines = run.stderr.splitlines()
    waiting = [i for i, line in enumerate(lines) if line.startswith("waiting for the model (")]
    retrying = [i for i, line in enumerate(lines) if "retrying" in line]
    # Piped: one line while it waits (before the attempt is given up), then the retry's.
    assert len(waiting) == 1 and len(retrying) == 1 and waiting[0] < retrying[0], run.stderr
    assert "no answer yet; given up at 2s (firstByteTimeout)" in lines[waiting[0]]
    url = f"{server.url}/v1/messages"
    assert f"retrying in 1s (no answer from {url} within 2s (firstByteTimeout))" in run.stderr
    [line] = error_lines(run.stderr)
    assert f"gave up after 2 attempts: no answer from {url} within 2s (firstByteTimeout)" in line
    errors = [e for e in caretz.events(run.session_id) if e["type"] == "Provider.Error"]
    assert len(errors) == 1 and "firstByteTimeout" in errors[0]["error"]


def test_a_stream_that_goes_silent_is_retried_once_then_fails_in_one_line(
    caretz: Caretz, server: ModelServer
):
    # The server sends part of a reply, then nothing until it stops: any idle timeout
    # fires, however fast or slow the machine is.
    caretz.write_config(profile(streamIdleTimeout="1s"))  # maxRetries stays 4
    server.add(Reply(text="never finished", stall_after_events=3), Reply(stall_after_events=0))

    run = caretz("-p", "hello")

    assert run.code == 1
    assert len(server.requests) == 2  # one retry: a stream silent twice is not answering
    assert len(retry_lines(run.stderr)) == 1, run.stderr
    assert "waiting for the model" not in run.stderr  # the answer began each time
    [line] = error_lines(run.stderr)
    assert "gave up after 2 attempts" in line
    assert (
        f"the stream from {server.url}/v1/messages sent nothing for 1s (streamIdleTimeout)" in line
    )
    errors = [e for e in caretz.events(run.session_id) if e["type"] == "Provider.Error"]
    assert len(errors) == 1 and "streamIdleTimeout" in errors[0]["error"]


def test_in_a_terminal_the_wait_for_the_model_is_a_spinner_that_counts(
    caretz: Caretz, server: ModelServer, screen
):
    answer = threading.Event()
    caretz.write_config(profile(firstByteTimeout="10m"))  # far above need
    server.add(Reply(text="Here at last.", hold=answer))
    term: Screen = screen("-p", "hello")

    term.expect(WAITING + r"[1-9]\d*s")  # on stderr, its seconds counting
    answer.set()
    code = term.wait_for_exit()

    assert code == 0, term.text
    assert "Here at last." in term.text
    assert "waiting for the model" not in term.text  # erased once the answer came
    assert len(re.findall(WAITING + r"\d+s", term.raw)) > 1  # redrawn in place


def test_the_interactive_session_waits_visibly_and_carries_on_after_a_silent_server(
    caretz: Caretz, server: ModelServer, screen
):
    never = threading.Event()
    caretz.write_config(profile(firstByteTimeout="2s"))
    server.add(Reply(text="never sent", hold=never), Reply(text="never sent", hold=never))
    server.add(text("Back again."))
    term: Screen = screen()

    term.type("hello")
    term.expect("waiting for the model")
    term.expect("retrying in 1s")
    term.expect("gave up after 2 attempts")
    term.turn("again")

    assert "Back again." in term.text
    assert len(server.requests) == 3


def test_a_closed_port_fails_after_one_retry_naming_the_url(caretz: Caretz):
    url = f"http://127.0.0.1:{closed_port()}"

    run = caretz("-p", "hello", env={"ANTHROPIC_BASE_URL": url})

    assert run.code == 1
    assert len(retry_lines(run.stderr)) == 1, run.stderr
    assert f"gave up after 2 attempts: could not connect to {url}/v1/messages" in run.stderr
    assert "is its server running, and the base URL right?" in run.stderr


def test_a_wrong_base_url_names_the_url_and_not_the_word_custom(caretz: Caretz):
    url = f"http://127.0.0.1:{closed_port()}/v1"

    run = caretz("-p", "hello", "--base-url", url, "--model", "qwen3")

    assert run.code == 1
    assert len(retry_lines(run.stderr)) == 1, run.stderr
    assert f"could not connect to {url}/chat/completions" in run.stderr
    assert "custom" not in run.stderr


@pytest.mark.parametrize("status", [401, 403])
def test_a_rejected_key_exits_2_in_one_line_naming_its_variable(
    caretz: Caretz, server: ModelServer, status: int
):
    server.add(error(status, "invalid x-api-key"))

    run = caretz("-p", "hello")

    assert run.code == 2, run.stderr
    assert len(server.requests) == 1  # not retried
    problem = [line for line in run.stderr.splitlines() if "rejected the API key" in line]
    assert len(problem) == 1 and "check ANTHROPIC_API_KEY" in problem[0]
    assert f"(HTTP {status})" in problem[0]


def test_an_unknown_model_exits_2_in_one_line_naming_the_model(caretz: Caretz, server: ModelServer):
    server.add(error(404, "model: claude-test"))

    run = caretz("-p", "hello")

    assert run.code == 2, run.stderr
    problem = [line for line in run.stderr.splitlines() if "HTTP 404" in line]
    assert len(problem) == 1 and "check the model ID 'claude-test'" in problem[0]


def test_a_missing_key_of_the_loop_guards_judge_names_the_role_and_the_variable(
    caretz: Caretz, server: ModelServer
):
    caretz.write_config(profile(loopGuard={"mode": "shadow", "judge": {"model": "openai/gpt-x"}}))

    run = caretz("-p", "hello")
    flagged = caretz("-p", "hello", "--loop-guard-model", "openai/gpt-y")

    assert run.code == 2 and flagged.code == 2
    assert run.stderr.splitlines() == [
        "caretz: the loop guard's judge, openai/gpt-x, needs OPENAI_API_KEY: set it, or name a "
        "model your keys reach with --loop-guard-model or loopGuard.judge.model"
    ]
    assert "the loop guard's judge, openai/gpt-y, needs OPENAI_API_KEY" in flagged.stderr
    assert server.requests == []


def test_the_example_profiles_work_with_an_anthropic_key_alone(caretz: Caretz, server: ModelServer):
    example = json.loads((REPO / "profiles.example.json").read_text())
    caretz.write_config(example)
    server.add(text("Hello from the example."))

    run = caretz("-p", "hello", env={"OPENAI_API_KEY": None, "CARETZ_MODEL": None})

    assert run.code == 0, run.stderr
    assert "Hello from the example." in run.stdout


def test_a_rejected_key_s_json_result_is_an_error_with_the_usage_error_s_code(
    caretz: Caretz, server: ModelServer
):
    """As the README's result object says: status "error" (the request was sent), exit 2."""
    server.add(error(401, "invalid x-api-key"))

    run = caretz("-p", "hello", "--output", "json")

    result = json.loads(run.stdout.splitlines()[-1])
    assert (run.code, result["type"], result["status"], result["exit_code"]) == (
        2,
        "result",
        "error",
        2,
    )
    assert "check ANTHROPIC_API_KEY" in result["message"]
