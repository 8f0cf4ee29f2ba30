"""stream()'s work runs in a background thread: whatever ends the consumer's loop early
cancels it the way Ctrl-C does, and no thread is left running."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any

import pytest

from caretz.api import Finished, ToolCall
from caretz.session.events import read_events
from caretz.session.records.loop import TurnEnded
from tests.app.test_cancel import (
    WAIT_S,
    held_reply,
    processes_running,
    wait_for,
    waiting_command,
)
from tests.modelserver import text, tool


def stream_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "caretz-stream"]


def assert_cancelled(session: Any, token: str | None = None) -> None:
    """No stream thread left, the turn ended as interrupted, its command's processes gone;
    and the session takes the next run."""
    assert stream_threads() == []
    ended = [e for e in read_events(session.events_path) if isinstance(e, TurnEnded)]
    assert ended and (ended[-1].status, ended[-1].exit_code) == ("interrupted", 130)
    if token is not None:
        assert processes_running(token) == []
    assert not session.app.busy


def until_command_started(session: Any, workspace: Any) -> Callable[[Any], bool]:
    """True for the event after which the waiting command is running."""

    def started(event: Any) -> bool:
        if isinstance(event, ToolCall):
            wait_for(lambda: (workspace / "started").exists(), "the command to start")
            return True
        return False

    return started


def test_leaving_the_loop_early_cancels_the_work(server, open_session, workspace):
    command, token = waiting_command(workspace)
    server.add(tool("bash", command=command))
    session = open_session()
    started = until_command_started(session, workspace)
    for event in session.stream("wait for it"):
        if started(event):
            break
    assert_cancelled(session, token)
    server.add(text("Again."))
    assert session.run("again").text == "Again."


def test_closing_the_iterator_cancels_the_work(server, open_session, workspace):
    command, token = waiting_command(workspace)
    server.add(tool("bash", command=command))
    session = open_session()
    started = until_command_started(session, workspace)
    events = session.stream("wait for it")
    while not started(next(events)):
        pass
    events.close()
    assert_cancelled(session, token)


def test_an_exception_in_the_consumer_cancels_the_work(server, open_session, workspace):
    command, token = waiting_command(workspace)
    server.add(tool("bash", command=command))
    session = open_session()
    started = until_command_started(session, workspace)

    def consume() -> None:
        for event in session.stream("wait for it"):
            if started(event):
                raise KeyboardInterrupt  # Ctrl-C while the consumer handles an event

    with pytest.raises(KeyboardInterrupt):
        consume()
    assert_cancelled(session, token)


def test_ctrl_c_while_the_consumer_waits_cancels_the_work(server, open_session):
    reached, release = held_reply(server)  # the model's reply never comes by itself
    session = open_session()
    main = threading.main_thread().ident
    assert main == threading.get_ident()

    def ctrl_c() -> None:
        wait_for(reached.is_set, "the request to reach the server")
        signal.pthread_kill(main, signal.SIGINT)

    pressing = threading.Thread(target=ctrl_c, daemon=True)
    pressing.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            for _ in session.stream("hello"):
                pass  # the consumer waits for the next event when Ctrl-C comes
    finally:
        pressing.join(WAIT_S)
        release.set()
    assert_cancelled(session)
    assert len(server.requests) == 1


def test_closing_the_session_ends_a_stream_left_open(server, open_session, workspace):
    command, token = waiting_command(workspace)
    server.add(tool("bash", command=command))
    session = open_session()
    started = until_command_started(session, workspace)
    events = session.stream("wait for it")
    while not started(next(events)):
        pass
    session.close()
    assert stream_threads() == [] and processes_running(token) == []
    rest = list(events)  # the consumer still gets the end of it
    assert isinstance(rest[-1], Finished) and rest[-1].result.status == "interrupted"
