"""Custom slash commands end to end: Markdown files in the project's `.caretz/commands/`,
the user's `commands/` and `.claude/commands/`, run with `caretz -p "/name args"` and
typed in the interactive session (a real pseudo-terminal)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.conftest import types
from tests.e2e.hook_scripts import project_settings
from tests.e2e.terminal import wrapped
from tests.importtime import modules_imported_by_a_run
from tests.modelserver import RecordedRequest, calls, text
from tests.trusting import trust_project

REVIEW = """---
description: Review a pull request
argument-hint: PR-NUMBER [FOCUS]
---
Review pull request $1, paying attention to $2.
(Everything typed: $ARGUMENTS)
"""


def write_command(folder: Path, name: str, body: str) -> Path:
    path = folder / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    return path


def user_text(request: RecordedRequest) -> str:
    content = request.messages[-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


def tool_results(request: RecordedRequest) -> list[str]:
    return [
        block["content"] if isinstance(block["content"], str) else block["content"][0]["text"]
        for block in request.messages[-1]["content"]
        if block.get("type") == "tool_result"
    ]


@pytest.fixture
def commands(workspace: Path) -> Path:
    return workspace / ".caretz" / "commands"


def test_a_command_with_arguments_runs_headless(caretz, server, commands):
    write_command(commands, "review", REVIEW)
    server.add(text("Reviewed."))

    run = caretz("-p", '/review 42 "the parser"')

    assert run.code == 0, run.stderr
    assert user_text(server.requests[0]) == (
        "Review pull request 42, paying attention to the parser.\n"
        '(Everything typed: 42 "the parser")'
    )
    started = [e for e in caretz.events(run.session_id) if e["type"] == "Turn.Started"]
    assert started[0]["prompt"].startswith("Review pull request 42")


def test_a_headless_command_never_loads_the_interactive_session(caretz, server, commands):
    write_command(commands, "review", REVIEW)
    server.add(text("Reviewed."))

    loaded = modules_imported_by_a_run(caretz.workspace, caretz.environment(), prompt="/review 1")

    assert "caretz.app.session" in loaded and len(server.requests) == 1
    interactive = {"caretz.ui.repl", "caretz.ui.slash", "caretz.ui.session_control"}
    assert not loaded & interactive
    assert not {name for name in loaded if name.split(".")[0] == "prompt_toolkit"}


def test_subfolders_give_namespaced_names_and_claude_code_folders_are_read(
    caretz, server, workspace, commands
):
    write_command(commands / "frontend", "test", "Test the $ARGUMENTS component.")
    write_command(workspace / ".claude" / "commands", "legacy", "From Claude Code: $1")
    write_command(workspace / ".claude" / "commands", "frontend/test", "never used")
    user_dir = Path(os.environ["CARETZ_CONFIG"]).parent / "commands"
    write_command(user_dir, "mine", "My own command, no placeholders.")
    server.add(text("a"), text("b"), text("c"))

    first = caretz("-p", "/frontend:test Button")
    second = caretz("-p", "/legacy hello")
    third = caretz("-p", "/mine extra words")

    assert (first.code, second.code, third.code) == (0, 0, 0), first.stderr + second.stderr
    # The project's .caretz/commands/ wins a name over .claude/commands/.
    assert user_text(server.requests[0]) == "Test the Button component."
    assert user_text(server.requests[1]) == "From Claude Code: hello"
    assert user_text(server.requests[2]) == (
        "My own command, no placeholders.\n\nARGUMENTS: extra words"
    )


def test_an_unknown_or_built_in_name_is_refused_without_a_model_call(caretz, server, commands):
    write_command(commands, "review", REVIEW)
    unknown = caretz("-p", "/frobnicate now")
    typo = caretz("-p", "/revew 42")
    builtin = caretz("-p", "/model openai/gpt-5")

    assert unknown.code == 2 and typo.code == 2 and builtin.code == 2
    assert unknown.stderr.startswith("caretz: unknown command /frobnicate: no custom command")
    assert "(nothing was sent)" in unknown.stderr
    assert typo.stderr == (
        "caretz: unknown command /revew: did you mean /review? (nothing was sent)\n"
    )
    assert "/model is a command of the interactive session" in builtin.stderr
    assert server.requests == []


def test_front_matter_model_runs_that_turn_on_that_model(caretz, server, commands):
    write_command(commands, "quick", "---\nmodel: anthropic/small-model\n---\nSummarize $1.")
    write_command(commands, "bare", "---\nmodel: other-model\n---\nBare $1.")
    server.add(text("Short."), model="small-model")
    server.add(text("Bare."), model="other-model")

    run = caretz("-p", "/quick README.md")
    bare = caretz("-p", "/bare id")  # a bare ID, as Claude Code's files write it

    assert run.code == 0 and bare.code == 0, run.stderr + bare.stderr
    assert [r.model for r in server.requests] == ["small-model", "other-model"]
    changed = [e for e in caretz.events(run.session_id) if e["type"] == "Session.Changed"]
    assert [e["model"] for e in changed] == ["anthropic/small-model", "anthropic/claude-test"]


def test_allowed_tools_run_without_asking_but_deny_rules_still_refuse(
    caretz, server, workspace, commands
):
    project_settings(workspace, {"permissions": {"deny": ["Bash(rm:*)"]}})
    write_command(
        commands,
        "tidy",
        "---\nallowed-tools: Bash(touch:*), Bash(rm:*)\n---\nTidy up $ARGUMENTS.",
    )
    trust_project(workspace)  # a project's command grants its tools once approved
    (workspace / "keep.txt").write_text("precious")
    server.add(calls(("bash", {"command": "touch made.txt"}), ("bash", {"command": "rm keep.txt"})))
    server.add(text("done"))

    # ask mode: every command would ask, and nobody can answer a -p run.
    run = caretz("-p", "/tidy the folder", "--permission-mode", "ask")

    assert run.code == 0, run.stderr
    assert (workspace / "made.txt").exists()  # allowed for the command's turn
    ran, refused = tool_results(server.requests[1])
    assert "denied by the deny rule Bash(rm:*)" in refused
    assert (workspace / "keep.txt").read_text() == "precious"


def test_an_allowed_tools_rule_caretz_cannot_read_is_one_line(caretz, server, commands):
    path = write_command(commands, "bad", "---\nallowed-tools: Frobnicate(x)\n---\nGo.")

    run = caretz("-p", "/bad")

    assert run.code == 2
    assert run.stderr.startswith(f"caretz: {path}: allowed-tools: the rule 'Frobnicate(x)'")
    assert len(run.stderr.strip().splitlines()) == 1
    assert server.requests == []


def test_custom_commands_in_the_interactive_session(terminal, caretz, server, commands):
    write_command(commands, "review", REVIEW)
    write_command(commands, "quick", "---\nmodel: anthropic/small-model\n---\nQuick: $1")
    write_command(commands, "help", "This one shadows /help and is not used.")
    server.add(text("Reviewed 7."))
    server.add(text("Quick answer."), model="small-model")
    server.add(text("Back on the session's model."))

    term = terminal()
    term.expect(wrapped("/help is a built-in"))  # the line starts with the file's path
    term.type("/help")
    term.expect("custom commands")
    term.expect(r"/review PR-NUMBER \[FOCUS\]")
    term.expect(r"Review a pull request.*\(project\)")
    term.type("/review 7 tests")
    term.expect("Reviewed 7.")
    term.type("/quick x")
    term.expect("/quick runs on anthropic/small-model")
    term.expect("Quick answer.")
    term.type("and now?")
    term.expect("Back on the session's model.")
    term.type("/nosuch thing")
    term.expect("unknown command /nosuch")
    term.type("/reveiw 8")  # close to a custom command and to nothing built in
    term.expect(wrapped("unknown command /reveiw: did you mean /review? (nothing was sent)"))
    term.type("/modle x")  # close to a built-in
    term.expect(wrapped("unknown command /modle: did you mean /model? (nothing was sent)"))
    session_id = term.ctrl_d()

    assert user_text(server.requests[0]).startswith(
        "Review pull request 7, paying attention to tests."
    )
    assert [r.model for r in server.requests] == ["claude-test", "small-model", "claude-test"]
    assert user_text(server.requests[1]) == "Quick: x"
    events = caretz.events(session_id)
    assert types(events).count("Turn.Started") == 3
