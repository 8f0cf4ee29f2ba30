"""Headless runs that survive a flaky network, signals and a torn log: the real CLI end to end."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest

from tests.e2e.conftest import turn_end, types
from tests.modelserver import Reply, text, tool
from tests.processes import live_command_lines

PARTIAL = "Partial words that will be lost"


def breaking(**kw) -> Reply:
    """A reply whose stream breaks off after its first 7 characters ("Partial")."""
    return Reply(text=PARTIAL, drop_after_events=4, **kw)


def test_a_reply_that_breaks_off_is_asked_again_and_the_log_keeps_both(
    caretz, server, workspace, tmp_path
):
    server.add(tool("bash", command="echo one"), breaking(), text("The whole answer."))
    answer = tmp_path / "answer.md"

    run = caretz("-p", "do the work", stdout=answer)

    assert run.code == 0, run.stderr
    assert "retrying in 1s (the reply broke off mid-stream:" in run.stderr
    assert "the reply starts over" in run.stderr
    # stdout is a file: the partial text is taken back, only the answer stays.
    assert answer.read_text() == "The whole answer.\n"
    assert len(server.requests) == 3 and server.requests[2].body == server.requests[1].body
    events = caretz.events(run.session_id)
    retry = next(e for e in events if e["type"] == "Provider.Retrying")
    assert retry["discarded"]["content"] == "Partial" and retry["attempt"] == 1
    responses = [e["message"]["content"] for e in events if e["type"] == "Model.Response"]
    assert responses[-1] == "The whole answer."
    assert "Provider.Error" not in types(events)
    assert turn_end(events)["status"] == "done"


def test_in_a_terminal_the_partial_text_is_replaced_on_screen(screen, server):
    server.add(breaking(), text("The whole answer."))
    term = screen("-p", "say it")

    code = term.wait_for_exit()

    assert code == 0, term.text
    assert "The whole answer." in term.text
    assert "Partial" not in term.text  # it was written, then erased
    assert "Partial" in term.raw
    assert "the reply starts over" in term.text


def test_a_reply_that_keeps_breaking_off_gives_up_with_exit_1(caretz, server):
    server.add(*[breaking(headers={"retry-after": "0"}) for _ in range(5)])

    run = caretz("-p", "do the work")

    assert run.code == 1
    assert run.stderr.count("retrying in 0s") == 4
    events = caretz.events(run.session_id)
    assert [e["discarded"]["content"] for e in events if e["type"] == "Provider.Retrying"] == [
        "Partial"
    ] * 4
    failure = next(e for e in events if e["type"] == "Provider.Error")
    assert "gave up after 5 attempts: the reply broke off mid-stream" in failure["error"]
    assert failure["partial"]["content"] == "Partial"
    assert turn_end(events)["status"] == "error"
    assert len(server.requests) == 5


def test_in_the_interactive_session_the_retry_replaces_the_partial_text(screen, server):
    server.add(breaking(), text("The whole answer."))
    term = screen()

    term.turn("say it")

    assert "The whole answer." in term.text
    assert "Partial" not in term.text and "Partial" in term.raw
    assert "the reply starts over" in term.text
    term.child.sendcontrol("d")
    assert term.wait_for_exit() == 0


# --- SIGTERM and SIGHUP end the run like Ctrl-C ------------------------------------------


def processes_named(marker: str) -> list[int]:
    """Live processes named `marker` (their argv[0]; zombies are dead)."""
    return [
        pid for pid, cmdline in live_command_lines() if cmdline.split(b"\0")[0] == marker.encode()
    ]


def wait_for(condition, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


@pytest.fixture
def marker():
    """A name for the test's long command; whatever still runs under it is killed at the end."""
    name = f"caretz-test-{uuid.uuid4().hex}"
    yield name
    for pid in processes_named(name):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def long_command(marker: str) -> Reply:
    """A bash call that runs for a minute under a name the test can find.

    The name shows a second after the command starts, when caretz is waiting on it: a
    signal in the moment between starting a command and waiting on it is the bash tool's
    own matter (its clean-up covers the wait)."""
    return tool("bash", command=f"sleep 1; exec -a {marker} sleep 60")


