"""Permission rules for multi_edit: it changes files as edit does."""

from __future__ import annotations

from pathlib import Path

from tests.tools.test_permission import Session


def test_edit_rules_cover_multi_edit(tmp_path: Path):
    """multi_edit changes files as edit does: Edit(path) rules hold for it too."""
    (tmp_path / "secret.txt").write_text("keep\n")
    session = Session(tmp_path, mode="yolo", rules={"deny": ["Edit(secret.txt)"]})
    session.run("read", path="secret.txt")

    edits = [{"old_string": "keep", "new_string": "lost"}]
    result = session.run("multi_edit", path="secret.txt", edits=edits)

    assert not result.ok and "Edit(secret.txt)" in result.output
    assert (tmp_path / "secret.txt").read_text() == "keep\n"
