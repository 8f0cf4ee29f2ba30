"""A project's hooks wait for the user's approval, through the real CLI: `caretz -p`, the
interactive session, `caretz hooks list` and `caretz hooks approve`, real hook scripts
that leave a marker file when they run."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.hook_scripts import hooks_entry, project_settings, write_hook
from tests.modelserver import text

NOT_APPROVED = (
    "hooks: .caretz/settings.json has hooks; they do not run until you approve them: "
    "caretz hooks approve"
)


def marker_hook(project: Path, name: str) -> str:
    """A hook script that appends its event's name to `<name>.ran` in the project."""
    body = f"""
import json, os, sys
event = json.load(sys.stdin)
with open(os.path.join(os.environ["CARETZ_PROJECT_DIR"], "{name}.ran"), "a") as out:
    out.write(event["hook_event_name"] + "\\n")
"""
    return write_hook(project, name, body)


def ran(project: Path, name: str) -> list[str]:
    path = project / f"{name}.ran"
    return path.read_text().split() if path.exists() else []


def session_start(command: str) -> dict:
    return {"SessionStart": [hooks_entry(command)]}


def test_an_unapproved_project_hook_does_not_run_and_the_session_says_so_once(
    caretz, server, workspace
):
    command = marker_hook(workspace, "project")
    project_settings(workspace, {"hooks": session_start(command)}, approve=False)
    server.add(text("Hello."))

    run = caretz("-p", "hello")

    assert run.code == 0, run.stderr
    assert ran(workspace, "project") == []
    assert not (workspace / "project.ran").exists()
    assert run.stderr.count(NOT_APPROVED) == 1
    assert "Hello." in run.stdout  # the session goes on
    events = caretz.events(run.session_id)
    waiting = [e for e in events if e["type"] == "Hook.NotApproved"]
    assert [e["text"] for e in waiting] == [NOT_APPROVED]
    assert not [e for e in events if e["type"] == "Hook.Ran"]


def test_after_caretz_hooks_approve_the_hook_runs_and_a_change_makes_it_wait_again(
    caretz, server, workspace
):
    command = marker_hook(workspace, "project")
    project_settings(workspace, {"hooks": session_start(command)}, approve=False)

    approved = caretz("hooks", "approve")

    assert approved.code == 0, approved.stderr
    assert f"approved SessionStart `{command}`" in approved.stdout
    server.add(text("Hello."))
    run = caretz("-p", "hello")
    assert run.code == 0, run.stderr
    assert ran(workspace, "project") == ["SessionStart"]
    assert NOT_APPROVED not in run.stderr

    changed = session_start(command)
    changed["SessionStart"].append(hooks_entry(command + " --again"))
    project_settings(workspace, {"hooks": changed}, approve=False)
    server.add(text("Hello again."))
    again = caretz("-p", "hello")

    assert again.code == 0, again.stderr
    assert ran(workspace, "project") == ["SessionStart"]  # not run a second time
    assert again.stderr.count(NOT_APPROVED) == 1


def test_the_same_section_reformatted_stays_approved(caretz, server, workspace):
    command = marker_hook(workspace, "project")
    project_settings(workspace, {"hooks": session_start(command)}, approve=False)
    assert caretz("hooks", "approve").code == 0
    settings = workspace / ".caretz" / "settings.json"
    settings.write_text(json.dumps(json.loads(settings.read_text()), indent=4))
    server.add(text("Hello."))

    run = caretz("-p", "hello")

    assert run.code == 0, run.stderr
    assert ran(workspace, "project") == ["SessionStart"]


def test_profile_hooks_run_without_approval_beside_a_waiting_project_hook(
    caretz, server, workspace
):
    profile = marker_hook(workspace, "profile")
    project = marker_hook(workspace, "project")
    caretz.write_config({"profiles": {"general": {"hooks": session_start(profile)}}})
    project_settings(workspace, {"hooks": session_start(project)}, approve=False)
    server.add(text("Hello."))

    run = caretz("-p", "hello")

    assert run.code == 0, run.stderr
    assert ran(workspace, "profile") == ["SessionStart"]
    assert ran(workspace, "project") == []
    assert run.stderr.count(NOT_APPROVED) == 1


def test_caretz_hooks_list_shows_each_files_hooks_and_the_projects_approval(caretz, workspace):
    profile = marker_hook(workspace, "profile")
    project = marker_hook(workspace, "project")
    config = caretz.write_config({"profiles": {"general": {"hooks": session_start(profile)}}})
    hooks = {"PreToolUse": [hooks_entry(project, "Bash")]}
    project_settings(workspace, {"hooks": hooks}, approve=False)

    before = caretz("hooks", "list")
    assert caretz("hooks", "approve").code == 0
    after = caretz("hooks", "list", "--output", "json")

    assert before.code == 0, before.stderr
    assert before.stdout.splitlines() == [
        f"{config.name}: profiles.general.hooks",
        f"  SessionStart `{profile}`",
        ".caretz/settings.json: hooks (not approved: they do not run until you approve them "
        "with caretz hooks approve)",
        f"  PreToolUse [Bash] `{project}`",
    ]
    assert after.code == 0, after.stderr
    files = json.loads(after.stdout)["files"]
    assert [(file["source"], file["approved"]) for file in files] == [
        (f"{config.name}: profiles.general.hooks", True),
        (".caretz/settings.json: hooks", True),
    ]
    assert files[1]["hooks"] == [{"event": "PreToolUse", "matcher": "Bash", "command": project}]


def test_a_malformed_hooks_section_is_one_line_and_exit_2_for_list_and_approve(caretz, workspace):
    project_settings(workspace, {"hooks": {"PreToolUSe": [hooks_entry("true")]}}, approve=False)
    settings = workspace / ".caretz" / "settings.json"
    line = f"caretz: {settings}: hooks.PreToolUSe: unknown key (did you mean 'PreToolUse'?)"

    for action in ("list", "approve"):
        run = caretz("hooks", action)
        assert run.code == 2
        assert run.stderr.strip() == line
    assert not (caretz.data_dir / "hook-approvals.json").exists()


def test_approve_without_project_hooks_is_one_line_and_exit_2(caretz, workspace):
    run = caretz("hooks", "approve")

    assert run.code == 2
    assert run.stderr.strip() == (
        f"caretz: {workspace / '.caretz' / 'settings.json'}: no hooks to approve"
    )


def test_the_interactive_session_says_once_that_the_project_hooks_wait_and_hooks_lists_them(
    terminal, caretz, server, workspace
):
    command = marker_hook(workspace, "project")
    project_settings(workspace, {"hooks": session_start(command)}, approve=False)
    server.add(text("Hello."))
    term = terminal()

    term.expect(r"trust this project's configuration\? \(y/N\)")
    term.child.send("n\r")  # the whole not approved: the hooks wait, as below
    term.expect("caretz hooks approve")
    term.type("hello")
    term.expect("Hello.")
    shown = "".join(term.transcript)
    term.type("/hooks")
    term.expect(r"\.caretz/settings\.json: hooks \(not approved")
    term.expect(r"SessionStart `python3")
    term.expect("then start caretz again")
    term.ctrl_d()

    assert shown.count("caretz hooks approve") == 1
    assert ran(workspace, "project") == []
