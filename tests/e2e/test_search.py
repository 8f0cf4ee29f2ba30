"""grep and glob end to end: the real CLI, the loopback model server scripting the calls a
model makes, real ripgrep on real trees (generated in tmp dirs), real bubblewrap.

The workspace and HOME live under /var/tmp, visible to the sandbox (its /tmp is private).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Caretz, Run
from tests.modelserver import calls, text


@pytest.fixture
def scratch() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="caretz-e2e-search-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def workspace(scratch: Path) -> Path:
    """A git project with a gitignored venv of 300 files that all import json."""
    folder = scratch / "project"
    (folder / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    (folder / ".gitignore").write_text("venv/\n")
    site = folder / "venv" / "lib" / "site-packages"
    for package in range(10):
        (site / f"pkg{package}").mkdir(parents=True)
        for module in range(30):
            (site / f"pkg{package}" / f"m{module}.py").write_text("import json\n")
    (folder / "src" / "app.py").write_text("import json\n\nprint(json.dumps({}))\n")
    (folder / "src" / "util.py").write_text("import os\n")
    return folder


def tool_outputs(caretz: Caretz, run: Run, data_dir: Path | None = None) -> list[str]:
    assert run.code == 0, run.stderr
    if data_dir is None:
        events = caretz.events(run.session_id)
    else:
        path = data_dir / "sessions" / run.session_id / "events.jsonl"
        events = [json.loads(line) for line in path.read_text().splitlines()]
    return [e["output"] for e in events if e["type"] == "Tool.Result"]


def searched(caretz: Caretz, *attempts: tuple[str, dict[str, Any]], **env: str) -> list[str]:
    caretz.server.add(calls(*attempts), text("done"))
    run = caretz("-p", "search the project", env=env or None)
    data_dir = Path(env["CARETZ_DATA_DIR"]) if "CARETZ_DATA_DIR" in env else None
    return tool_outputs(caretz, run, data_dir)


def test_a_gitignored_venv_is_never_in_grep_or_glob_results(caretz, workspace):
    content, files, counts, listed = searched(
        caretz,
        ("grep", {"pattern": "import json"}),
        ("grep", {"pattern": "import json", "output_mode": "files_with_matches"}),
        ("grep", {"pattern": "json", "output_mode": "count", "glob": "*.py"}),
        ("glob", {"pattern": "**/*.py"}),
    )
    assert content == "src/app.py:1:import json"
    assert files == "src/app.py"
    assert counts.splitlines() == ["src/app.py:2", "[1 files, 2 matching lines]"]
    assert sorted(listed.splitlines()) == ["src/app.py", "src/util.py"]


def test_include_ignored_reaches_the_venv_with_paging_and_totals(caretz, workspace):
    first, second = searched(
        caretz,
        ("grep", {"pattern": "import json", "include_ignored": True, "head_limit": 40}),
        (
            "grep",
            {"pattern": "import json", "include_ignored": True, "head_limit": 40, "offset": 40},
        ),
    )
    assert first.splitlines()[-1] == "[40 of 301 matching lines; offset=40 for more]"
    assert len(first.splitlines()) == 41
    assert second.splitlines()[-1] == "[41-80 of 301 matching lines; offset=80 for more]"
    assert set(first.splitlines()[:-1]).isdisjoint(second.splitlines()[:-1])


def test_grep_modes_and_glob_newest_first(caretz, workspace):
    (workspace / "src" / "notes.txt").write_text("one\ntwo\nneedle\nfour\n")
    os.utime(workspace / "src" / "app.py", (1_000_000, 1_000_000))
    os.utime(workspace / "src" / "util.py", (2_000_000, 2_000_000))
    context, newest = searched(
        caretz,
        ("grep", {"pattern": "needle", "-C": 1, "-i": True}),
        ("glob", {"pattern": "src/*.py"}),
    )
    assert context.splitlines() == [
        "src/notes.txt-2-two",
        "src/notes.txt:3:needle",
        "src/notes.txt-4-four",
        "[3 lines, 1 matching]",
    ]
    assert newest.splitlines() == ["src/util.py", "src/app.py"]


def test_a_fifo_in_the_tree_does_not_hang_grep_or_glob(caretz, workspace):
    os.mkfifo(workspace / "src" / "pipe")
    found, listed = searched(
        caretz, ("grep", {"pattern": "import os"}), ("glob", {"pattern": "src/*"})
    )
    assert found == "src/util.py:1:import os"
    assert "src/pipe" not in listed and "src/app.py" in listed


def test_hidden_paths_are_never_in_results(caretz, workspace, scratch):
    """caretz's own data dir inside the tree, and a credential store under HOME."""
    home = scratch / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY material\n")
    (home / "notes.txt").write_text("a PRIVATE KEY note\n")
    data_dir = workspace / "caretz-data"
    outputs = searched(
        caretz,
        ("grep", {"pattern": "search the project", "include_ignored": True}),
        ("glob", {"pattern": "**/*.jsonl", "include_ignored": True}),
        ("grep", {"pattern": "PRIVATE KEY", "path": str(home), "include_ignored": True}),
        ("glob", {"pattern": "**/*", "path": str(home), "include_ignored": True}),
        HOME=str(home),
        CARETZ_DATA_DIR=str(data_dir),
    )
    session_log, logs, keys, listed = outputs
    assert (data_dir / "sessions").is_dir()  # the log was there to be found
    assert session_log.startswith("No matches") and logs.startswith("No files match")
    assert keys == f"{home}/notes.txt:1:a PRIVATE KEY note"
    assert listed == f"{home}/notes.txt" and ".ssh" not in listed
