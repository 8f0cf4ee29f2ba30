"""`!command` in the interactive session: the real `caretz` in a pseudo-terminal runs the
command in its sandbox, shows its output, and the next message carries it to the model."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import types
from tests.e2e.test_interactive import process_running, wait_until
from tests.modelserver import ModelServer, text
from tests.sandbox.helpers import marker, sleepers


def last_user_text(server: ModelServer, request: int = -1) -> str:
    content = server.requests[request].messages[-1]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def test_a_bang_line_runs_the_command_and_the_next_message_carries_its_output(
    terminal, caretz, server: ModelServer, workspace: Path
):
    (workspace / "notes.txt").write_text("first\nsecond\n")
    server.add(text("I see the notes."))
    term = terminal()

    # Colours and a key from caretz's environment: the model reads neither.
    term.type(
        "!printf '\\033[31mred\\033[0m\\n'; cat notes.txt; echo key=$ANTHROPIC_API_KEY; exit 3"
    )
    term.expect("second")
    term.expect("key=")
    term.expect("exit 3 · ")
    term.expect("the model gets it with your next message")
    assert server.requests == []  # nothing went to the model yet, and nobody was asked
    term.type("what do the notes say?")
    term.expect("I see the notes.")
    session_id = term.ctrl_d()

    sent = last_user_text(server)
    assert sent.startswith("The user ran `printf")
    assert "(exit 3):\n```\nred\nfirst\nsecond\nkey=\n```" in sent
    assert "\x1b" not in sent and "sk-ant" not in sent
    assert sent.endswith("\n\nwhat do the notes say?")
    events = caretz.events(session_id)
    [ran] = [e for e in events if e["type"] == "Shell.Ran"]
    assert (ran["exit_code"], ran["ended_by"]) == (3, None)
    assert "Permission.Asked" not in types(events)
    shown = caretz("sessions", "show", session_id)
    assert "! printf" in shown.stdout and "(exit 3, " in shown.stdout
    # Kept in the conversation: a resumed session sends it again.
    server.add(text("Still there."))
    resumed = caretz("--resume", session_id, "-p", "and now?")
    assert resumed.code == 0, resumed.stderr
    assert "The user ran `printf" in str(server.requests[-1].messages[0]["content"])


def test_ctrl_c_stops_a_bang_command_and_a_resumed_session_still_gets_it(
    terminal, caretz, server: ModelServer, workspace: Path
):
    mark = marker()
    server.add(text("Noted."))
    term = terminal()

    term.type(f"!echo started; sleep {mark} & wait")
    term.expect("started")
    assert wait_until(lambda: len(sleepers(mark)) == 1)
    pid = sleepers(mark)[0]
    term.child.sendintr()
    term.expect("interrupted after")
    assert wait_until(lambda: not process_running(pid)), f"sleep {pid} outlived Ctrl-C"
    session_id = term.ctrl_d()

    # The session ended before another message: resuming it, the run is still pending.
    run = caretz("--resume", session_id, "-p", "why did it stop?")
    assert run.code == 0, run.stderr
    sent = last_user_text(server)
    assert sent.startswith(f"The user ran `echo started; sleep {mark} & wait` (interrupted after")
    assert "started" in sent and sent.endswith("why did it stop?")


def test_a_bare_bang_is_one_line_and_runs_nothing(terminal, server: ModelServer):
    term = terminal()

    term.type("!")
    term.expect("give a command after !")
    term.ctrl_d()

    assert server.requests == []
