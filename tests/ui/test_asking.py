"""The approval prompt (keys, notes, the paused live view), /permissions, and the
[permission] lines of the views and `sessions show`."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from rich.console import Console

from caretz.app.session import start_session
from caretz.config.settings import resolve_settings
from caretz.messages import ToolCall
from caretz.session.events import read_events
from caretz.session.records.parse import parse_record
from caretz.tools.asking import Answer, Question
from caretz.ui.asking import TerminalAsker, parse_answer
from caretz.ui.live import LiveView
from caretz.ui.permission_lines import permission_line
from caretz.ui.repl import Repl
from caretz.ui.sessions_text import describe_event
from caretz.ui.slash import dispatch
from tests.modelserver import ModelServer
from tests.trusting import trust_project

QUESTION = Question(
    tool="bash",
    arguments={"command": "npm run build && curl -sf https://registry.npmjs.org"},
    summary="npm run build && curl -sf https://registry.npmjs.org",
    reason="the model asks to run this outside the sandbox: check the registry is up",
    escalate="check the registry is up",
    saves=("Bash(npm run build)", "Bash(curl -sf https://registry.npmjs.org)"),
)


@pytest.mark.parametrize(
    ("typed", "offered", "expected"),
    [
        ("y", True, Answer("yes")),
        ("Y", True, Answer("yes")),
        ("yes", True, Answer("yes")),
        ("a", True, Answer("always")),
        ("n", True, Answer("no")),
        ("n use ripgrep instead", True, Answer("no", "use ripgrep instead")),
        ("n: too broad", True, Answer("no", "too broad")),
        ("y  but be quick ", True, Answer("yes", "but be quick")),
        ("a", False, None),  # always was not offered
        ("nope", True, None),
        ("", True, None),
        ("maybe", True, None),
    ],
)
def test_the_key_comes_first_and_a_note_may_follow(typed, offered, expected):
    assert parse_answer(typed, offered) == expected


def plain_console() -> Console:
    return Console(file=io.StringIO(), width=160, color_system=None, highlight=False)


def test_the_prompt_pauses_the_live_view_and_shows_the_call_why_and_the_keys():
    console = plain_console()
    view = LiveView(console)
    view.begin_turn()
    view.set_status("bash npm run build")
    running = view.live
    typed = iter(["maybe", "a"])
    seen_live: list[object] = []

    def read_line(prompt: str) -> str:
        seen_live.append(view.live)
        return next(typed)

    answer = TerminalAsker(console, view, read_line)(QUESTION)
    resumed = view.live
    view.end_turn()

    assert answer == Answer("always")
    assert seen_live == [None, None]  # nothing redrew over the question
    assert running is not None and resumed is not None and resumed is not running
    shown = console.file.getvalue()
    assert "caretz asks before it runs bash" in shown
    assert "npm run build && curl -sf https://registry.npmjs.org" in shown
    assert "why: the model asks to run this outside the sandbox: check the registry is up" in shown
    assert (
        "a  yes, always: saves Bash(npm run build), Bash(curl -sf https://registry.npmjs.org) "
        "to .caretz/settings.json" in shown
    )
    assert "answer y, a or n" in shown  # "maybe" was asked again


def test_always_is_not_offered_without_a_rule_to_save_ctrl_d_is_no_and_ctrl_c_stops():
    console = plain_console()
    view = LiveView(console)
    question = Question(tool="bash", arguments={"command": "$x v"}, summary="$x v", reason="reason")

    def ended(prompt: str) -> str:
        raise EOFError

    def interrupted(prompt: str) -> str:
        raise KeyboardInterrupt

    assert TerminalAsker(console, view, ended)(question) == Answer("no")
    assert "yes, always" not in console.file.getvalue()
    with pytest.raises(KeyboardInterrupt):
        TerminalAsker(console, view, interrupted)(question)


# ---------------------------------------------------------------- /permissions


@pytest.fixture
def env(server: ModelServer) -> dict[str, str]:
    Path(os.environ["CARETZ_CONFIG"]).write_text(
        json.dumps(
            {
                "profiles": {
                    "general": {
                        "model": "anthropic/claude-main",
                        "permissions": {"deny": ["Bash(rm:*)"], "ask": ["Bash(git push:*)"]},
                    }
                }
            }
        )
    )
    return {
        "ANTHROPIC_API_KEY": "sk-test",
        "ANTHROPIC_BASE_URL": server.url,
        "CARETZ_DATA_DIR": os.environ["CARETZ_DATA_DIR"],
        "CARETZ_CONFIG": os.environ["CARETZ_CONFIG"],
    }


@pytest.fixture
def repl(env, tmp_path):
    (tmp_path / ".caretz").mkdir()
    (tmp_path / ".caretz" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(npm run test)"]}})
    )
    trust_project(tmp_path)  # the project's allow rule applies once approved
    console = Console(file=io.StringIO(), width=120, color_system=None)
    view = LiveView(console)
    session = start_session(resolve_settings({}, env), view, env, workspace=tmp_path)
    running = Repl(session, view, console, env)
    yield running
    running.session.log.close()


def run(repl: Repl, line: str) -> str:
    before = len(repl.console.file.getvalue())
    assert dispatch(repl, line)
    return repl.console.file.getvalue()[before:]


def test_permissions_shows_the_mode_and_every_rule_with_its_file(repl):
    shown = run(repl, "/permissions")

    assert "permissions: auto (switch with /permissions auto|ask|read-only|plan|yolo)" in shown
    rows = [
        line.split() for line in shown.splitlines() if line.startswith(("deny", "ask", "allow"))
    ]
    assert rows == [
        ["deny", "Bash(rm:*)", "profiles.json:", "profiles.general.permissions"],
        ["ask", "Bash(git", "push:*)", "profiles.json:", "profiles.general.permissions"],
        ["allow", "Bash(npm", "run", "test)", ".caretz/settings.json"],
    ]


def test_permissions_mode_switches_the_session_and_yolo_shows_its_banner(repl):
    tools = repl.session.agent.parts.tools

    shown = run(repl, "/permissions yolo")

    assert "permissions: yolo" in shown and "yolo mode: commands run without a sandbox" in shown
    assert repl.session.settings.permission_mode == "yolo"
    assert repl.session.permissions.mode == "yolo"
    assert repl.session.agent.parts.tools is not tools  # rebuilt for the mode
    changed = [
        e.to_dict() for e in read_events(repl.session.events_path) if e.type == "Session.Changed"
    ]
    assert changed[-1]["change"] == "permission_mode" and changed[-1]["permission_mode"] == "yolo"
    assert "no rules" not in run(repl, "/permissions")  # the rules carried over

    assert "unknown permission mode 'never'" in run(repl, "/permissions never")
    assert repl.session.settings.permission_mode == "yolo"


def test_read_only_switched_mid_session_refuses_the_next_write(repl, tmp_path):
    run(repl, "/permissions read-only")
    parts = repl.session.agent.parts

    result = parts.tools.run(
        ToolCall(id="c1", name="write", arguments={"path": "x.txt", "content": ""}), parts.tool_ctx
    )

    assert not result.ok and "read-only mode" in result.output
    assert not (tmp_path / "x.txt").exists()


# ---------------------------------------------------------------- [permission] lines

ASKED = {
    "type": "Permission.Asked",
    "tool": "bash",
    "input": "git push origin main",
    "reason": "`git push origin main` asks first by the ask rule Bash(git push:*) (profiles.json)",
}


@pytest.mark.parametrize(
    ("event", "line"),
    [
        (
            ASKED,
            "[permission] asked about bash `git push origin main`: `git push origin main` asks "
            "first by the ask rule Bash(git push:*) (profiles.json)",
        ),
        (
            {**ASKED, "type": "Permission.Decided", "would_ask": True, "asked": True,
             "answer": "no", "note": "not on Fridays"},
            "[permission] no: bash `git push origin main` (note: not on Fridays)",
        ),
        (
            {"type": "Permission.Decided", "tool": "bash", "input": "npm ci", "reason": "r",
             "would_ask": True, "asked": True, "answer": "always",
             "saved_rules": ["Bash(npm ci)"]},
            "[permission] yes, always: bash `npm ci`; saved Bash(npm ci)",
        ),
        (
            {"type": "Permission.Decided", "tool": "write", "input": "a.txt",
             "reason": "read-only mode: write changes files", "would_ask": False,
             "asked": False, "answer": "no"},
            "[permission] refused write `a.txt`: read-only mode: write changes files",
        ),
        (
            {"type": "Permission.Decided", "tool": "bash", "input": "curl x", "reason": "r",
             "would_ask": True, "asked": False, "answer": "no"},
            "[permission] denied bash `curl x` (nobody can approve in a headless run): r",
        ),
    ],
)  # fmt: skip
def test_each_ask_and_answer_is_one_line_in_sessions_show(event, line):
    assert permission_line(parse_record(event)) == line
    assert describe_event(parse_record(event)) == line


def test_a_yolo_session_opens_with_the_red_banner(env, tmp_path):
    console = Console(file=io.StringIO(), width=200, color_system="truecolor")
    view = LiveView(console)
    settings = resolve_settings({"permission_mode": "yolo"}, env)
    session = start_session(settings, view, env, workspace=tmp_path)
    try:
        Repl(session, view, console, env).welcome(resumed=False)
    finally:
        session.log.close()

    shown = console.file.getvalue()
    assert "permissions yolo" in shown
    banner = next(line for line in shown.splitlines() if "yolo mode:" in line)
    assert "\x1b[1;31m" in banner  # bold red
    assert "commands run without a sandbox and nothing asks first" in banner


def test_a_file_change_shows_what_it_changes():
    console = plain_console()
    edit = Question(
        tool="edit",
        arguments={"path": "app.py", "old_string": "x = 1\ny = 2", "new_string": "x = 1\ny = 3"},
        summary="app.py",
        reason="ask mode: every file change asks first",
    )
    write = Question(
        tool="write",
        arguments={"path": "new.md", "content": "# Title\nbody"},
        summary="new.md",
        reason="r",
    )

    TerminalAsker(console, LiveView(console), lambda prompt: "y")(edit)
    TerminalAsker(console, LiveView(console), lambda prompt: "y")(write)

    shown = console.file.getvalue()
    assert "-y = 2" in shown and "+y = 3" in shown and "app.py" in shown
    assert "# Title" in shown and "new.md" in shown
