"""Agent Skills end to end: SKILL.md folders in the project (from the working folder up to
the repository root) and in the user's home, offered in the system prompt, loaded by the
model's `skill` tool and by `caretz -p "/name"`, their `allowed-tools` granted only as the
project's trust lets them, and a SKILL.md that leads out of the project refused."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Caretz
from tests.modelserver import ModelServer, RecordedRequest, calls, text, tool
from tests.trusting import trust_project

FOLDERS = {  # skill → where it lives: (root "project" | "sub" | "home", home folder)
    "alpha": ("project", ".caretz"),
    "beta": ("project", ".agents"),
    "gamma": ("sub", ".claude"),
    "delta": ("home", ".caretz"),
    "epsilon": ("home", ".agents"),
    "zeta": ("home", ".claude"),
}


def write_skill(folder: Path, name: str, body: str, **meta: str) -> Path:
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    front = "".join(f"{key}: {value}\n" for key, value in {"name": name, **meta}.items())
    path.write_text(f"---\n{front}---\n{body}\n")
    return path


def tool_results(request: RecordedRequest) -> list[str]:
    return [
        block["content"] if isinstance(block["content"], str) else block["content"][0]["text"]
        for block in request.messages[-1]["content"]
        if block.get("type") == "tool_result"
    ]


def last_user_text(request: RecordedRequest) -> str:
    content = request.messages[-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


@pytest.fixture
def repo(workspace: Path, tmp_path: Path, caretz: Caretz) -> Caretz:
    """A git repository whose subfolder `sub` the runs start in, with a HOME of its own."""
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    (workspace / "sub").mkdir()
    home = tmp_path / "home"
    home.mkdir()
    caretz.workspace = workspace / "sub"
    caretz.env["HOME"] = str(home)
    return caretz


def test_a_skill_in_each_folder_is_offered_and_loaded_by_the_model_and_by_name(
    repo: Caretz, server: ModelServer, workspace: Path, tmp_path: Path
) -> None:
    places = {"project": workspace, "sub": workspace / "sub", "home": tmp_path / "home"}
    for name, (place, home) in FOLDERS.items():
        (places[place] / home / "skills" / name / "scripts").mkdir(parents=True)
        (places[place] / home / "skills" / name / "scripts" / "run.sh").write_text("secret\n")
        write_skill(
            places[place] / home / "skills", name, f"{name.upper()} STEPS", description=f"Do {name}"
        )
    # The project's skill of a name shadows the user's.
    write_skill(tmp_path / "home" / ".claude" / "skills", "alpha", "USER ALPHA", description="x")
    server.add(
        calls(*[("skill", {"name": name}) for name in FOLDERS]), calls(("skill", {"name": "beta"}))
    )
    server.add(text("Loaded."))
    server.add(text("Zeta done."))

    by_model = repo("-p", "use every skill")
    by_name = repo("-p", "/zeta the report")

    assert (by_model.code, by_name.code) == (0, 0), by_model.stderr + by_name.stderr
    first = server.requests[0]
    catalog = first.system.split("<available_skills>")[1]
    assert all(
        f"<name>{name}</name><description>Do {name}</description>" in catalog for name in FOLDERS
    )
    assert "USER ALPHA" not in first.system and "STEPS" not in first.system  # names only
    spec = next(t for t in first.body["tools"] if t["name"] == "skill")
    assert sorted(spec["input_schema"]["properties"]["name"]["enum"]) == sorted(FOLDERS)
    loaded = tool_results(server.requests[1])
    for name, result in zip(FOLDERS, loaded, strict=True):
        assert result.startswith(f'<skill_content name="{name}">')
        assert f"{name.upper()} STEPS" in result and "- scripts/run.sh" in result
        assert "secret" not in result  # bundled files are listed, not read
    assert "loaded already" in tool_results(server.requests[2])[0]  # beta, a second time
    assert "USER ALPHA" not in "".join(loaded)
    assert last_user_text(server.requests[3]).startswith('<skill_content name="zeta">')
    assert "ZETA STEPS" in last_user_text(server.requests[3])
    assert last_user_text(server.requests[3]).endswith("ARGUMENTS: the report")
    listed = repo("skills", "list", "--output", "json")
    data = json.loads(listed.stdout)
    where = {skill["name"]: skill["path"] for skill in data["skills"]}
    assert where["alpha"] == str(workspace / ".caretz" / "skills" / "alpha" / "SKILL.md")
    assert where["gamma"] == str(workspace / "sub" / ".claude" / "skills" / "gamma" / "SKILL.md")
    assert any("shadowed" in line and "alpha" in line for line in data["warnings"])


def test_a_project_skills_allowed_tools_apply_once_the_project_is_approved(
    repo: Caretz, server: ModelServer, workspace: Path
) -> None:
    skills = workspace / ".agents" / "skills"
    write_skill(skills, "stamp", "Stamp the folder.", description="Stamp", **{
        "allowed-tools": "Bash(touch:*) Read"
    })  # fmt: skip
    sub = workspace / "sub"
    nested = {"allowed-tools": "Bash(touch:*)"}  # below the root: it never grants
    write_skill(sub / ".claude" / "skills", "nested", "Nested.", description="Nested", **nested)
    for _ in range(2):
        server.add(tool("bash", command="touch by-name.txt"), text("named"))
        server.add(calls(("skill", {"name": "stamp"})), tool("bash", command="touch by-model.txt"))
        server.add(text("model"))

    # ask mode: every command asks, and nobody can answer a -p run.
    before = [repo("-p", "/stamp", "--permission-mode", "ask")]
    before.append(repo("-p", "stamp it", "--permission-mode", "ask"))
    made_before = sorted(path.name for path in sub.glob("by-*.txt"))
    listed = repo("skills", "list")
    shown = repo("trust", "--show")
    trust_project(workspace)
    after = [repo("-p", "/stamp", "--permission-mode", "ask")]
    after.append(repo("-p", "stamp it", "--permission-mode", "ask"))
    server.add(tool("bash", command="touch by-nested.txt"), text("nested"))
    after.append(repo("-p", "/nested", "--permission-mode", "ask"))

    assert [run.code for run in before + after] == [0, 0, 0, 0, 0], before[0].stderr
    assert made_before == []  # not approved: the skill ran, its grant did not apply
    assert "allowed-tools: Bash(touch:*) Read (waits for approval: caretz trust)" in listed.stdout
    assert ".agents/skills/stamp/SKILL.md: skill stamp grants tools while it runs" in shown.stdout
    assert "  allowed-tools: Bash(touch:*), Read" in shown.stdout
    assert "caretz leaves out the allowed-tools of skill stamp" in before[0].stderr
    assert "allowed-tools: Bash(touch:*) (never applies: only skills in the project root's" in (
        listed.stdout
    )
    assert "nested" not in shown.stdout
    assert sorted(path.name for path in sub.glob("by-*.txt")) == ["by-model.txt", "by-name.txt"]


def test_a_skill_that_leads_out_of_the_project_is_refused(
    repo: Caretz, server: ModelServer, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    write_skill(outside, "leak", "SECRET BODY", description="Leaks")
    write_skill(outside / "folder", "borrowed", "SECRET TOO", description="Borrowed")
    skills = workspace / ".claude" / "skills"
    (skills / "leak").mkdir(parents=True)
    os.symlink(outside / "leak" / "SKILL.md", skills / "leak" / "SKILL.md")
    (workspace / ".agents").mkdir()
    os.symlink(outside / "folder", workspace / ".agents" / "skills")
    write_skill(skills, "fine", "FINE BODY", description="Fine")
    server.add(text("hello"))

    run = repo("-p", "hi")
    listed = repo("skills", "list")

    assert run.code == 0, run.stderr
    system = server.requests[0].system
    assert "<name>fine</name>" in system
    assert "leak" not in system and "borrowed" not in system and "SECRET" not in system
    warnings = listed.stderr.splitlines()
    assert any(
        line.startswith(f"warning: {skills / 'leak' / 'SKILL.md'}: skill left out (leads to")
        and "outside the project" in line
        for line in warnings
    ), listed.stderr
    assert any(str(workspace / ".agents" / "skills") in line for line in warnings), listed.stderr
    assert "SECRET" not in listed.stdout + listed.stderr


def test_who_may_run_a_skill_and_slash_name_in_the_interactive_session(
    repo: Caretz, server: ModelServer, workspace: Path, terminal: Any
) -> None:
    skills = workspace / ".claude" / "skills"
    write_skill(skills, "deploy", "DEPLOY STEPS", description="Deploy", **{
        "disable-model-invocation": "true"
    })  # fmt: skip
    write_skill(skills, "background", "BACKGROUND FACTS", description="Facts", **{
        "user-invocable": "false"
    })  # fmt: skip
    server.add(text("Deployed."))

    deployed = repo("-p", "/deploy staging")
    refused = repo("-p", "/background")

    assert deployed.code == 0, deployed.stderr
    system = server.requests[0].system
    assert "<name>background</name>" in system and "deploy" not in system
    spec = next(t for t in server.requests[0].body["tools"] if t["name"] == "skill")
    assert spec["input_schema"]["properties"]["name"]["enum"] == ["background"]
    assert last_user_text(server.requests[0]).startswith('<skill_content name="deploy">')
    assert refused.code == 2 and "unknown command /background" in refused.stderr
    assert len(server.requests) == 1
    server.add(text("Deployed again."))
    term = terminal()
    term.type("/help")
    term.expect(r"skills.*caretz skills list")
    term.expect(r"Deploy \(project\)")
    term.type("/deploy prod")
    term.expect("/deploy: the skill from")
    term.expect("Deployed again.")
    assert last_user_text(server.requests[1]).startswith('<skill_content name="deploy">')
    assert last_user_text(server.requests[1]).endswith("ARGUMENTS: prod")
