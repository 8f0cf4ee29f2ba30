"""Headless runs that survive a flaky network, signals and a torn log: the real CLI end to end."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import types
from tests.e2e.screen import Screen
from tests.modelserver import Reply, text, tool

PARTIAL = "Partial words that will be lost"


@pytest.fixture
def terminal(caretz):
    opened: list[Screen] = []

    def open_screen(*args: str) -> Screen:
        opened.append(Screen(caretz, *args))
        return opened[-1]

    yield open_screen
    for screen in opened:
        screen.close()


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
    assert events[-1]["type"] == "Turn.Ended" and events[-1]["status"] == "done"


def test_in_a_terminal_the_partial_text_is_replaced_on_screen(terminal, server):
    server.add(breaking(), text("The whole answer."))
    term = terminal("-p", "say it")

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
    assert events[-1]["type"] == "Turn.Ended" and events[-1]["status"] == "error"
    assert len(server.requests) == 5


def test_in_the_interactive_session_the_retry_replaces_the_partial_text(terminal, server):
    server.add(breaking(), text("The whole answer."))
    term = terminal()

    term.expect("›")
    term.child.send("say it\r")
    term.expect(r"done · ")
    term.expect("›")

    assert "The whole answer." in term.text
    assert "Partial" not in term.text and "Partial" in term.raw
    assert "the reply starts over" in term.text
    term.child.sendcontrol("d")
    assert term.wait_for_exit() == 0
