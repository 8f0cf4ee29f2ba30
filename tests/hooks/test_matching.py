"""Which hooks an event runs (hooks/matching.py): Claude Code's matcher forms."""

from __future__ import annotations

from caretz.hooks.config import HooksConfig
from caretz.hooks.matching import HookFile, claude_tool_name, matches, selected


def test_plain_names_match_exactly_and_regexes_search():
    assert matches("Bash", "bash", "Bash") and matches("bash", "bash", "Bash")
    assert not matches("Bash", "mcp__shell__Bash_run")
    assert matches("Edit|Write", "write", "Write") and not matches("Edit|Write", "read", "Read")
    assert matches("mcp__github__.*", "mcp__github__create_issue")
    assert not matches("mcp__github", "mcp__github__create_issue")  # plain: exact
    assert matches("", "anything") and matches("*", "anything")
    assert matches("Notebook.*", "NotebookEdit") and not matches("Notebook.*", "read", "Read")


def test_tools_answer_to_claude_codes_names():
    assert [claude_tool_name(t) for t in ("bash", "read", "grep", "todo")] == [
        "Bash",
        "Read",
        "Grep",
        "todo",
    ]


def entry(command: str, matcher: str = "") -> dict:
    return {"matcher": matcher, "hooks": [{"type": "command", "command": command}]}


def test_hooks_run_in_file_order_and_a_command_written_twice_runs_once():
    profile = HooksConfig.model_validate(
        {"PreToolUse": [entry("a", "Bash"), entry("b", "Read"), entry("shared")]}
    )
    project = HooksConfig.model_validate({"PreToolUse": [entry("shared"), entry("c", "bash")]})
    files = [HookFile(profile, "profile"), HookFile(project, "project")]

    chosen = list(selected(files, "PreToolUse", "bash", "Bash"))

    assert [(h.command.command, h.source) for h in chosen] == [
        ("a", "profile"),
        ("shared", "profile"),
        ("c", "project"),
    ]
    assert list(selected(files, "Stop")) == []
