"""/rewind and /undo in the interactive session: the real `caretz` in a pseudo-terminal,
real git, the loopback model server."""

from __future__ import annotations

import json

import pytest

from tests.checkpoints.helpers import require_git
from tests.e2e.terminal import wrapped
from tests.e2e.test_interactive import ACTIVE_GUARD, wait_until
from tests.modelserver import RecordedRequest, Reply, text, tool

OFFERED = r"› (?:\x1b\[[0-9;]*m)*{}"  # the prompt, with text already in it


@pytest.fixture(autouse=True)
def git_binary() -> str:
    return require_git()


def test_undo_then_rewind_files_and_conversation(terminal, server, workspace, caretz):
    (workspace / "a.txt").write_text("v1\n")
    server.add(
        tool("read", path="a.txt"), tool("write", path="a.txt", content="v2\n"), text("Changed a.")
    )
    server.add(tool("write", path="b.txt", content="b\n"), text("Added b."))
    term = terminal()
    term.type("change a")
    term.expect("Changed a.")
    term.type("add b")
    term.expect("Added b.")

    term.type("/undo")

    term.expect(r"restored 1 file to before turn 2; the conversation is back to before turn 2")
    term.expect(OFFERED.format("add b"))  # the undone turn's prompt is offered again
    assert not (workspace / "b.txt").exists() and (workspace / "a.txt").read_text() == "v2\n"
    term.child.sendintr()  # clears the offered prompt (the prompt stays where it is)

    term.child.send("/rewind\r")
    term.expect(r"3\s+2\s+\S+\s+1\s+before rewinding to turn 2")
    term.expect(r"2\s+2\s+\S+\s+1\s+add b")
    term.expect(r"1\s+1\s+\S+\s+1\s+change a")
    term.expect(r"rewind to \(number, Enter to cancel\)")
    term.child.send("3\r")
    term.expect(r"restore files, conversation or both\? \[both\]")
    term.child.send("files\r")
    term.expect("restored 1 file to the checkpoint taken before the rewind")
    assert (workspace / "b.txt").read_text() == "b\n"  # the undo, undone (its files)

    (workspace / "a.txt").write_text("edited by hand\n")
    term.type("/rewind 1 both")
    term.expect("1 file\\(s\\) changed outside caretz since the checkpoint:")
    term.expect("a.txt: changed outside caretz since the checkpoint")
    term.expect(r"overwrite them\? \[y/N\]")
    term.child.send("y\r")
    term.expect("restored 2 files to before turn 1; the conversation is back to before turn 1")
    term.expect(OFFERED.format("change a"))
    assert (workspace / "a.txt").read_text() == "v1\n" and not (workspace / "b.txt").exists()
    term.child.sendintr()

    server.add(text("Starting over."))
    term.child.send("start over\r")
    term.expect("Starting over.")
    session_id = term.ctrl_d()

    assert [m["content"] for m in server.requests[-1].messages] == ["start over"]
    restored = [e for e in caretz.events(session_id) if e["type"] == "Checkpoint.Restored"]
    assert [(e["scope"], e["to_turn"]) for e in restored] == [
        ("both", 2),
        ("files", 2),
        ("both", 1),
    ]


