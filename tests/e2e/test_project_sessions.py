"""Sessions belong to the folder (the project) they ran in: `--continue`, `caretz rewind`
and `caretz sessions list` take this folder's latest; another folder's session is used only
when named by its ID, and then says so. The real CLI, real git, the loopback model server."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.checkpoints.helpers import require_git
from tests.e2e.conftest import Caretz
from tests.e2e.terminal import wrapped
from tests.modelserver import ModelServer, text, tool


@pytest.fixture(autouse=True)
def git_binary() -> str:
    return require_git()


@pytest.fixture
def other(server: ModelServer, tmp_path: Path) -> Caretz:
    """caretz in a second project folder, with the same data folder."""
    folder = tmp_path / "other-project"
    folder.mkdir()
    return Caretz(server, folder)


def write_turn(caretz: Caretz, server: ModelServer, name: str) -> str:
    server.add(tool("write", path=name, content=f"{name} by caretz\n"), text(f"Wrote {name}."))
    run = caretz("-p", f"write {name}")
    assert run.code == 0, run.stderr
    return run.session_id


def test_continue_carries_on_this_folders_latest_session_not_another_folders(
    caretz: Caretz, other: Caretz, server: ModelServer
):
    here = write_turn(caretz, server, "here.txt")
    write_turn(other, server, "there.txt")  # written last, in the other folder
    server.add(text("Carrying on here."))

    carried = caretz("--continue", "-p", "and now?")

    assert carried.code == 0, carried.stderr
    assert carried.session_id == here
    prompts = [m["content"] for m in server.requests[-1].messages if m["role"] == "user"]
    assert prompts[0] == "write here.txt" and "write there.txt" not in prompts
    assert "another folder" not in carried.stderr


def test_continue_in_a_folder_without_sessions_is_one_line_naming_the_folder(
    caretz: Caretz, other: Caretz, server: ModelServer
):
    write_turn(other, server, "there.txt")

    run = caretz("--continue", "-p", "and now?")

    assert run.code == 2
    assert run.stderr.splitlines() == [
        f"caretz: no session of this folder ({caretz.workspace}) yet; `caretz sessions list "
        "--all` lists every folder's, and --resume ID opens one of them"
    ]


def test_resuming_another_folders_session_by_id_says_so(
    caretz: Caretz, other: Caretz, server: ModelServer
):
    there = write_turn(other, server, "there.txt")
    server.add(text("Resumed."))

    run = caretz("--resume", there, "-p", "go on")

    assert run.code == 0, run.stderr
    assert (
        f"resuming session {there}, named by its ID, of another folder: {other.workspace}"
        in run.stderr
    )


def test_rewind_without_an_id_rewinds_this_folder_and_names_it(
    caretz: Caretz, other: Caretz, server: ModelServer
):
    write_turn(caretz, server, "here.txt")
    write_turn(other, server, "there.txt")  # the latest session of all

    rewound = caretz("rewind", "--turn", "1")

    assert rewound.code == 0, rewound.stderr
    assert f"restored 1 file to before turn 1, in {caretz.workspace}" in rewound.stdout
    assert not (caretz.workspace / "here.txt").exists()
    assert (other.workspace / "there.txt").read_text() == "there.txt by caretz\n"
    assert "another folder" not in rewound.stderr


def test_rewinding_another_folders_session_needs_its_id_and_says_so(
    caretz: Caretz, other: Caretz, server: ModelServer
):
    there = write_turn(other, server, "there.txt")

    refused = caretz("rewind", "--turn", "1")
    assert refused.code == 2 and "no session of this folder" in refused.stderr
    assert (other.workspace / "there.txt").exists()  # untouched until named

    rewound = caretz("rewind", there, "--turn", "1")

    assert rewound.code == 0, rewound.stderr
    assert rewound.stderr == f"caretz: session {there} is of another folder: {other.workspace}\n"
    assert f"restored 1 file to before turn 1, in {other.workspace}" in rewound.stdout
    assert not (other.workspace / "there.txt").exists()


def test_sessions_list_shows_this_folder_by_default_all_with_all_and_limit_cuts(
    caretz: Caretz, other: Caretz, server: ModelServer
):
    first = write_turn(caretz, server, "one.txt")
    server.add(text("Two."))
    assert caretz("--continue", "-p", "and two?").code == 0
    second = write_turn(caretz, server, "three.txt")
    there = write_turn(other, server, "there.txt")

    mine = caretz("sessions", "list").stdout.splitlines()
    every = caretz("sessions", "list", "--all").stdout
    last = caretz("sessions", "list", "--limit", "1").stdout.splitlines()
    none_there = Caretz(server, caretz.workspace.parent)("sessions", "list").stdout

    assert [line.split()[0] for line in mine] == [first, second]
    # ID, age, folder, model, turns, how it ended, its title: its first prompt
    assert re.fullmatch(
        rf"{first}  \d+s ago  {caretz.workspace}  anthropic/claude-test  2 turn\(s\)  done  "
        r"write one\.txt",
        mine[0],
    ), mine[0]
    assert all(session in every for session in (first, second, there))
    assert [line.split()[0] for line in last] == [second]
    assert none_there.startswith("no sessions yet in ")


def test_sessions_show_takes_any_unique_part_of_an_id(caretz: Caretz, server: ModelServer):
    first = write_turn(caretz, server, "a.txt")
    second = write_turn(caretz, server, "b.txt")
    unique = next(
        part
        for part in (first[-4:], first[-6:], first)
        if part not in second  # the IDs end in random hex; take a part only `first` has
    )

    shown = caretz("sessions", "show", unique)
    shared = caretz("sessions", "show", first[:8])  # the date: part of both IDs

    assert shown.code == 0, shown.stderr
    assert f"Session.Started {first}" in shown.stdout
    assert shared.code == 2
    assert shared.stderr.startswith(f"caretz: {first[:8]!r} is part of 2 session IDs (")
    assert shared.stderr.rstrip().endswith("give more of it")


def test_the_interactive_sessions_and_resume_take_this_folders_and_name_another(
    caretz: Caretz, other: Caretz, server: ModelServer, terminal
):
    here = write_turn(caretz, server, "here.txt")
    there = write_turn(other, server, "there.txt")  # the latest session of all
    term = terminal()

    term.type("/sessions")
    term.expect("reopen one with /resume ID")
    listed = term.transcript[-1]
    assert here in listed and there not in listed

    term.type("/resume")
    term.expect(rf"resumed session {here}: 1 turn\(s\) so far")
    assert "another folder" not in term.transcript[-1]

    term.type(f"/resume {there}")
    term.expect(wrapped(f"resuming session {there}, named by its ID, of another folder:"))
    term.expect(wrapped(str(other.workspace)))
    term.expect(rf"resumed session {there}")
    assert term.ctrl_d() == there


def test_continue_and_resume_carry_on_with_the_sessions_model_unless_one_is_named(
    caretz: Caretz, server: ModelServer
):
    server.add(text("first"), model="picked-model")
    first = caretz("-p", "hi", "--model", "anthropic/picked-model")
    assert first.code == 0, first.stderr
    server.add(text("again"), model="picked-model")
    server.add(text("by id"), model="picked-model")
    server.add(text("named"), model="named-model")

    no_default = {"CARETZ_MODEL": None}  # the fixture's model would be the run's choice
    continued = caretz("-p", "and now?", "-c", env=no_default)
    resumed = caretz("-p", "and then?", "--resume", first.session_id, env=no_default)
    named = caretz("-p", "last", "-c", "-m", "anthropic/named-model", env=no_default)

    assert (continued.code, resumed.code, named.code) == (0, 0, 0), named.stderr
    assert [request.model for request in server.requests] == [
        "picked-model",
        "picked-model",
        "picked-model",
        "named-model",
    ]
    assert continued.session_id == resumed.session_id == first.session_id


def test_resume_without_an_id_picks_a_session_in_a_terminal(
    screen, caretz: Caretz, server: ModelServer
):
    older = write_turn(caretz, server, "one.txt")
    write_turn(caretz, server, "two.txt")
    server.add(text("Carried on."))

    term = screen("-r")
    term.wait_for_screen("Resume which session?")
    assert term.text.index("write two.txt") < term.text.index("write one.txt")  # newest first
    term.child.send("\x1b[B")  # ↓ to the older one
    term.child.send("\r")
    term.type("and now?")
    term.expect("Carried on.")
    assert term.ctrl_d() == older
    assert [m["content"] for m in server.requests[-1].messages if m["role"] == "user"][0] == (
        "write one.txt"
    )


def test_resume_without_an_id_and_no_terminal_says_to_give_one(caretz: Caretz, server):
    run = caretz("-p", "hi", "-r")

    assert run.code == 2
    assert run.stderr.splitlines() == [
        "caretz: -r without an ID picks a session in a terminal; here, give its ID (caretz "
        "sessions list) or use -c for this folder's latest"
    ]
    assert server.requests == []
