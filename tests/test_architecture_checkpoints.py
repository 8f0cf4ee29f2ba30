"""A turn's end records only the files caretz's file tools named when they made every
change (agent/checkpointing.py), so every tool whose effect is "edit" must name in
`files_changed` each file it wrote. This runs each such built-in tool on real files; a new
one fails here until its case is added, with the files it writes named."""

from __future__ import annotations

import re
from pathlib import Path

from caretz.messages import ToolCall
from caretz.tools.base import ToolContext
from caretz.tools.registry import ToolRegistry, default_tools

# Each file tool's call on `doc.txt` (holding "one\ntwo\n"), by name.
CASES: dict[str, dict[str, object]] = {
    "write": {"content": "written\n"},
    "edit": {"old_string": "one", "new_string": "uno"},
    "multi_edit": {
        "edits": [
            {"old_string": "one", "new_string": "uno"},
            {"old_string": "two", "new_string": "dos"},
        ]
    },
}


def test_every_file_tool_names_each_file_it_wrote(tmp_path: Path):
    registry = ToolRegistry(default_tools(sandboxed=False))
    editors = {name for name in registry.names() if registry.effect_of(name) == "edit"}
    assert editors == set(CASES), "a new file tool: add its case, naming what it writes"

    for name, arguments in CASES.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / "doc.txt").write_text("one\ntwo\n")
        ctx = ToolContext(workspace=folder)
        assert registry.run(ToolCall(id="r", name="read", arguments={"path": "doc.txt"}), ctx).ok
        result = registry.run(
            ToolCall(id="c", name=name, arguments={"path": "doc.txt", **arguments}), ctx
        )

        assert result.ok, result.output
        assert (folder / "doc.txt").read_text() != "one\ntwo\n"
        assert result.files_changed == ["doc.txt"]


PACKAGE = Path(__file__).resolve().parents[1] / "caretz"


def _modules_mentioning(pattern: str) -> set[str]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        if re.search(pattern, path.read_text(encoding="utf-8")):
            found.add(path.relative_to(PACKAGE).as_posix())
    return found


def test_the_change_feed_only_narrows_the_one_scan():
    """The watches' events are a hint, never a record: inotify is used in watch.py alone,
    whose feed only the stager reads, and the stager's scan (scan.py) is the one place a
    snapshot learns what changed. A second reader of the events (one that recorded a
    snapshot from them, say) would have to come through here."""
    assert _modules_mentioning(r"inotify_") == {"checkpoints/watch.py"}
    assert _modules_mentioning(r"checkpoints\.watch\b|from \. import watch") == {
        "checkpoints/snapshot.py"
    }
    assert _modules_mentioning(r"checkpoints\.scan import|\bscan\(self\.git") == {
        "checkpoints/snapshot.py"
    }