@pytest.mark.parametrize(
    ("signum", "code", "in_subagent"),
    [(signal.SIGTERM, 143, False), (signal.SIGHUP, 129, False), (signal.SIGTERM, 143, True)],
)
def test_an_ending_signal_kills_the_command_and_writes_turn_ended(
    caretz, server, marker, signum, code, in_subagent
):
    if in_subagent:
        server.add(tool("task", agent="runner", prompt="run the long command"))
    server.add(long_command(marker), text("never reached"))
    process = subprocess.Popen(
        [sys.executable, "-m", "caretz", "-p", "run it", "--output", "json"],
        cwd=caretz.workspace,
        env=caretz.environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: processes_named(marker))
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        process.kill()

    assert process.returncode == code, stderr
    assert "Traceback" not in stderr
    wait_for(lambda: not processes_named(marker), timeout_s=30)  # the command was killed
    lines = [json.loads(line) for line in stdout.splitlines()]
    result = lines[-1]
    assert result["type"] == "result" and result["exit_code"] == code
    assert result["status"] == "interrupted" and signal.Signals(signum).name in result["message"]
    events = caretz.events(result["session_id"])
    assert turn_end(events)["exit_code"] == code
    assert "Tool.Called" in types(events)


def test_sigterm_ends_the_interactive_session_mid_turn(screen, server, caretz, marker):
    server.add(long_command(marker), text("never reached"))
    term = screen()
    term.type("run it")
    wait_for(lambda: processes_named(marker))

    term.child.kill(signal.SIGTERM)

    assert term.wait_for_exit() == 143
    wait_for(lambda: not processes_named(marker), timeout_s=30)
    session_id = re.search(r"caretz --resume (\S+)", term.raw).group(1)
    ended = [e for e in caretz.events(session_id) if e["type"] == "Turn.Ended"]
    assert ended and ended[-1]["exit_code"] == 143 and ended[-1]["status"] == "interrupted"


def test_sighup_at_the_prompt_ends_the_interactive_session(screen):
    term = screen()
    term.expect_prompt()

    term.child.kill(signal.SIGHUP)

    assert term.wait_for_exit() == 129


# --- A torn last line in the log ------------------------------------------------------------


def test_a_torn_last_line_does_not_swallow_the_next_event(caretz, server):
    server.add(text("first answer"), text("second answer"))
    first = caretz("-p", "hello")
    log = caretz.data_dir / "sessions" / first.session_id / "events.jsonl"
    # A process killed mid-write leaves half an event without its newline.
    with log.open("a") as handle:
        handle.write('{"type": "Tool.Result", "ts": 17000, "output": "half of it')

    resumed = caretz("-p", "carry on", "--resume", first.session_id)

    assert resumed.code == 0, resumed.stderr
    lines = log.read_text().splitlines()
    events = [json.loads(line) for line in lines]  # every line whole again
    assert "Session.Resumed" in types(events)
    assert types(events).count("Turn.Ended") == 2
    assert "half of it" not in log.read_text()
    shown = caretz("sessions", "show", first.session_id)
    assert "second answer" in shown.stdout


def test_reading_a_log_skips_a_torn_line(tmp_path):
    from caretz.session.events import read_events

    log = tmp_path / "events.jsonl"
    log.write_text('{"type": "A", "ts": 1}\n{"type": "B", "ts"')

    assert [event.type for event in read_events(log)] == ["A"]


def test_cutting_a_torn_tail_longer_than_one_read(tmp_path):
    from caretz.session.events import cut_torn_tail

    log = tmp_path / "events.jsonl"
    whole = '{"type": "A", "ts": 1}\n'
    log.write_text(whole + '{"type": "B", "output": "' + "x" * 200_000)

    cut_torn_tail(log)

    assert log.read_text() == whole
    log.write_text("no newline at all")
    cut_torn_tail(log)
    assert log.read_text() == ""


def test_signals_inherited_as_ignored_stay_ignored(caretz, server):
    """`nohup caretz -p …` (and a shell's `trap '' TERM`): the hangup and the termination
    it was started to ignore reach it mid-request, and the run carries on to its answer."""
    answer = threading.Event()
    server.add(Reply(text="Still here.", hold=answer))

    def ignore_ending_signals() -> None:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    process = subprocess.Popen(
        [sys.executable, "-m", "caretz", "-p", "say it"],
        cwd=caretz.workspace,
        env=caretz.environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ignore_ending_signals,
    )
    try:
        wait_for(lambda: server.requests)  # the request is in: caretz waits for the answer
        process.send_signal(signal.SIGHUP)
        process.send_signal(signal.SIGTERM)
        answer.set()
        stdout, stderr = process.communicate(timeout=60)
    finally:
        process.kill()

    assert process.returncode == 0, stderr
    assert stdout == "Still here.\n"
