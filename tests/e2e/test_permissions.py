"""Permission rules and modes through the real CLI (`caretz -p`) and the loopback model server.

In a headless run nobody can answer, so what would ask is denied, the model reads what
was denied and how the user can allow it, and the result object lists the denials.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Caretz
from tests.modelserver import ModelServer, RecordedRequest, calls, text, tool

# The forms that slipped past a `disallowedTools` "rm -rf" before (docs/security.md).
BYPASSES = [
    "rm -r -f v",
    "rm -fr v",
    "rm --recursive --force v",
    "x=rm; $x -rf v",
    "echo cm0gLXJmIHY= | base64 -d | bash",  # base64 of "rm -rf v"
    "find v -delete",
    "$'\\x72\\x6d' -rf v",
    "rm${IFS}-rf${IFS}v",
    # npm runs the package's script, handed `rm -rf v`: it may run it
    "npm run format -- rm -rf v",
]
# npm runs the package's script, the project's code, which no rule reads: it runs.
LOOK_ALIKES = ["npm run format", "grep -rl -e format -e ran bin/", "ls platform/"]


def tool_results(request: RecordedRequest) -> list[dict[str, Any]]:
    """The tool results the model was sent in its last user message."""
    last = request.messages[-1]
    return [block for block in last["content"] if block.get("type") == "tool_result"]


def result_object(run_stdout: str) -> dict[str, Any]:
    lines = [json.loads(line) for line in run_stdout.splitlines() if line.strip()]
    assert lines[-1]["type"] == "result"
    return lines[-1]


@pytest.fixture
def project(workspace: Path) -> dict[str, str]:
    """A folder `v` to protect, `platform/` to list, and an `npm` that only says it ran
    (inside the workspace: the sandbox gives commands a private /tmp)."""
    (workspace / "v").mkdir()
    (workspace / "v" / "keep.txt").write_text("precious")
    (workspace / "platform").mkdir()
    (workspace / "platform" / "linux.txt").write_text("")
    bin_dir = workspace / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text('#!/bin/sh\necho "fake npm ran: $*"\n')
    npm.chmod(0o755)

    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def settings_file(workspace: Path, data: dict[str, Any]) -> None:
    (workspace / ".caretz").mkdir(exist_ok=True)
    (workspace / ".caretz" / "settings.json").write_text(json.dumps(data))


@pytest.mark.parametrize("rule_form", ["disallowedTools", "Bash(rm:*)"])
def test_every_bypass_form_is_refused_and_the_look_alikes_run(
    caretz: Caretz, server: ModelServer, workspace: Path, project, rule_form: str
):
    if rule_form == "disallowedTools":
        caretz.write_config(
            {"profiles": {"general": {"loopGuard": {"detectors": {
                "disallowedTools": {"bash": ["rm -rf"]}}}}}}
        )  # fmt: skip
    else:
        settings_file(workspace, {"permissions": {"deny": ["Bash(rm:*)"]}})
    commands = [*BYPASSES, *LOOK_ALIKES]
    server.add(calls(*[("bash", {"command": command}) for command in commands]), text("done"))

    run = caretz("-p", "clean up", "--output", "json", env=project)

    assert run.code == 0, run.stderr
    assert (workspace / "v" / "keep.txt").read_text() == "precious"
    results = tool_results(server.requests[1])
    assert len(results) == len(commands)
    for command, result in zip(BYPASSES, results, strict=False):
        assert result["is_error"] is True, command
        assert "did not run" in result["content"] or "refused" in result["content"], command
    assert "its arguments hand it `rm -rf v`" in results[len(BYPASSES) - 1]["content"]
    npm, grep, ls = results[len(BYPASSES) :]
    assert npm.get("is_error") is not True and "fake npm ran: run format" in npm["content"]
    assert grep.get("is_error") is not True and "bin/npm" in grep["content"]
    assert ls.get("is_error") is not True and "linux.txt" in ls["content"]
    denials = result_object(run.stdout)["permission_denials"]
    assert [denial["input"] for denial in denials] == BYPASSES


def test_a_headless_run_denies_an_escalation_and_says_how_to_allow_it(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    command = "curl -sI https://pypi.org/simple/"
    server.add(tool("bash", command=command, escalate="check the index is up"), text("ok"))

    run = caretz("-p", "is pypi up?", "--output", "json")

    assert run.code == 0, run.stderr
    (result,) = tool_results(server.requests[1])
    assert result["is_error"] is True
    assert result["content"].startswith(f"caretz did not run this bash call ({command})")
    assert '"permissions.allow"' not in result["content"]  # no rule approves leaving the sandbox
    assert "sandbox.network" in result["content"]
    assert "--permission-mode yolo" in result["content"]
    summary = result_object(run.stdout)
    assert summary["permission_denials"] == [
        {
            "tool": "bash",
            "input": command,
            "reason": "the model asks to run this outside the sandbox: check the index is up",
        }
    ]
    events = caretz.events(summary["session_id"])
    decided = [e for e in events if e["type"] == "Permission.Decided"]
    assert [(e["asked"], e["answer"]) for e in decided] == [(False, "no")]


def test_ask_mode_in_a_headless_run_denies_a_write(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    server.add(tool("write", path="notes.md", content="hello"), text("could not"))

    run = caretz("-p", "write notes", "--permission-mode", "ask")

    assert run.code == 0, run.stderr
    assert not (workspace / "notes.md").exists()
    (result,) = tool_results(server.requests[1])
    assert result["is_error"] is True
    assert "ask mode: every file change asks first" in result["content"]
    assert "Edit(./notes.md)" in result["content"]
    assert "--permission-mode auto" in result["content"]
    assert "[permission] denied write `notes.md`" in run.stderr


def test_read_only_mode_refuses_a_write_naming_the_mode(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    (workspace / "app.py").write_text("x = 1\n")
    server.add(
        calls(
            ("edit", {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"}),
            ("read", {"path": "app.py"}),
        ),
        text("proposed"),
    )

    run = caretz("-p", "bump x", env={"CARETZ_PERMISSION_MODE": "read-only"})

    assert run.code == 0, run.stderr
    assert (workspace / "app.py").read_text() == "x = 1\n"
    edited, read = tool_results(server.requests[1])
    assert edited["is_error"] is True
    assert "read-only mode: edit changes files" in edited["content"]
    assert read.get("is_error") is not True and "x = 1" in read["content"]


def test_yolo_starts_with_a_banner_on_stderr(caretz: Caretz, server: ModelServer):
    server.add(text("done"))

    run = caretz("-p", "hi", "--permission-mode", "yolo")

    assert run.code == 0, run.stderr
    assert run.stderr.splitlines()[0] == (
        "yolo mode: commands run without a sandbox and nothing asks first (deny rules still apply)"
    )
    assert "yolo" not in run.stdout


@pytest.mark.parametrize("where", ["profile", "project"])
def test_a_rule_caretz_cannot_read_stops_it_with_one_line(
    caretz: Caretz, server: ModelServer, workspace: Path, where: str
):
    rules = {"deny": ["Bash(rm:*)", "Bsh(curl:*)"]}
    if where == "profile":
        caretz.write_config({"profiles": {"general": {"permissions": rules}}})
        named = "profiles.json: profiles.general.permissions"
    else:
        settings_file(workspace, {"permissions": rules})
        named = ".caretz/settings.json"

    run = caretz("-p", "hi")

    assert run.code == 2
    assert run.stderr.splitlines() == [
        f"caretz: {named}: the rule 'Bsh(curl:*)' cannot be read: unknown tool 'Bsh' "
        "(known: Bash, Read, Edit, Write, Glob, Grep, WebFetch, mcp__server__tool)"
    ]
    assert server.requests == []


def test_the_projects_settings_apply_from_the_git_root_down(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    settings_file(workspace, {"permissions": {"deny": ["Read(./secrets/**)"]}})
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "token.txt").write_text("hush")
    inner = workspace / "service"
    inner.mkdir()
    server.add(tool("read", path="../secrets/token.txt"), text("no"))

    run = Caretz(server, inner)("-p", "read the token")

    assert run.code == 0, run.stderr
    (result,) = tool_results(server.requests[1])
    assert result["is_error"] is True and "hush" not in result["content"]
    assert "Read(./secrets/**) (.caretz/settings.json)" in result["content"]
