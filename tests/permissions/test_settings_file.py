"""The project's `.caretz/settings.json`, read and written through the door: no symlink
below the project's root, a regular file with one link (caretz/sandbox/door.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from caretz.permissions.project import RuleError, read_project_settings
from caretz.permissions.proposals import save_allow_rules


def test_a_rule_is_never_saved_through_a_link_out_of_the_project(tmp_path: Path):
    """`.caretz` linked to another folder: the rule is refused with a reason, and the
    other folder's settings.json stays as it was."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (elsewhere / "settings.json").write_text('{"permissions": {"deny": ["Bash"]}}\n')
    (project / ".caretz").symlink_to(elsewhere)

    with pytest.raises((OSError, RuleError), match="is a symlink"):
        save_allow_rules(project, ["Bash(make)"])

    assert (elsewhere / "settings.json").read_text() == '{"permissions": {"deny": ["Bash"]}}\n'
    assert sorted(path.name for path in elsewhere.iterdir()) == ["settings.json"]


@pytest.mark.parametrize("form", ["link", "hard link", "fifo", "file for the folder"])
def test_settings_the_door_refuses_are_a_rule_error_naming_the_file(tmp_path: Path, form):
    """Read as "no settings" they would drop the project's deny rules: an error instead."""
    (tmp_path / "elsewhere.json").write_text('{"permissions": {"deny": ["Bash"]}}')
    settings = tmp_path / ".caretz" / "settings.json"
    if form == "file for the folder":
        (tmp_path / ".caretz").write_text("{}")
    else:
        settings.parent.mkdir()
    if form == "link":
        settings.symlink_to(tmp_path / "elsewhere.json")
    elif form == "hard link":
        os.link(tmp_path / "elsewhere.json", settings)
    elif form == "fifo":
        os.mkfifo(settings)

    with pytest.raises(RuleError) as refused:
        read_project_settings(tmp_path)

    line = str(refused.value)
    assert line.startswith(f"{settings}: cannot be read (") and "\n" not in line
    why = {"link": "is a symlink", "hard link": "has 2 hard links", "fifo": "is a FIFO"}
    assert why.get(form, "is a file, not a folder") in line
