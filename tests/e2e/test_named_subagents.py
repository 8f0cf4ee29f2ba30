"""Named subagents end to end: agent files as Claude Code writes them, offered by the task
tool as `subagent_type`, held to their `tools` and mode under the session's own checks,
read-only ones running at the same time, each agent's usage in the result object."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from tests.checkpoints.helpers import git
from tests.e2e.conftest import Caretz
from tests.e2e.test_worktrees import a_repository
from tests.modelserver import ModelServer, RecordedRequest, Reply, calls, text, tool

# An agent file in the shape Claude Code's `/agents` writes (kept unchanged: the keys
# caretz does not use, `color`, stay in it).
REVIEWER = """\
---
name: code-reviewer
description: Expert code review specialist. Proactively reviews code for quality, security, and maintainability. Use immediately after writing or modifying code.
tools: Read, Grep, Glob
model: inherit
color: blue
---

You are a senior code reviewer ensuring high standards of code quality and security.

When invoked:
1. Read the files the request names
2. Focus on what changed
3. Begin the review at once

Review checklist:
- Code is simple and readable
- Functions and variables are well-named
- No exposed secrets or API keys
- Proper error handling

Provide feedback organized by priority: critical issues (must fix), warnings (should
fix), suggestions (consider improving).
"""

SCOUT = """\
---
name: scout
description: "Read-only explorer: finds where something is defined."
tools:
  - Read
  - Grep
  - Glob
