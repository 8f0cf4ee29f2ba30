"""Which bwrap, git and interpreter caretz runs: never one a sandboxed command could plant."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from caretz.trusted import (
    find_program,
    installation_inside,
    launcher_python,
    resolve_programs,
    trusted_path,
    untrusted_roots,
)


def program(folder: Path, name: str = "tool") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_an_entry_inside_the_project_is_skipped_for_the_next_safe_one(tmp_path):
    project = tmp_path / "project"
    planted = program(project / ".venv" / "bin")
    real = program(tmp_path / "usr-bin")
    path = os.pathsep.join([str(planted.parent), str(real.parent)])

    found = find_program("tool", path, untrusted_roots([project]))

    assert found.path == str(real)
    assert found.notice() == (
        f"tool on PATH is {planted}, inside the writable project {project.resolve()}; "
        f"caretz skips it and runs {real}"
    )


def test_with_no_safe_entry_nothing_is_run_and_the_line_says_why(tmp_path):
    project = tmp_path / "project"
    planted = program(project / "bin")
    found = find_program("tool", str(planted.parent), untrusted_roots([project]))
    assert found.path is None
    assert found.notice() == (
        f"tool on PATH is {planted}, inside the writable project {project.resolve()}; caretz "
        "does not run it (put a tool outside the project earlier on PATH)"
    )
    assert find_program("missing", str(planted.parent), ()).notice() is None


def test_a_symlink_into_the_project_counts_where_it_lands(tmp_path):
    project = tmp_path / "project"
    planted = program(project / "bin")
    outside = tmp_path / "bin"
    outside.mkdir()
    (outside / "tool").symlink_to(planted)
    found = find_program("tool", str(outside), untrusted_roots([project]))
    assert found.path is None and "inside the writable project" in (found.notice() or "")


def test_relative_and_writable_by_others_and_foreign_entries_are_skipped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    program(tmp_path / "rel")
    shared = program(tmp_path / "shared")
    shared.parent.chmod(0o777)
    loose = program(tmp_path / "loose")
    loose.chmod(0o757)
    found = find_program(
        "tool", os.pathsep.join(["rel", str(shared.parent), str(loose.parent)]), ()
    )
    reasons = [why for _, why in found.skipped]
    assert found.path is None
    assert reasons[0].startswith("in a relative PATH entry")
    assert reasons[1] == f"{shared.parent} is writable by other users (mode 777)"
    assert reasons[2] == f"{loose} is writable by other users (mode 757)"
    mine = program(tmp_path / "mine")
    other_user = os.getuid() + 4242
    if os.stat(mine).st_uid != 0:  # root-owned files are trusted for everyone
        found = find_program("tool", str(mine.parent), (), uid=other_user)
        assert found.path is None and "owned by another user" in found.skipped[0][1]


def test_the_launcher_runs_on_the_real_interpreter_behind_a_venv(tmp_path):
    chosen = launcher_python(os.environ.get("PATH", ""), untrusted_roots([tmp_path]))
    assert chosen.path == os.path.realpath(sys.executable)
    assert not chosen.skipped


def test_caretz_installed_inside_a_root_is_found(tmp_path):
    package = Path(__file__).resolve().parents[1] / "caretz"
    assert package in installation_inside([package.parent])
    assert installation_inside([tmp_path]) == []


def test_a_session_resolves_its_three_programs_once(tmp_path):
    programs = resolve_programs(os.environ["PATH"], [tmp_path])
    assert programs.git.path and programs.git.path.endswith("/git")
    assert programs.python.path == os.path.realpath(sys.executable)
    assert programs.notices() == []


def test_the_path_of_what_runs_outside_keeps_only_entries_no_command_can_write(tmp_path):
    project = tmp_path / "project"
    inside = program(project / "vendor" / "bin").parent
    linked = tmp_path / "link-to-vendor"
    linked.symlink_to(inside)
    shared = program(tmp_path / "shared").parent
    shared.chmod(0o777)
    kept = program(tmp_path / "usr-bin").parent
    entries = [str(inside), "bin", str(linked), str(shared), str(kept), str(tmp_path / "none")]

    path = trusted_path(os.pathsep.join([*entries, str(kept)]), untrusted_roots([project]))

    assert path == str(kept)
