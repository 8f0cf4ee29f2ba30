"""`@path` mentions on a real session: what completion offers (the search tools' listing:
ignore rules, hidden files and the sandbox's hidden paths left out) and what a mention
attaches, through the read tool's path checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from caretz.app.mentions import FILE_MAX_BYTES, ProjectFiles
from tests.app.conftest import write_profiles
from tests.e2e.sandbox_folders import require


@pytest.fixture
def project(workspace: Path, config: Path) -> Path:
    for name, content in {
        "src/app.py": "print('app')\n",
        "src/util.py": "x = 1\n",
        "docs/a.md": "# a\n",
        "docs/deep/b.md": "# b\n",
        "ignored.log": "noise\n",
        ".hidden.txt": "dot\n",
        "shot.png": "not really a png\n",
        "private/key.txt": "SECRET-0123\n",
    }.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(content)
    (workspace / ".ignore").write_text("ignored.log\n")
    write_profiles(config, {"general": {"sandbox": {"hidden": [str(workspace / "private")]}}})
    return workspace


def test_completion_offers_the_files_and_folders_the_search_tools_see(open_session, project):
    require("bwrap")
    session = open_session()
    files = ProjectFiles(lambda: session.agent.parts.tool_ctx)

    assert files.entries() == [
        "docs/", "docs/a.md", "docs/deep/", "docs/deep/b.md", "src/", "src/app.py", "src/util.py"
    ]  # fmt: skip
    assert files.matching("sr") == ["src/", "src/app.py", "src/util.py"]
    assert files.matching("util")[0] == "src/util.py"  # by its name too
    assert files.matching("deep/b") == ["docs/deep/b.md"]  # anywhere in the path
    assert files.matching("priv") == [] and files.matching(".hid") == []


def test_a_file_and_a_folder_are_attached_and_a_hidden_path_is_refused_unread(
    open_session, project
):
    require("bwrap")
    session = open_session()

    attached = session.attach("compare @src/app.py with @docs, not @private/key.txt or @nobody.")

    assert [item.summary for item in attached.attached] == [
        "src/app.py (13 B)",
        "docs/ (2 entries)",
    ]
    assert attached.prompt.startswith("compare @src/app.py with @docs, not @private/key.txt")
    assert "<file path=\"src/app.py\">\nprint('app')\n</file>" in attached.prompt
    assert '<folder path="docs/">\na.md\ndeep/\n</folder>' in attached.prompt
    [refused] = attached.refused
    assert refused.startswith("@private/key.txt was not attached: cannot read private/key.txt")
    assert "SECRET" not in attached.prompt


def test_a_large_file_is_cut_and_a_denied_one_refused(open_session, project, config):
    (project / "big.txt").write_text("y" * (FILE_MAX_BYTES + 10))
    (project / ".caretz").mkdir()
    (project / ".caretz" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(src/util.py)"]}})
    )
    session = open_session()

    attached = session.attach("@big.txt @src/util.py @shot.png")

    assert [item.shown for item in attached.attached] == ["big.txt"]  # the image is left alone
    assert "[… cut: the first 64.0 KB of 64.0 KB; the read tool reads the rest]" in attached.prompt
    assert attached.refused[0].startswith("@src/util.py was not attached: ")
    assert "x = 1" not in attached.prompt
