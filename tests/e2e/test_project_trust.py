"""A project's configuration is used only once the user approved it, whole, through the real
CLI against the loopback model server: `caretz -p` leaves out what is not approved (with one
line saying how to approve), `caretz trust` shows and approves it, a change to any part asks
again, a command file's shell lines wait for it, and the interactive session asks once."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Caretz
from tests.e2e.hook_scripts import hooks_entry, write_hook
from tests.modelserver import ModelServer, RecordedRequest, calls, text, tool
from tests.trusting import trust_project

NOTICE = "caretz trust"
MARKER = """
import os
open(os.path.join(os.environ["CARETZ_PROJECT_DIR"], "hook.ran"), "a").write("ran\\n")
"""


def write(project: Path, relative: str, data: Any) -> None:
    path = project / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


def results(request: RecordedRequest) -> list[str]:
    """The tool results the model was sent in the request's last message, as text."""
    blocks = [b for b in request.messages[-1]["content"] if b.get("type") == "tool_result"]
    return [b["content"] if isinstance(b["content"], str) else str(b["content"]) for b in blocks]


def notices(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if NOTICE in line]


def started(caretz: Caretz, run: Any) -> dict[str, Any]:
    [event] = [e for e in caretz.events(run.session_id) if e["type"] == "Session.Started"]
    return event


