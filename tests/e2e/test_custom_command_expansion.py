"""A custom command's `!`command`` lines and `@path` files, end to end: run and read
through the session's tool registry (real bash in the sandbox, real files) before the
prompt goes to the loopback model server, under the permission rules, the command's
allowed-tools and the hooks; headless and in the interactive session (a real pty)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import types
from tests.e2e.hook_scripts import NO_PUSH, hooks_entry, project_settings, write_hook
from tests.e2e.test_custom_commands import user_text
from tests.e2e.test_custom_commands import write_command as write_command_file
from tests.modelserver import text
from tests.trusting import trust_project

STYLE = r"(?:\x1b\[[0-9;?]*[A-Za-z])*"  # colour codes (the command is highlighted as bash)

STATUS = """---
description: Say how things stand
allowed-tools: Bash(echo:*), Bash(cat:*)
---
Greeting: !`echo hello $1`
Notes: !`cat notes.txt`
Left as written: `echo plain`, wow! and !not-a-command.
Also see @notes.txt, @missing.txt, @pytest.fixture and me@example.com.
"""


@pytest.fixture
def commands(workspace: Path) -> Path:
    (workspace / "notes.txt").write_text("first note\nsecond note\n")
    return workspace / ".caretz" / "commands"


def write_command(folder: Path, name: str, body: str) -> Path:
    """A project command file, then the project's configuration approved (as `caretz
    trust` would): its `!` lines run only once it is."""
    path = write_command_file(folder, name, body)
    trust_project(folder.parent.parent)
    return path


def one_line(stderr: str) -> str:
    """The one `caretz:` line that stopped the command (the view's lines may precede it)."""
    lines = [line for line in stderr.splitlines() if line.startswith("caretz: ")]
    assert len(lines) == 1, stderr
    return lines[0]


def test_commands_run_and_files_are_inlined_before_the_first_request(caretz, server, commands):
    write_command(commands, "status", STATUS)
    server.add(text("All clear."))

    # ask mode: only the command's allowed-tools let the two commands run unasked.
    run = caretz("-p", "/status world", "--permission-mode", "ask")

    assert run.code == 0, run.stderr
    assert user_text(server.requests[0]) == (
        "Greeting: hello world\n"
        "Notes: first note\nsecond note\n"
        "Left as written: `echo plain`, wow! and !not-a-command.\n"
        "Also see @notes.txt, @missing.txt, @pytest.fixture and me@example.com.\n\n"
        '<file path="notes.txt">\n     1\tfirst note\n     2\tsecond note\n</file>'
    )
    events = caretz.events(run.session_id)
    ran = [e for e in events if e["type"] == "Command.Ran"]
    assert [(e["tool"], e["input"], e["ok"]) for e in ran] == [
        ("bash", "!`echo hello world`", True),
        ("bash", "!`cat notes.txt`", True),
        ("read", "@notes.txt", True),
    ]
    assert ran[0]["command"] == "/status" and ran[0]["output"] == "hello world"
    assert types(events).index("Command.Ran") < types(events).index("Turn.Started")
    shown = caretz("sessions", "show", run.session_id)
    assert "/status !`cat notes.txt` → ok" in shown.stdout
    assert "/status @notes.txt → ok" in shown.stdout


def test_a_failed_command_shows_its_exit_code_in_the_prompt(caretz, server, commands):
    write_command(commands, "check", "---\nallowed-tools: Bash(ls:*)\n---\nFiles: !`ls nope`")
    server.add(text("Noted."))

    run = caretz("-p", "/check", "--permission-mode", "ask")

    assert run.code == 0, run.stderr
    prompt = user_text(server.requests[0])
    assert prompt.startswith("Files: ls: cannot access 'nope'")
    assert prompt.endswith("[exit code 2]")


def test_a_command_no_rule_allows_stops_a_headless_run_before_any_request(
    caretz, server, workspace, commands
):
    path = write_command(
        commands,
        "tidy",
        "---\nallowed-tools: Bash(echo:*)\n---\nFirst !`echo one`, then !`touch made.txt`.",
    )

    run = caretz("-p", "/tidy", "--permission-mode", "ask")

    assert run.code == 2
    line = one_line(run.stderr)
    assert line.startswith(f"caretz: {path}: !`touch made.txt` was refused: ")
    assert "add Bash(touch made.txt) to its allowed-tools" in line
    assert line.endswith("(nothing was sent)")
    assert server.requests == []
    assert not (workspace / "made.txt").exists()


def test_in_auto_mode_a_command_runs_only_where_a_rule_allows_it(
    caretz, server, workspace, commands
):
    """A command file may come with the repository: its `!` commands need its
    allowed-tools (or the user's allow rules) even where the sandbox would run them."""
    write_command(commands, "bare", "Now: !`touch bare.txt`")
    write_command(
        commands, "granted", "---\nallowed-tools: Bash(touch:*)\n---\nNow: !`touch ok.txt`"
    )
    server.add(text("Done."))

    refused = caretz("-p", "/bare")
    granted = caretz("-p", "/granted")

    assert refused.code == 2
    line = one_line(refused.stderr)
    assert "add Bash(touch bare.txt) to its allowed-tools" in line
    assert "command file's ! commands run unasked only where a rule allows them" in line
    assert not (workspace / "bare.txt").exists()
    assert granted.code == 0, granted.stderr
    assert (workspace / "ok.txt").exists()
    assert len(server.requests) == 1


def test_a_deny_rule_beats_the_commands_allowed_tools(caretz, server, workspace, commands):
    project_settings(workspace, {"permissions": {"deny": ["Bash(rm:*)"]}})
    (workspace / "keep.txt").write_text("precious")
    path = write_command(commands, "clean", "---\nallowed-tools: Bash(rm:*)\n---\n!`rm keep.txt`")

    run = caretz("-p", "/clean")

    assert run.code == 2
    line = one_line(run.stderr)
    assert line.startswith(f"caretz: {path}: !`rm keep.txt` was refused: ")
    assert "deny rule Bash(rm:*)" in line and "wins over the command's allowed-tools" in line
    assert (workspace / "keep.txt").read_text() == "precious"
    assert server.requests == []


def test_a_pre_tool_use_hook_that_blocks_git_push_stops_the_command(
    caretz, server, workspace, commands
):
    hook = write_hook(workspace, "no_push", NO_PUSH)
    project_settings(workspace, {"hooks": {"PreToolUse": [hooks_entry(hook, "Bash")]}})
    path = write_command(
        commands,
        "ship",
        "---\nallowed-tools: Bash(git push:*)\n---\nPushed: !`echo x > pushed.txt && git push`",
    )

    run = caretz("-p", "/ship")

    assert run.code == 2
    line = one_line(run.stderr)
    assert line.startswith(f"caretz: {path}: !`echo x > pushed.txt && git push` was refused")
    assert "pushing is not allowed from this project" in line
    assert not (workspace / "pushed.txt").exists()
    assert server.requests == []
    events = caretz.events(run.session_id)
    assert [e["refused"] is not None for e in events if e["type"] == "Command.Ran"] == [True]


def test_a_file_under_a_hidden_path_is_refused(caretz, server, workspace, commands, tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY 0123")
    path = write_command(commands, "leak", "Summarize @~/.ssh/id_rsa please.")

    run = caretz("-p", "/leak", env={"HOME": str(home)})

    assert run.code == 2
    line = one_line(run.stderr)
    assert line.startswith(f"caretz: {path}: @~/.ssh/id_rsa cannot be included: ")
    assert "hidden" in line and "PRIVATE KEY" not in run.stderr + run.stdout
    assert server.requests == []


def test_a_binary_file_is_refused(caretz, server, workspace, commands):
    (workspace / "blob.bin").write_bytes(b"\x00\x01binary")
    path = write_command(commands, "look", "Look at @blob.bin")

    run = caretz("-p", "/look")

    assert run.code == 2
    assert one_line(run.stderr).startswith(f"caretz: {path}: @blob.bin cannot be included: ")
    assert "binary" in run.stderr
    assert server.requests == []


def test_the_interactive_session_asks_and_yes_runs_the_command(
    terminal, caretz, server, workspace, commands
):
    write_command(commands, "stamp", "Stamp: !`echo stamped-$1`")
    write_command(commands, "nope", "Never: !`touch never.txt`")
    server.add(text("Stamped."))
    server.add(text("Back to normal."))

    term = terminal("--permission-mode", "ask")
    term.type("/stamp 42")
    term.expect(f"caretz asks before it runs {STYLE}bash")
    term.expect("allow\\? ")
    term.child.send("y\r")
    term.expect("Stamped.")
    term.type("/nope")
    term.expect("allow\\? ")
    term.child.send("n\r")
    gap = r"(?:\s|\x1b\[[0-9;]*m)+"  # the red line wraps at the terminal's width
    term.expect(f"never\\.txt`{gap}was{gap}refused")
    term.type("and now?")
    term.expect("Back to normal.")
    session_id = term.ctrl_d()

    assert user_text(server.requests[0]) == "Stamp: stamped-42"
    assert user_text(server.requests[1]) == "and now?"  # /nope sent nothing
    assert not (workspace / "never.txt").exists()
    events = caretz.events(session_id)
    decided = [e["answer"] for e in events if e["type"] == "Permission.Decided"]
    assert decided == ["yes", "no"]