---
Find what you are asked for and report the file and line.
"""


def result_object(stdout: str) -> dict[str, Any]:
    return json.loads(stdout.splitlines()[-1])


def test_a_claude_code_agent_file_is_used_as_written_and_its_tools_bound_it(
    caretz: Caretz, server: ModelServer, workspace: Path, tmp_path: Path
) -> None:
    agents = workspace / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "code-reviewer.md").write_text(REVIEWER)
    (workspace / "app.py").write_text("print('hi')\n")
    server.add(
        tool(
            "task", subagent_type="code-reviewer", description="Review app", prompt="Review app.py"
        ),
        tool("write", path="notes.md", content="LGTM"),  # refused: not among its tools
        tool("read", path="app.py"),
        text("app.py is fine.", usage=(50, 7, 0)),
        text("The review found nothing.", usage=(300, 9, 0)),
    )

    run = caretz("-p", "review app.py", "--output", "json", env={"HOME": str(tmp_path)})

    assert run.code == 0, run.stderr
    main_first, child_first, child_second, _, _ = server.requests
    described = next(t for t in main_first.body["tools"] if t["name"] == "task")
    assert "code-reviewer: Expert code review specialist" in described["description"]
    assert "You are a senior code reviewer" in child_first.system
    assert sorted(child_first.tool_names) == ["glob", "grep", "read"]
    refusal = child_second.messages[-1]["content"][0]
    assert refusal["is_error"] is True
    assert "the agent 'code-reviewer' may not call write" in refusal["content"]
    assert not (workspace / "notes.md").exists()
    events = caretz.events(result_object(run.stdout)["session_id"])
    by_reviewer = [e["call"]["name"] for e in events if e["type"] == "Tool.Called"
                   and e["agent"] == "code-reviewer"]  # fmt: skip
    assert by_reviewer == ["write", "read"]
    agents_usage = result_object(run.stdout)["usage"]["agents"]
    assert agents_usage["code-reviewer"]["requests"] == 3
    assert agents_usage["code-reviewer"]["output_tokens"] == 20 + 20 + 7
    assert agents_usage["main"]["requests"] == 2
    assert agents_usage["main"]["input_tokens"] == 100 + 300


def test_read_only_subagents_asked_for_in_one_reply_run_at_the_same_time(
    caretz: Caretz, server: ModelServer, workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".caretz" / "agents").mkdir(parents=True)
    (workspace / ".caretz" / "agents" / "scout.md").write_text(SCOUT)
    both_asked = threading.Event()
    asked: set[str] = set()
    lock = threading.Lock()

    def answer(request: RecordedRequest) -> Reply:
        first = request.messages[0]["content"]
        first = first if isinstance(first, str) else first[0].get("text", "")
        if first not in ("find alpha", "find beta"):
            return text("Both found.")  # the main agent, after both reports
        with lock:
            asked.add(first)
            if len(asked) == 2:
                both_asked.set()
        # Each scout answers only once the other has asked too: one after the other,
        # the first would wait here for a request that never comes (and say so).
        together = both_asked.wait(timeout=30)
        return text(f"{first}: {'together' if together else 'alone'}", usage=(40, 5, 0))

    server.add(
        calls(
            ("task", {"subagent_type": "scout", "agent": "scout-a", "prompt": "find alpha"}),
            ("task", {"subagent_type": "scout", "agent": "scout-b", "prompt": "find beta"}),
        )
    )
    server.on(answer)

    run = caretz("-p", "find both", "--output", "json", env={"HOME": str(tmp_path)})

    assert run.code == 0, run.stderr
    reports = [m for m in server.requests[-1].messages[-1]["content"]]
    assert [r["content"] for r in reports] == ["find alpha: together", "find beta: together"]
    usage = result_object(run.stdout)["usage"]["agents"]
    assert (usage["scout-a"]["requests"], usage["scout-b"]["requests"]) == (1, 1)
    assert usage["scout-a"]["output_tokens"] == 5


def test_a_project_agent_never_widens_the_session_and_its_files_pass_the_door(
    caretz: Caretz, server: ModelServer, workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".claude" / "agents").mkdir(parents=True)
    (home / ".claude" / "agents" / "fixer.md").write_text(
        "---\nname: fixer\ndescription: The user's fixer.\n---\nFix things.\n"
    )
    outside = tmp_path / "outside.md"
    outside.write_text("---\nname: leak\ndescription: read from outside\n---\nx\n")
    agents = workspace / ".claude" / "agents"
    agents.mkdir(parents=True)
    # A project's agent that asks for everything: bypassPermissions and every tool.
    (agents / "fixer.md").write_text(
        "---\nname: fixer\ndescription: The project's fixer.\ntools: Bash, Write, Edit\n"
        "permissionMode: bypassPermissions\n---\nFix it.\n"
    )
    (agents / "planner.md").write_text(
        "---\nname: planner\ndescription: Plans only.\ntools: Bash, Write\n"
        "permissionMode: plan\n---\nPlan it.\n"
    )
    (agents / "pricey.md").write_text(
        "---\nname: pricey\ndescription: Runs elsewhere.\nmodel: nowhere/big-model\n---\nx\n"
    )
    os.symlink(outside, agents / "leak.md")
    server.add(
        tool("task", subagent_type="fixer", prompt="fix it"),
        tool("write", path="fixed.txt", content="done"),  # ask mode: nobody to ask in -p
        text("I could not change anything."),
        tool("task", subagent_type="planner", prompt="plan it"),
        tool("bash", command="touch touched.txt"),  # plan: read-only, sandbox writable
        text("Planned."),
        tool("task", subagent_type="pricey", prompt="x"),
        text("Done."),
    )
    env = {"HOME": str(home)}

    run = caretz("-p", "fix it", "--permission-mode", "ask", env=env)

    assert run.code == 0, run.stderr
    fixer_first, fixer_write = server.requests[1:3]
    assert "Fix it." in fixer_first.system  # the project's file wins the name
    assert sorted(fixer_first.tool_names) == ["bash", "edit", "multi_edit", "write"]
    assert "it needs the user's approval" in fixer_write.messages[-1]["content"][0]["content"]
    planner_first, planner_bash = server.requests[4:6]
    assert sorted(planner_first.tool_names) == ["bash"]  # read-only withholds write
    refusal = planner_bash.messages[-1]["content"][0]["content"]
    assert "this subagent's mode is read-only" in refusal
    assert not (workspace / "fixed.txt").exists() and not (workspace / "touched.txt").exists()
    model_refusal = server.requests[7].messages[-1]["content"][0]["content"]
    assert model_refusal.startswith("Not run: ") and "pricey.md: model: " in model_refusal
    assert "unknown provider 'nowhere'" in model_refusal

    listed = caretz("agents", "list", "--output", "json", env=env)

    assert listed.code == 0, listed.stderr
    shown = json.loads(listed.stdout)
    assert [(a["name"], a["scope"]) for a in shown["agents"]] == [
        ("fixer", "project"),
        ("planner", "project"),
        ("pricey", "project"),
    ]
    assert "unknown provider 'nowhere'" in shown["agents"][2]["model_error"]
    warnings = "\n".join(shown["warnings"])
    assert "leak.md: not read" in warnings and "outside the project" in warnings
    assert f"{home / '.claude' / 'agents' / 'fixer.md'}: agent 'fixer' is shadowed" in warnings
    text_listing = caretz("agents", "list", env=env).stdout
    assert "fixer  (project: " in text_listing and "tools: Bash, Write, Edit" in text_listing


BUILDER = """\
---
name: builder
description: Makes changes in a worktree of its own.
tools: Read, Write
isolation: worktree
---
Make the change asked for.
"""


def test_an_agent_in_a_worktree_changes_only_its_worktree_under_the_rules_there(
    caretz: Caretz, server: ModelServer, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "secret.txt").write_text("hunter2\n")
    (workspace / ".claude" / "agents").mkdir(parents=True)
    (workspace / ".claude" / "agents" / "builder.md").write_text(BUILDER)
    (workspace / ".caretz").mkdir()
    deny = {"permissions": {"deny": ["Read(./secret.txt)"]}}
    (workspace / ".caretz" / "settings.json").write_text(json.dumps(deny))
    a_repository(workspace)
    server.add(
        tool("task", subagent_type="builder", prompt="add new.txt"),
        tool("read", path="secret.txt"),  # its copy in the worktree: the deny rule holds
        tool("write", path="new.txt", content="made\n"),
        text("Added new.txt."),
        tool("task", subagent_type="builder", prompt="only look"),
        text("Nothing to change."),
        text("Done."),
    )

    run = caretz("-p", "add it", env={"HOME": str(tmp_path)})

    assert run.code == 0, run.stderr
    refused = server.requests[2].messages[-1]["content"][0]
    assert refused["is_error"] is True and "hunter2" not in refused["content"]
    first = server.requests[4].messages[-1]["content"][0]["content"]
    assert first.startswith("Added new.txt.\nIts changes are in the worktree ")
    tree = Path(first.split("worktree ", 1)[1].split(",")[0])
    assert tree.parent == workspace / ".caretz" / "worktrees"
    assert (tree / "new.txt").read_text() == "made\n" and not (workspace / "new.txt").exists()
    assert git(tree, "rev-parse", "--abbrev-ref", "HEAD").strip() == f"caretz/{tree.name}"
    second = server.requests[6].messages[-1]["content"][0]["content"]
    assert second == "Nothing to change.\nIt changed no file; its worktree is removed."
    assert [p.name for p in (workspace / ".caretz" / "worktrees").iterdir()] == [tree.name]
