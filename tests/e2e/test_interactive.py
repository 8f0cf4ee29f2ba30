"""The interactive session end to end: the real `caretz` in a real pseudo-terminal.

Each test starts `python -m caretz` under pexpect against the loopback model
server, types at the prompt and reads the screen. Waits are expect() calls with
generous timeouts (they return as soon as the text shows up), never sleeps.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pexpect

from tests.e2e.conftest import AGENT_MODEL, types
from tests.e2e.terminal import TIMEOUT_S, Terminal, wrapped
from tests.modelserver import ModelServer, RecordedRequest, Reply, text, tool
from tests.sandbox.helpers import marker, sleepers

# The guard active, judged by "claude-judge", asked after two repeats.
ACTIVE_GUARD = {
    "profiles": {
        "general": {
            "loopGuard": {
                "mode": "active",
                "repeatThreshold": 2,
                "judge": {"model": "anthropic/claude-judge"},
            }
        }
    }
}


def session_id_at_exit(term: Terminal) -> str:
    match = term.expect(r"caretz --resume (\S+)")
    term.child.expect(pexpect.EOF)
    return match.group(1)


def test_a_prompt_streams_the_answer_as_markdown_and_closes_with_a_summary(
    terminal, server: ModelServer
):
    server.add(text("Hello from **the model**: the answer streams in."))
    term = terminal()

    term.type("say hello")

    term.expect("waiting for the model")  # the spinner while the request is out
    term.expect(r"Hello from .*the model.*: the answer streams in\.")
    term.expect(r"done · 100 in / 20 out · [\d.]+s")
    screen = "".join(term.transcript)
    assert "\x1b[1mthe model" in screen  # drawn as Markdown (bold), not as **the model**
    assert server.requests[0].messages[-1]["content"] == "say hello"
    term.ctrl_d()


def test_slash_commands_run_locally_and_never_reach_the_model(terminal, server: ModelServer):
    term = terminal()

    term.type("/help")
    term.expect(r"/loop-guard off\|shadow\|active")
    term.expect("Esc then Enter")
    term.type("/cost")
    term.expect("requests: 0 · tool calls: 0")
    # claude-test has no price: unknown before its first reply too, never $0.0000
    term.expect(r"cost: unknown \(a model without a price")
    term.type("/frobnicate now")
    term.expect("unknown command /frobnicate")
    term.type("/exit")
    session_id_at_exit(term)

    assert server.requests == []


def test_ctrl_c_stops_a_running_command_and_the_session_carries_on(
    terminal, caretz, server: ModelServer, workspace: Path
):
    mark = marker()  # the sleep's PID inside the sandbox is not its host PID: find it by mark
    server.add(
        tool("bash", command=f"sleep {mark} & wait"),
        text("Carrying on where we were."),
    )
    term = terminal()

    term.type("start the long job")
    term.expect(f"bash sleep {mark}")  # the spinner names the running command
    assert wait_until(lambda: len(sleepers(mark)) == 1)
    pid = sleepers(mark)[0]
    assert process_running(pid)
    term.child.sendintr()

    term.expect("cancelled, process group killed")
    term.expect("interrupted")
    assert wait_until(lambda: not process_running(pid)), f"sleep {pid} outlived Ctrl-C"
    term.type("what now?")
    term.expect("Carrying on where we were.")
    session_id = term.ctrl_d()

    # The second request carries the whole conversation, the cut-off call answered.
    messages = server.requests[-1].messages
    assert messages[0]["content"] == "start the long job"
    flat = str(messages)
    # The command had started: the model learns for how long it ran, never "Not run".
    assert "interrupted by the user after" in flat and "Not run" not in flat
    assert messages[-1]["content"] == "what now?"
    events = caretz.events(session_id)
    ended = [e["status"] for e in events if e["type"] == "Turn.Ended"]
    assert ended == ["interrupted", "done"]
    assert types(events).count("Session.Started") == 1


def test_ctrl_c_on_an_empty_prompt_warns_then_exits(terminal):
    term = terminal()

    term.expect_prompt()
    term.child.sendintr()
    term.expect("press Ctrl-C again, or Ctrl-D, to exit")
    term.expect_prompt()
    term.child.sendintr()

    session_id_at_exit(term)
    assert term.child.wait() == 0


def test_model_switch_sends_the_next_request_to_the_new_model(
    terminal, server: ModelServer, caretz
):
    server.add(text("First answer."), model=AGENT_MODEL)
    server.add(text("Second answer, from the other model."), model="claude-other")
    term = terminal()

    term.type("first question")
    term.expect("First answer.")
    term.type("/model nowhere/some-model")
    term.expect(r"unknown provider 'nowhere'")
    term.expect(wrapped("(still on anthropic/claude-test)"))
    term.type("/model openai/gpt-x")
    term.expect(r"missing API key for provider 'openai': set OPENAI_API_KEY")
    term.type("/model anthropic/claude-other")
    term.expect("model: anthropic/claude-other; the conversation carries on")
    term.type("second question")
    term.expect("Second answer, from the other model.")
    term.ctrl_d()

    assert [r.model for r in server.requests] == [AGENT_MODEL, "claude-other"]
    assert server.requests[1].messages[0]["content"] == "first question"


def test_continue_reopens_the_last_session_with_its_conversation(
    terminal, server: ModelServer, caretz
):
    server.add(text("Noted: pineapple."))
    first = terminal()
    first.type("remember the word pineapple")
    first.expect("Noted: pineapple.")
    session_id = first.ctrl_d()

    server.add(text("The word was pineapple."))
    second = terminal("--continue")
    second.expect(f"resumed session {session_id}: 1 turn")
    second.type("which word was it?")
    second.expect("The word was pineapple.")
    assert second.ctrl_d() == session_id

    contents = [m["content"] for m in server.requests[-1].messages]
    assert contents[0] == "remember the word pineapple"
    assert "Noted: pineapple." in str(contents[1])
    assert contents[-1] == "which word was it?"


def test_resuming_an_unknown_session_is_one_line_and_exit_2(terminal):
    term = terminal("--resume", "no-such-session")

    term.expect("caretz: no session 'no-such-session'")
    term.child.expect(pexpect.EOF)
    term.child.close()
    assert term.child.exitstatus == 2


def test_multiline_input_and_history_kept_between_sessions(terminal, server: ModelServer, caretz):
    server.add(text("Three lines received."), text("Again."))
    term = terminal()

    term.type("first line\\")  # a trailing backslash, then Enter: a new line
    term.child.send("second line\x1b\r")  # Esc then Enter: a new line
    term.child.send("third line\r")
    term.expect("Three lines received.")
    term.ctrl_d()

    assert server.requests[0].messages[-1]["content"] == "first line\nsecond line\nthird line"
    assert "third line" in (caretz.data_dir / "prompt-history").read_text()
    again = terminal()
    again.expect_prompt()
    again.child.send("\x1b[A\r")  # Up recalls the last message from the earlier session
    again.expect("Again.")
    assert server.requests[1].messages[-1]["content"] == "first line\nsecond line\nthird line"


def test_after_the_loop_guard_ends_a_turn_the_reply_carries_on(terminal, caretz, server):
    caretz.write_config(ACTIVE_GUARD)
    stuck = json.dumps(
        {
            "stuck": True,
            "confidence": 0.9,
            "reason": "false fails the same way every time",
            "try_instead": "ask the user what the command should do",
        }
    )

    def respond(request: RecordedRequest) -> Reply | None:
        if request.model == "claude-judge":
            return text(stuck)
        if (request.body.get("tool_choice") or {}).get("type") == "none":
            return text("Report: I ran `false` again and again; it never succeeds.")
        return tool("bash", command="false")

    server.on(respond)
    term = terminal()

    term.type("make false succeed")
    term.expect(r"\[loop-guard\] stuck \(0\.90\) → redirecting")
    term.expect(r"\[loop-guard\] stuck \(0\.90\) → ending the turn")
    term.expect("Report: I ran")
    term.expect("ended by the loop guard")
    term.expect(wrapped("reply to carry on in this session"))
    server.add(text("Understood, I will stop running false."), model=AGENT_MODEL)
    term.type("fine, stop trying")
    term.expect("Understood, I will stop running false.")
    term.expect("done ·")
    session_id = term.ctrl_d()

    last = server.requests_for(AGENT_MODEL)[-1]
    users = [
        m["content"] for m in last.messages if m["role"] == "user" and isinstance(m["content"], str)
    ]
    assert users == ["make false succeed", "fine, stop trying"]
    assert "Report: I ran" in str(last.messages)
    ended = [e["status"] for e in caretz.events(session_id) if e["type"] == "Turn.Ended"]
    assert ended == ["loop_guard", "done"]


# -- helpers -------------------------------------------------------------------------------


def wait_until(condition, timeout_s: float = TIMEOUT_S) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def process_running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie may wait for a reaper that never comes)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status


STYLE = r"(?:\x1b\[[0-9;?]*[A-Za-z])*"  # colour codes (the command is highlighted as bash)


def test_the_approval_prompt_answers_no_with_a_note_yes_once_yes_always_and_ctrl_c_stops(
    terminal, caretz, server: ModelServer, workspace: Path
):
    server.add(
        tool("bash", command="touch no.txt"),
        tool("bash", command="touch yes.txt"),
        tool("bash", command="echo again >> log.txt"),
        tool("bash", command="echo again >> log.txt"),  # saved by "always": runs unasked
        tool("bash", command="touch interrupted.txt"),
        text("All steps done."),  # never asked for: Ctrl-C stopped the turn
    )
    term = terminal("--permission-mode", "ask")

    term.type("do the steps")
    term.expect(f"caretz asks before it runs {STYLE}bash")
    term.expect(f"touch{STYLE} {STYLE}no.txt")
    term.expect(f"why: {STYLE}ask mode: every command asks first")
    term.expect("allow\\? ")
    term.child.send("n use a name the user picks\r")
    term.expect(f"touch{STYLE} {STYLE}yes.txt")
    term.expect("allow\\? ")
    term.child.send("y\r")
    term.expect(r"yes, always: saves Bash\(echo again\) to \.caretz/settings\.json")
    term.expect("allow\\? ")
    term.child.send("a\r")
    term.expect(f"touch{STYLE} {STYLE}interrupted.txt")
    term.expect("allow\\? ")
    term.child.sendintr()  # Ctrl-C at the question stops the turn, not only that call
    term.expect("interrupted")
    session_id = term.ctrl_d()

    assert not (workspace / "no.txt").exists() and (workspace / "yes.txt").exists()
    assert not (workspace / "interrupted.txt").exists()
    assert (workspace / "log.txt").read_text() == "again\nagain\n"
    saved = json.loads((workspace / ".caretz" / "settings.json").read_text())
    assert saved == {"permissions": {"allow": ["Bash(echo again)"]}}
    raw = "".join(term.transcript)
    assert re.search(r"\x1b\[96[;0-9]*mecho\x1b", raw)  # highlighted as bash: a builtin's colour
    screen = re.sub(STYLE, "", raw)
    assert screen.count("caretz asks before it runs bash") == 4  # not for the saved command
    declined = server.requests[1].messages[-1]["content"][0]
    assert declined["is_error"] is True
    assert declined["content"].endswith("The user's note: use a name the user picks")
    events = caretz.events(session_id)
    answers = [(e["input"], e["answer"]) for e in events if e["type"] == "Permission.Decided"]
    assert answers == [
        ("touch no.txt", "no"),
        ("touch yes.txt", "yes"),
        ("echo again >> log.txt", "always"),
    ]
    assert len(server.requests) == 5  # nothing after the interrupted call
    ended = [e["status"] for e in events if e["type"] == "Turn.Ended"]
    assert ended == ["interrupted"]
    assert types(events).count("Permission.Asked") == 4
    shown = caretz("sessions", "show", session_id).stdout
    assert "[permission] no: bash `touch no.txt` (note: use a name the user picks)" in shown
    assert "[permission] yes, always: bash `echo again >> log.txt`; saved Bash(echo again)" in shown
