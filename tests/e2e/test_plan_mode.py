"""Plan mode end to end: the real CLI against the loopback model server; the REPL in a
pseudo-terminal. Changes are refused (a write, a command not shown to read only), the
plan is put to the user, and the approved hand-off switches the mode mid-turn, after
which the write runs; in `-p` the plan is the answer."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pexpect
import pyte

from tests.e2e.conftest import Caretz
from tests.e2e.terminal import COLUMNS, ROWS, TIMEOUT_S, Terminal
from tests.modelserver import ModelServer, RecordedRequest, calls, text, tool

PLAN = "# Plan\n\n1. Write `notes.md` with the greeting\n2. Check it with `cat`"
# What the model tries while planning: two changes, then one command that only reads.
TRIES = calls(
    ("write", {"path": "notes.md", "content": "early\n"}),
    ("bash", {"command": "ls && touch made.txt"}),
    ("bash", {"command": "cat seed.txt | grep -c seed"}),
)
STYLE = r"(?:\x1b\[[0-9;?]*[A-Za-z])*"
SHIFT_TAB = "\x1b[Z"


def results(request: RecordedRequest) -> list[dict[str, Any]]:
    return [b for b in request.messages[-1]["content"] if b.get("type") == "tool_result"]


def assert_planning_refused_changes(server: ModelServer, workspace: Path) -> None:
    first = server.requests[0].tool_names
    assert "exit_plan_mode" in first and "read" in first and "bash" in first
    assert "write" not in first and "edit" not in first  # not offered in plan mode
    wrote, touched, counted = results(server.requests[1])
    assert wrote["is_error"] is True
    assert "plan mode: write changes files" in wrote["content"]
    assert touched["is_error"] is True
    assert "plan mode: `touch` is not known to change nothing" in touched["content"]
    assert counted.get("is_error") is not True and "1" in counted["content"]
    assert not (workspace / "made.txt").exists()


def test_a_headless_plan_run_ends_with_the_plan_as_its_answer(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    (workspace / "seed.txt").write_text("seed\n")
    server.add(TRIES, tool("exit_plan_mode", plan=PLAN), text("never asked for"))

    run = caretz("-p", "plan the greeting", "--permission-mode", "plan")

    assert run.code == 0, run.stderr
    assert run.stdout.strip() == PLAN
    assert len(server.requests) == 2  # the plan ended the run
    assert_planning_refused_changes(server, workspace)
    assert not (workspace / "notes.md").exists()
    folder = caretz.data_dir / "sessions" / run.session_id
    assert (folder / "plan-1.md").read_text() == PLAN + "\n"
    ended = [e for e in caretz.events(run.session_id) if e["type"] == "Turn.Ended"][-1]
    assert (ended["status"], ended["exit_code"], ended["text"]) == ("done", 0, PLAN)


def test_an_approved_plan_switches_the_mode_mid_turn_and_the_write_runs(
    terminal, caretz: Caretz, server: ModelServer, workspace: Path
):
    (workspace / "seed.txt").write_text("seed\n")
    server.add(
        TRIES,
        tool("exit_plan_mode", plan="# Draft\n\n1. guess"),
        tool("exit_plan_mode", plan=PLAN),
        tool("write", path="notes.md", content="hello\n"),
        text("Done: notes.md written."),
    )
    term: Terminal = terminal("--permission-mode", "plan")

    term.type("plan the greeting, then do it")
    term.expect("caretz asks: approve this plan and leave plan mode\\?")
    term.expect("guess")
    term.expect("allow\\? ")
    term.child.send("n say which file\r")  # the first draft is sent back with a note
    term.expect(re.escape("Write ") + STYLE + "notes.md")  # the plan, drawn as Markdown
    term.expect(r"a\S*\s+yes, carry it out in ask mode")
    term.expect("allow\\? ")
    term.child.send("y\r")
    term.expect("Done: notes.md written.")
    session_id = term.ctrl_d()

    assert_planning_refused_changes(server, workspace)
    declined = results(server.requests[2])[0]
    assert declined["is_error"] is True
    assert "did not approve the plan" in declined["content"]
    assert declined["content"].count("The user's note: say which file") == 1
    approved = results(server.requests[3])[0]
    assert "The session is in auto permission mode now" in approved["content"]
    after = server.requests[3].tool_names  # the same turn, in the new mode
    assert "write" in after and "exit_plan_mode" not in after
    assert (workspace / "notes.md").read_text() == "hello\n"
    events = caretz.events(session_id)
    changed = [e["permission_mode"] for e in events if e["type"] == "Session.Changed"]
    assert changed == ["auto"]
    assert len([e for e in events if e["type"] == "Turn.Started"]) == 1
    folder = caretz.data_dir / "sessions" / session_id
    assert (folder / "plan-2.md").read_text() == PLAN + "\n"
    answers = [e["answer"] for e in events if e["type"] == "Permission.Decided"]
    assert answers[-2:] == ["no", "yes"]


class AnsweringScreen(pyte.Screen):  # type: ignore[misc]
    """A terminal emulator that answers the program's cursor-position queries, as a real
    terminal does: prompt_toolkit draws its bottom toolbar only once it knows the rows."""

    def __init__(self, child: pexpect.spawn[str]):
        super().__init__(COLUMNS, ROWS)
        self.child = child

    def write_process_input(self, data: str) -> None:
        self.child.send(data)


class ToolbarTerminal:
    """caretz in a pseudo-terminal drawn by `AnsweringScreen`."""

    def __init__(self, caretz: Caretz):
        env = {**caretz.env, "TERM": "xterm-256color", "COLUMNS": str(COLUMNS), "LINES": str(ROWS)}
        env.pop("PROMPT_TOOLKIT_NO_CPR", None)
        self.child = pexpect.spawn(
            sys.executable, ["-m", "caretz"], cwd=str(caretz.workspace), env=env,
            encoding="utf-8", timeout=TIMEOUT_S, dimensions=(ROWS, COLUMNS),
        )  # fmt: skip
        self.screen = AnsweringScreen(self.child)
        self.stream = pyte.Stream(self.screen)

    @property
    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def wait_for(self, pattern: str) -> None:
        """Read on until the screen shows `pattern` (the prompt redraws only what changed)."""
        deadline = time.monotonic() + TIMEOUT_S  # a failing wait only
        while not re.search(pattern, self.text):
            if time.monotonic() > deadline:
                raise AssertionError(f"the screen never showed {pattern!r}:\n{self.text}")
            try:
                self.stream.feed(self.child.read_nonblocking(4096, timeout=1))
            except pexpect.TIMEOUT:
                continue


def test_shift_tab_cycles_the_modes_and_the_status_line_shows_the_session(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    # In the project: it runs in the session's sandbox, which gives commands their own /tmp.
    got = workspace / "status-input.json"
    script = workspace / "status.sh"
    # A Claude Code status line script: reads the JSON, prints one line.
    script.write_text(
        "#!/bin/sh\ninput=$(cat)\nprintf '%s' \"$input\" > " + str(got) + "\n"
        'mode=$(printf %s "$input" | python3 -c '
        "'import json,sys; d=json.load(sys.stdin); "
        'w = d["context_window"]; '
        'print(d["permission_mode"], d["model"]["id"], w["context_window_size"], '
        'w["total_input_tokens"])'
        "')\n"
        'echo "\\033[1mSTATUS\\033[0m $mode"\n'
    )
    script.chmod(0o755)
    caretz.write_config(
        {"profiles": {"general": {"statusLine": {"type": "command", "command": str(script)}}}}
    )
    server.add(text("hi there"))
    term = ToolbarTerminal(caretz)

    try:
        term.wait_for(r"\n STATUS auto anthropic/claude-test \d+ 0\n.* permissions auto · context")
        term.child.send(SHIFT_TAB)
        term.wait_for("permissions: ask")
        term.wait_for("STATUS ask ")  # run again after the switch's event
        term.child.send(SHIFT_TAB)
        term.wait_for("permissions: plan")
        term.wait_for("STATUS plan ")
        term.child.send(SHIFT_TAB)
        term.wait_for("permissions: auto")
        term.wait_for("STATUS auto ")
        term.child.send("say hi\r")
        term.wait_for("hi there")
        term.wait_for(r"\n STATUS auto anthropic/claude-test \d+ 100\n")  # the turn's usage
        term.child.sendcontrol("d")
        term.wait_for(r"caretz --resume \S+")
    finally:
        term.child.terminate(force=True)

    data = json.loads(got.read_text())
    assert data["session_id"] and data["transcript_path"].endswith("events.jsonl")
    assert data["workspace"]["current_dir"] == str(workspace)
    assert set(data["cost"]) >= {"total_cost_usd", "total_duration_ms"}
    assert data["context_window"]["total_input_tokens"] == 100  # the turn's usage
    assert data["loop_guard"]["mode"] == "off"
