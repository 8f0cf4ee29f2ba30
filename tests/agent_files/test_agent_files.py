"""Agent files read leniently (YAML first, line by line where YAML refuses), in every folder
and shape caretz reads, the nearest folder winning a name; a limit names what it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from caretz.agent_files.definition import AgentFileError, parse_agent
from caretz.agent_files.folders import agent_folders, load_agents
from caretz.messages import ToolCall
from caretz.sandbox.door import ProjectDoor
from caretz.tools.base import ToolContext
from caretz.tools.narrowing import tool_limit
from caretz.tools.policy import CancelToolCall


def test_front_matter_yaml_refuses_is_read_line_by_line() -> None:
    text = "---\nname: Doc-Writer\ndescription: Writes docs: guides, references\ntools: Read, Write\n---\nBody\n"
    agent = parse_agent(text, Path("a.md"), "project", "a")
    assert (agent.name, agent.description, agent.tools) == (
        "doc-writer",
        "Writes docs: guides, references",
        ("Read", "Write"),
    )
    assert agent.prompt == "Body"


def test_opencode_and_copilot_shapes() -> None:
    opencode = (
        "---\ndescription: Reviews\nmode: subagent\ntools:\n  write: false\n  bash: false\n---\nx"
    )
    agent = parse_agent(opencode, Path("review.md"), "project", "review")
    assert (agent.name, agent.tools, agent.disallowed_tools) == ("review", None, ("write", "bash"))
    copilot = "---\nname: planner\ndescription: Plans\ntools: ['search', 'fetch']\n---\nx"
    assert parse_agent(copilot, Path("p.agent.md"), "project", "p").tools == ("search", "fetch")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no front matter", "no front matter"),
        ("---\nname: x\n---\n", "description is missing"),
        ("---\nname: a b\ndescription: d\n---\n", "is not a name"),
        ("---\nname: a\ndescription: d\nisolation: docker\n---\n", "isolation 'docker'"),
    ],
)
def test_a_file_caretz_cannot_use_says_why(text: str, problem: str) -> None:
    with pytest.raises(AgentFileError, match=problem):
        parse_agent(text, Path("bad.md"), "project", "bad")


def test_the_nearest_folder_wins_a_name_and_the_user_comes_last(tmp_path: Path) -> None:
    root, home = tmp_path / "repo", tmp_path / "home"
    inner = root / "pkg"
    for folder, text in [
        (inner / ".claude" / "agents", "inner"),
        (root / ".caretz" / "agents", "root"),
        (root / ".github" / "agents", "github"),
        (home / ".caretz" / "agents", "user"),
    ]:
        folder.mkdir(parents=True)
        suffix = ".agent.md" if "github" in str(folder) else ".md"
        (folder / f"helper{suffix}").write_text(f"---\ndescription: {text}\n---\n{text}\n")
    door = ProjectDoor((root,))
    catalog = load_agents(agent_folders(inner, root, home, door))
    assert catalog.agents["helper"].description == "inner"
    assert [a.description for a in catalog.shadowed] == ["root", "github", "user"]


def test_a_limit_refuses_what_its_entries_do_not_name(tmp_path: Path) -> None:
    limit = tool_limit("the agent 'x'", ["Read", "Bash(git status)"], ["Grep"], tmp_path, "x.md")
    ctx = ToolContext(workspace=tmp_path)
    assert limit.permits("read") and limit.permits("bash")
    assert not limit.permits("grep") and not limit.permits("write")
    limit(ToolCall(id="1", name="bash", arguments={"command": "git status"}), ctx)
    with pytest.raises(CancelToolCall, match="outside its pattern"):
        limit(ToolCall(id="2", name="bash", arguments={"command": "rm -rf ."}), ctx)
    with pytest.raises(CancelToolCall, match="may not call write"):
        limit(ToolCall(id="3", name="write", arguments={"path": "a"}), ctx)
    unreadable = tool_limit("the agent 'y'", ["Bash(", "Glob"], [], tmp_path, "y.md")
    assert not unreadable.permits("bash") and unreadable.permits("glob")


CODEX_REVIEWER = '''\
name = "reviewer"
description = "PR reviewer focused on correctness, security, and missing tests."
model = "gpt-5.3-codex"
model_reasoning_effort = "high"
sandbox_mode = "read-only"
nickname_candidates = ["Atlas"]
developer_instructions = """
Review code like an owner.
Lead with concrete findings.
"""

[mcp_servers.docs]
url = "https://example.com/mcp"
'''


def test_a_codex_agent_file_is_read_and_only_narrows(tmp_path: Path) -> None:
    agents = tmp_path / ".codex" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.toml").write_text(CODEX_REVIEWER)
    (agents / "broken.toml").write_text('name = "broken"\ndescription = ')
    (agents / "open.toml").write_text(
        'name = "open"\ndescription = "x"\nsandbox_mode = "danger-full-access"\n'
    )

    catalog = load_agents(
        agent_folders(tmp_path, tmp_path, tmp_path / "home", ProjectDoor((tmp_path,)))
    )

    reviewer = catalog.agents["reviewer"]
    assert reviewer.prompt == "Review code like an owner.\nLead with concrete findings."
    assert (reviewer.model, reviewer.permission_mode) == ("openai/gpt-5.3-codex", "read-only")
    assert catalog.agents["open"].permission_mode is None  # a wider sandbox is not taken
    (warning,) = catalog.warnings
    assert warning.startswith(f"{agents / 'broken.toml'}: not TOML")