def test_the_loop_guard_stop_offers_undo(terminal, caretz, server, workspace):
    caretz.write_config(ACTIVE_GUARD)
    stuck = {"stuck": True, "confidence": 0.9, "reason": "it never changes", "try_instead": "ask"}

    def respond(request: RecordedRequest) -> Reply | None:
        if request.model == "claude-judge":
            return text(json.dumps(stuck))
        if (request.body.get("tool_choice") or {}).get("type") == "none":
            return text("Report: the counter only grows.")
        return tool("bash", command="echo x >> counter.txt; false")

    server.on(respond)
    term = terminal()

    term.type("make it pass")
    term.expect("so the guard ended it")
    match = term.expect(
        r"\[loop-guard\] undo this turn's changes: /undo \(files and conversation\), "
        r"or caretz rewind (\S+) --turn 1 --files-only"
    )
    term.expect("ended by the loop guard")
    assert (workspace / "counter.txt").exists()
    term.type("/undo")
    term.expect("restored 1 file to before turn 1")
    term.expect(OFFERED.format("make it pass"))
    assert not (workspace / "counter.txt").exists()
    term.child.sendintr()  # clears the offered prompt, so Ctrl-D can exit
    term.child.sendcontrol("d")
    session_id = term.expect(r"caretz --resume (\S+)").group(1)
    assert session_id == match.group(1)
    restored = [e for e in caretz.events(session_id) if e["type"] == "Checkpoint.Restored"]
    assert [(e["scope"], e["to_turn"]) for e in restored] == [("both", 1)]


def test_a_loop_guard_stop_of_a_turn_that_changed_no_file_offers_no_undo(
    terminal, caretz, server, workspace
):
    (workspace / "a.txt").write_text("a\n")
    caretz.write_config(ACTIVE_GUARD)
    stuck = {"stuck": True, "confidence": 0.9, "reason": "it never changes", "try_instead": "ask"}

    def respond(request: RecordedRequest) -> Reply | None:
        if request.model == "claude-judge":
            return text(json.dumps(stuck))
        if (request.body.get("tool_choice") or {}).get("type") == "none":
            return text("Report: nothing changes.")
        return tool("bash", command="cat a.txt; false")  # a command: a checkpoint is taken

    server.on(respond)
    term = terminal()

    term.type("make it pass")
    term.expect("so the guard ended it")
    term.expect("ended by the loop guard")
    session_id = term.ctrl_d()

    assert "undo this turn" not in "".join(term.transcript)
    events = caretz.events(session_id)
    [settled] = [e for e in events if e["type"] == "Checkpoint.Settled"]
    assert settled["changed_count"] == 0
    assert "Checkpoint.Created" in [e["type"] for e in events]  # taken, yet nothing to undo


def test_the_project_is_staged_while_the_first_message_is_typed(terminal, caretz, workspace):
    (workspace / "a.txt").write_text("a\n")
    term = terminal()
    term.expect_prompt()

    indexes = caretz.data_dir / "checkpoints"
    assert wait_until(lambda: any(indexes.glob("*/git/caretz-index")))
    term.child.sendcontrol("d")
    session_id = term.expect(r"caretz --resume (\S+)").group(1)

    assert "Checkpoint.Created" not in [e["type"] for e in caretz.events(session_id)]


def test_undo_right_after_a_rewind_undoes_that_rewind_files_and_conversation(
    terminal, server, workspace, caretz
):
    server.add(tool("write", path="a.txt", content="a\n"), text("Wrote a."))
    server.add(text("Just talk."))
    term = terminal()
    term.type("write a")
    term.expect("Wrote a.")
    term.type("talk")
    term.expect("Just talk.")
    term.type("/rewind 1 both")
    term.expect("restored 1 file to before turn 1; the conversation is back to before turn 1")
    assert not (workspace / "a.txt").exists()
    term.expect_prompt()  # drawn whole (keys are read) before Ctrl-C and the next line
    term.child.sendintr()  # clears the offered prompt

    term.child.send("/undo\r")

    term.expect(wrapped("restored 1 file to the checkpoint taken before the rewind at"))
    term.expect(wrapped("the conversation is back to the checkpoint taken before the rewind"))
    assert (workspace / "a.txt").read_text() == "a\n"
    server.add(text("Both turns are here."))
    term.child.send("go on\r")
    term.expect("Both turns are here.")
    term.ctrl_d()
    prompts = [m["content"] for m in server.requests[-1].messages if m["role"] == "user"]
    assert [p for p in prompts if isinstance(p, str)] == ["write a", "talk", "go on"]