def test_project_allow_rules_are_left_out_of_a_headless_run_until_caretz_trust(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    permissions = {"allow": ["Bash(touch:*)", "Write(./notes/**)"], "deny": ["Bash(rm:*)"]}
    write(workspace, ".caretz/settings.json", {"permissions": permissions})
    (workspace / "keep.txt").write_text("precious")
    work = calls(
        ("bash", {"command": "touch made.txt"}),
        ("write", {"path": "notes/a.md", "content": "note"}),
        ("bash", {"command": "rm keep.txt"}),
    )
    server.add(work, text("Tried."))

    # ask mode: only an allow rule lets a call run, and nobody answers a -p run.
    before = caretz("-p", "work", "--permission-mode", "ask")

    assert before.code == 0, before.stderr
    [line] = notices(before.stderr)
    assert line == (
        "caretz: this project's configuration is not approved, so caretz leaves out its 2 "
        "allow rules: see what it does and approve it with: caretz trust"
    )
    assert not (workspace / "made.txt").exists() and not (workspace / "notes").exists()
    assert "deny rule Bash(rm:*)" in results(server.requests[1])[2]  # a deny rule always holds
    assert (workspace / "keep.txt").exists()
    record = started(caretz, before)["project_config"]
    assert record["approved"] is False and record["ignored"] == ["allow"]

    shown = caretz("trust", "--show")
    declined = caretz("trust", stdin="n\n")
    assert declined.code == 1 and declined.stdout.endswith("\nnot approved: caretz leaves it out\n")
    assert not (caretz.data_dir / "project-trust.json").exists()
    approved = caretz("trust", "--yes")

    assert shown.code == 0 and approved.code == 0, approved.stderr
    for out in (shown.stdout, approved.stdout):
        assert "  Bash(touch:*)\n  Write(./notes/**)\n" in out
        assert "Bash(rm:*)" not in out
    assert shown.stdout.endswith("not approved: caretz leaves it out (caretz trust approves it)\n")
    assert approved.stdout.endswith(
        "approved: caretz uses it in each session here until any of it changes\n"
    )
    server.add(work, text("Done."))
    after = caretz("-p", "work", "--permission-mode", "ask")

    assert after.code == 0, after.stderr
    assert notices(after.stderr) == []
    assert (workspace / "made.txt").exists() and (workspace / "notes" / "a.md").exists()
    assert (workspace / "keep.txt").exists()
    assert started(caretz, after)["project_config"]["approved"] is True


def test_a_change_to_any_part_asks_again_and_says_what_changed(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    hook = write_hook(workspace, "marker", MARKER)
    settings = {
        "permissions": {"allow": ["Bash(touch:*)"]},
        "hooks": {"SessionStart": [hooks_entry(hook)]},
    }
    write(workspace, ".caretz/settings.json", settings)
    write(workspace, ".mcp.json", {"mcpServers": {"db": {"command": "true", "disabled": True}}})
    write(workspace, ".claude/commands/stamp.md", "Stamp: !`echo one`")

    def settings_with(key: str, value: Any) -> None:
        settings[key] = value
        write(workspace, ".caretz/settings.json", settings)

    db = {"mcpServers": {"db": {"command": "false", "disabled": True}}}
    changes = {
        "/stamp": lambda: write(workspace, ".claude/commands/stamp.md", "Stamp: !`echo two`"),
        "its hooks": lambda: settings_with("hooks", {"Stop": [hooks_entry(hook)]}),
        "its 2 allow rules": lambda: settings_with(
            "permissions", {"allow": ["Bash(touch:*)", "Bash"]}
        ),
        "MCP server db": lambda: write(workspace, ".mcp.json", db),
    }
    assert caretz("trust", "--yes").code == 0

    for part, change in changes.items():
        change()
        shown = caretz("trust", "--show")
        assert shown.code == 0, shown.stderr
        assert f"Changed since you approved it: {part}\n" in shown.stdout, shown.stdout
        assert shown.stdout.endswith(
            "not approved: caretz leaves it out (caretz trust approves it)\n"
        )
        if part != "MCP server db":
            trust_project(workspace)
    server.add(tool("bash", command="touch made.txt"), text("Tried."))
    run = caretz("-p", "work", "--permission-mode", "ask")

    assert run.code == 0, run.stderr
    [line] = notices(run.stderr)
    assert line.startswith(
        "caretz: this project's configuration changed since you approved it (MCP server db), "
        "so caretz leaves out its 2 allow rules, its hooks, MCP server db and /stamp: "
    )
    assert not (workspace / "hook.ran").exists()  # the hooks of a changed project do not run
    assert not (workspace / "made.txt").exists()


def test_a_project_command_runs_its_shell_lines_only_as_approved(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    path = workspace / ".caretz" / "commands" / "stamp.md"
    write(workspace, ".caretz/commands/stamp.md", "Stamped: !`touch stamped.txt && echo yes`")

    refused = caretz("-p", "/stamp")

    assert refused.code == 2
    assert [line for line in refused.stderr.splitlines() if line.startswith("caretz: ")] == [
        "caretz: this project's configuration is not approved, so caretz leaves out /stamp: "
        "see what it does and approve it with: caretz trust",
        (
            f"caretz: {path}: /stamp runs shell lines, and this project's configuration is not "
            "approved as it is now (nothing was sent; see what it does and approve it with: "
            "caretz trust)"
        ),
    ]
    assert server.requests == [] and not (workspace / "stamped.txt").exists()

    shown = caretz("trust", "--yes")
    assert ".caretz/commands/stamp.md: /stamp runs shell lines before its prompt is sent\n" in (
        shown.stdout
    )
    assert "  !`touch stamped.txt && echo yes`\n" in shown.stdout
    server.add(text("Noted."))
    ran = caretz("-p", "/stamp", "--permission-mode", "yolo")

    assert ran.code == 0, ran.stderr
    assert (workspace / "stamped.txt").exists()
    assert "Stamped: yes" in json.dumps(server.requests[0].messages)

    (workspace / "stamped.txt").unlink()
    write(workspace, ".caretz/commands/stamp.md", "Stamped: !`touch stamped.txt && echo no`")
    again = caretz("-p", "/stamp", "--permission-mode", "yolo")
    assert again.code == 2 and "caretz trust" in again.stderr
    assert not (workspace / "stamped.txt").exists() and len(server.requests) == 1


def test_the_interactive_session_shows_the_configuration_and_asks_once(
    caretz: Caretz, server: ModelServer, workspace: Path, terminal
):
    hook = write_hook(workspace, "marker", MARKER)
    settings = {
        "permissions": {"allow": ["Bash(touch:*)"]},
        "hooks": {"SessionStart": [hooks_entry(hook)]},
    }
    write(workspace, ".caretz/settings.json", settings)
    server.add(tool("bash", command="touch made.txt"), text("Made it."))

    term = terminal("--permission-mode", "ask")
    term.expect(r"allow rules \(what they match runs without asking\):")
    term.expect(re.escape("Bash(touch:*)"))
    term.expect(re.escape(f"SessionStart `{hook}`"))
    term.expect(r"trust this project's configuration\? \(y/N\)")
    term.child.send("y\r")
    term.expect("approved:")
    term.type("make the file")
    term.expect("Made it.")
    term.ctrl_d()
    first = "".join(term.transcript)

    assert "caretz asks before it runs" not in first  # the project's rule allowed it
    assert (workspace / "made.txt").exists()
    assert (workspace / "hook.ran").read_text() == "ran\n"
    assert NOTICE not in first.split("approved:")[1]

    server.add(text("Again."))
    second = terminal()
    second.type("hello")
    second.expect("Again.")
    second.ctrl_d()
    assert "trust this project" not in "".join(second.transcript)
