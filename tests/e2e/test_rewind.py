"""Checkpoints and `caretz rewind` end to end: the real CLI, real git, scripted turns.

A scripted turn creates, edits, deletes and renames files through the file tools and
through bash; `caretz rewind` must put every file back byte for byte, leave ignored
files alone, and leave the project's own repository (index, HEAD, stash, status)
exactly as it was.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.checkpoints.helpers import (
    make_repo_with_work_in_progress,
    project_git_state,
    require_git,
    tree_state,
    write,
)
from tests.e2e.conftest import Caretz, types
from tests.modelserver import ModelServer, text, tool

BASH_CHANGES = (
    "rm README.md && mv src/lib.py src/library.py && printf 'made by bash\\n' > bash.txt"
    " && chmod -x tool.sh && rm link && echo more >> debug.log && echo new > build/new.bin"
)
IGNORED = ("debug.log", "build/out.bin", "build/new.bin")


@pytest.fixture(autouse=True)
def git_binary() -> str:
    return require_git()


def fill(project: Path) -> None:
    write(project, ".gitignore", "*.log\nbuild/\n")
    write(project, "README.md", "# the project\n")
    write(project, "src/main.py", "print('main')\n")
    write(project, "src/lib.py", "X = 1\n")
    write(project, "tool.sh", "#!/bin/sh\necho tool\n", executable=True)
    os.symlink("src/main.py", project / "link")
    write(project, "debug.log", "ignored log\n")
    write(project, "build/out.bin", "ignored build output\n")


@pytest.fixture(params=["repo", "plain"])
def project(request, workspace: Path) -> Path:
    fill(workspace)
    if request.param == "repo":
        make_repo_with_work_in_progress(workspace)
    return workspace


def script_changing_turn(server: ModelServer, project: Path) -> None:
    main = (project / "src/main.py").read_text()
    server.add(
        tool("write", path="src/new.py", content="NEW = True\n"),
        tool("read", path="src/main.py"),  # read before the edit
        tool("edit", path="src/main.py", old_string=main, new_string="print('edited')\n"),
        tool("bash", command=BASH_CHANGES),
        text("Done: a new module, an edit, and some shell work."),
    )


def without_ignored(state: dict) -> dict:
    return {path: entry for path, entry in state.items() if path not in (*IGNORED, "build")}


def git_state_or_none(project: Path):
    return project_git_state(project) if (project / ".git").is_dir() else None


def undo_command(stdout: str) -> list[str]:
    match = re.search(r"undo this rewind: caretz (rewind .+)", stdout)
    assert match, stdout
    return match.group(1).split()


def test_a_turn_is_rewound_byte_for_byte_and_the_rewind_can_be_undone(
    caretz: Caretz, server: ModelServer, project: Path
):
    before, git_before = tree_state(project), git_state_or_none(project)
    script_changing_turn(server, project)

    run = caretz("-p", "reshape the project")

    assert run.code == 0, run.stderr
    after_turn = tree_state(project)
    assert "bash.txt" in after_turn and "README.md" not in after_turn
    assert after_turn["src/main.py"][1] == b"print('edited')\n"
    created = [e for e in caretz.events(run.session_id) if e["type"] == "Checkpoint.Created"]
    assert [(e["kind"], e["turn"]) for e in created] == [("turn", 1)]  # one, before the write

    rewound = caretz("rewind", "--turn", "1")

    assert rewound.code == 0, rewound.stderr
    assert "restored 8 files to before turn 1" in rewound.stdout
    now = tree_state(project)
    assert without_ignored(now) == without_ignored(before)
    for path in IGNORED:  # ignored files stay as the turn left them
        assert now.get(path) == after_turn.get(path)
    assert git_state_or_none(project) == git_before

    undone = caretz(*undo_command(rewound.stdout))

    assert undone.code == 0, undone.stderr
    assert tree_state(project) == after_turn
    if git_before is not None:  # the repository itself (not its status) is untouched
        digest, index, _status, head, stash = project_git_state(project)
        assert (digest, index, head, stash) == (*git_before[:2], *git_before[3:])
    shown = caretz("sessions", "show", run.session_id).stdout
    assert re.search(r"\[checkpoint \w{12}\] before turn 1's first change", shown)
    rewinds = re.findall(r"\[rewound files and conversation to checkpoint \w{12}.*", shown)
    assert len(rewinds) == 2 and "; undo: caretz rewind" in rewinds[0]


def test_files_changed_outside_caretz_need_force(caretz: Caretz, server: ModelServer, workspace):
    write(workspace, "app.py", "v1\n")
    server.add(
        tool("read", path="app.py"),
        tool("write", path="app.py", content="v2 by caretz\n"),
        text("Updated."),
    )
    run = caretz("-p", "update the app")
    assert run.code == 0, run.stderr
    write(workspace, "app.py", "v3 by the user\n")  # after the turn, outside caretz

    refused = caretz("rewind", run.session_id, "--turn", "1")

    assert refused.code == 2
    lines = refused.stderr.splitlines()
    assert lines[0].startswith("caretz: 1 file(s) changed outside caretz since the checkpoint")
    assert "--force" in lines[0]
    assert lines[1] == "  app.py: changed outside caretz since the checkpoint"
    assert (workspace / "app.py").read_text() == "v3 by the user\n"

    forced = caretz("rewind", run.session_id, "--turn", "1", "--force")

    assert forced.code == 0, forced.stderr
    assert (workspace / "app.py").read_text() == "v1\n"


def test_an_unknown_turn_or_session_is_one_line_and_exit_2(caretz, server, workspace):
    server.add(tool("write", path="a.txt", content="a\n"), text("Wrote it."))
    run = caretz("-p", "write a")

    unknown_turn = caretz("rewind", "--turn", "7")
    unknown_session = caretz("rewind", "no-such-session", "--turn", "1")

    assert unknown_turn.code == 2 and unknown_session.code == 2
    assert unknown_turn.stderr == (
        f"caretz: no checkpoint for turn 7 of session {run.session_id} (turns with one: 1)\n"
    )
    assert unknown_session.stderr.startswith("caretz: no session 'no-such-session'")
    assert len(unknown_session.stderr.splitlines()) == 1
    assert (workspace / "a.txt").exists()


def test_a_conversation_rewind_is_where_continue_carries_on(caretz, server, workspace):
    server.add(tool("write", path="one.txt", content="1\n"), text("Wrote one."))
    first = caretz("-p", "write one")
    server.add(tool("write", path="two.txt", content="2\n"), text("Wrote two."))
    second = caretz("--continue", "-p", "write two")
    assert first.session_id == second.session_id
    listing = caretz("rewind").stdout  # the resumed session keeps its first checkpoint
    assert re.search(r"2\s+2\s+.*write two\n\s+1\s+1\s+.*write one\n", listing), listing

    rewound = caretz("rewind", "--turn", "2", "--conversation-only")

    assert rewound.code == 0, rewound.stderr
    assert "the conversation is back to before turn 2" in rewound.stdout
    assert (workspace / "two.txt").exists()  # the files were left alone
    server.add(text("Carrying on."))
    carried = caretz("--continue", "-p", "what now?")
    assert carried.code == 0, carried.stderr
    sent = server.requests[-1].messages
    prompts = [m["content"] for m in sent if m["role"] == "user" and isinstance(m["content"], str)]
    assert prompts == ["write one", "what now?"]
    events = caretz.events(first.session_id)
    turns = [e["turn"] for e in events if e["type"] == "Turn.Started"]
    assert turns == [1, 2, 3]  # a rewound turn's number is not used again


def test_subagents_share_their_parents_checkpoint_and_a_failed_turn_settles(
    caretz, server, workspace
):
    server.add(
        tool("task", agent="writer", prompt="Write sub.txt."),
        tool("write", path="sub.txt", content="from the subagent\n"),
        text("Wrote sub.txt."),
        tool("write", path="main.txt", content="from the main agent\n"),
    )  # then no reply is left: the turn ends in an error

    run = caretz("-p", "write two files")

    assert run.code == 1
    events = caretz.events(run.session_id)
    created = [e for e in events if e["type"] == "Checkpoint.Created"]
    assert [(e["kind"], e["turn"]) for e in created] == [("turn", 1)]
    listing = caretz("rewind").stdout
    assert re.search(r"1\s+1\s+\S+\s+2\s+\w{12}\s+write two files", listing), listing
    rewound = caretz("rewind", "--turn", "1", "--files-only")
    assert rewound.code == 0, rewound.stderr  # settled: nothing counts as changed by others
    assert not (workspace / "sub.txt").exists() and not (workspace / "main.txt").exists()


def test_without_git_the_session_goes_on_without_checkpoints(caretz, server, workspace, tmp_path):
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    server.add(tool("write", path="a.txt", content="a\n"), text("Wrote it."))

    run = caretz("-p", "write a", env={"PATH": str(empty)})

    assert run.code == 0, run.stderr
    assert run.stderr.count("git not found: checkpoints are off; install git") == 1
    assert (workspace / "a.txt").read_text() == "a\n"
    assert "Checkpoint.Created" not in types(caretz.events(run.session_id))


def test_checkpoints_can_be_switched_off_and_the_size_cap_set(caretz, server, workspace):
    write(workspace, "big.bin", "x" * 3000)
    caretz.write_config({"profiles": {"general": {"checkpoints": {"maxFileSize": "2KB"}}}})
    server.add(tool("write", path="a.txt", content="a\n"), text("Wrote it."))
    capped = caretz("-p", "write a")
    assert capped.code == 0, capped.stderr
    assert re.search(r"checkpoint \w{12} left out 1: big.bin \(0.0 MB\)", capped.stderr)

    caretz.write_config({"profiles": {"general": {"checkpoints": {"enabled": False}}}})
    server.add(tool("write", path="b.txt", content="b\n"), text("Wrote it."))
    off = caretz("-p", "write b")
    assert off.code == 0, off.stderr
    assert "Checkpoint.Created" not in types(caretz.events(off.session_id))


def test_a_loop_guard_stop_names_the_command_that_undoes_the_turn(caretz, server, workspace):
    from tests.e2e.test_loop_guard import GO_TEST, GO_TEST_SCRIPT, JUDGE, STUCK, verdict

    write(workspace, "gotest.sh", GO_TEST_SCRIPT, executable=True)
    before = tree_state(workspace)
    server.add(*[tool("bash", command=GO_TEST) for _ in range(6)])
    server.add(text("I changed nothing that worked; testDB is still undefined."))
    server.add(verdict(STUCK), verdict(STUCK), model=JUDGE)

    run = caretz(
        "-p",
        "make the integration tests pass",
        "--loop-guard",
        "active",
        "--loop-guard-model",
        f"anthropic/{JUDGE}",
    )

    assert run.code == 3, run.stderr
    lines = run.stderr.splitlines()
    notice = next(i for i, line in enumerate(lines) if "so the guard ended it" in line)
    undo = f"caretz rewind {run.session_id} --turn 1 --files-only"
    assert lines[notice + 1] == f"[loop-guard] undo this turn's changes: {undo}"
    assert (workspace / ".runs").read_text() == "6\n"  # what the stuck turn left behind

    rewound = caretz(*undo.split()[1:])

    assert rewound.code == 0, rewound.stderr
    assert tree_state(workspace) == before


def test_undo_right_after_a_rewind_puts_back_exactly_the_files_and_turns_before_it(
    caretz, server, workspace
):
    write(workspace, "kept.txt", "v1\n")
    server.add(
        tool("read", path="kept.txt"),  # an existing file is read before it is changed
        tool("write", path="kept.txt", content="v2\n"),
        text("Changed kept."),
    )
    first = caretz("-p", "change kept")
    assert (workspace / "kept.txt").read_text() == "v2\n"
    for prompt in ("explain it", "and again", "once more"):  # turns that change no file
        server.add(text(f"Said: {prompt}."))
        assert caretz("--continue", "-p", prompt).code == 0
    server.add(tool("write", path="late.txt", content="late\n"), text("Wrote late."))
    assert caretz("--continue", "-p", "write late").code == 0
    rewound = caretz("rewind", "--turn", "1")
    assert rewound.code == 0, rewound.stderr
    assert not (workspace / "late.txt").exists()
    assert (workspace / "kept.txt").read_text() == "v1\n"

    undone = caretz("rewind", "--undo")

    assert undone.code == 0, undone.stderr
    assert "to the checkpoint taken before the rewind" in undone.stdout
    assert (workspace / "kept.txt").read_text() == "v2\n"
    assert (workspace / "late.txt").read_text() == "late\n"
    server.add(text("All five are here."))
    assert caretz("--continue", "-p", "what did I ask?").code == 0
    sent = server.requests[-1].messages
    prompts = [m["content"] for m in sent if m["role"] == "user" and isinstance(m["content"], str)]
    assert prompts == [
        "change kept",
        "explain it",
        "and again",
        "once more",
        "write late",
        "what did I ask?",
    ]
    restored = [e for e in caretz.events(first.session_id) if e["type"] == "Checkpoint.Restored"]
    assert [(e["scope"], e["to_turn"]) for e in restored] == [("both", 1), ("both", 5)]


def test_undo_without_a_rewind_to_undo_rewinds_the_newest_turn_that_changed_files(
    caretz, server, workspace
):
    server.add(tool("write", path="a.txt", content="a\n"), text("Wrote a."))
    caretz("-p", "write a")
    server.add(text("Nothing to change."))
    caretz("--continue", "-p", "just talk")

    undone = caretz("rewind", "--undo")
    refused = caretz("rewind", "--undo", "--files-only")

    assert undone.code == 0, undone.stderr
    assert "restored 1 file to before turn 1" in undone.stdout
    assert not (workspace / "a.txt").exists()
    assert refused.code == 2 and refused.stderr.count("\n") == 1
