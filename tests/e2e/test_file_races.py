"""Racing the file tools: a real process swaps a path between a decoy and a symlink while
the model's reads, writes and edits run, 300 attempts each, through the real CLI.

The symlinks lead to a canary standing for `~/.ssh/id_rsa` (hidden), to files outside the
writable roots, and to caretz's data dir. Whatever each call returns, nothing leaks: the
canary is in no request the model server got, no event and no output, and nothing is
written outside the roots. A path can only be checked and then opened; the tools open it
without following any symlink (caretz/sandbox/safe_open.py), so a swap between the check
and the open makes the call fail, never go elsewhere.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Caretz
from tests.modelserver import ModelServer, calls, text
from tests.sandbox.helpers import wait_for

CANARY = "-----BEGIN OPENSSH PRIVATE KEY----- canary-6f1d2e"
ATTEMPTS = 300
PER_REPLY = 100
SWAPPER = Path(__file__).with_name("swapper.py")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(CANARY + "\n")
    return home


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


@pytest.fixture
def swapping(tmp_path: Path) -> Iterator[Any]:
    """Start swappers (real processes); each is stopped and waited for at the end."""
    started: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(*args: str) -> None:
        n = len(started)
        ready, stop = tmp_path / f"swapper-{n}.ready", tmp_path / f"swapper-{n}.stop"
        process = subprocess.Popen([sys.executable, str(SWAPPER), str(ready), str(stop), *args])
        started.append((process, stop))
        assert wait_for(ready.exists), "the swapper never flipped"

    yield start
    for process, stop in started:
        stop.write_text("stop")
        assert process.wait(timeout=30) == 0


def race(caretz: Caretz, server: ModelServer, call: Any) -> None:
    """ATTEMPTS calls made by `call(i)` (one or more (name, args) pairs), in replies of
    PER_REPLY pairs; then the zero-leak checks on everything the run produced."""
    pairs = [each for i in range(ATTEMPTS) for each in call(i)]
    step = PER_REPLY * len(call(0))
    replies = [calls(*pairs[i : i + step]) for i in range(0, len(pairs), step)]
    server.add(*replies, text("done"))
    run = caretz("-p", "race", "--loop-guard", "off")
    assert run.code == 0, run.stderr
    events = (caretz.data_dir / "sessions" / run.session_id / "events.jsonl").read_text()
    results = [json.loads(line) for line in events.splitlines()]
    assert sum(1 for e in results if e["type"] == "Tool.Result") == len(pairs)
    for where, seen in (
        ("a request", json.dumps([r.body for r in server.requests])),
        ("events.jsonl", events),
        ("the output", run.stdout + run.stderr),
    ):
        assert "canary-6f1d2e" not in seen, f"the canary leaked into {where}"


@pytest.fixture
def sandboxed(caretz: Caretz, home: Path) -> Caretz:
    caretz.env["HOME"] = str(home)
    return caretz


def test_reads_of_a_file_swapped_with_a_link_to_a_hidden_key(
    sandboxed, server, workspace, home, swapping
):
    swapping("file", str(workspace / "notes.txt"), "decoy text\n", str(home / ".ssh" / "id_rsa"))
    race(sandboxed, server, lambda i: [("read", {"path": "notes.txt"})])


def test_reads_through_a_directory_swapped_with_a_link_to_the_key_folder(
    sandboxed, server, workspace, home, swapping
):
    (workspace / "keys").mkdir()
    (workspace / "keys" / "id_rsa").write_text("decoy key\n")
    swapping("dir", str(workspace / "keys"), str(home / ".ssh"))
    race(sandboxed, server, lambda i: [("read", {"path": "keys/id_rsa"})])


def test_writes_through_a_directory_swapped_with_a_link_outside(
    sandboxed, server, workspace, outside, swapping
):
    (workspace / "out").mkdir()
    swapping("dir", str(workspace / "out"), str(outside))
    race(sandboxed, server, lambda i: [("write", {"path": f"out/w{i}.txt", "content": "x"})])
    assert list(outside.iterdir()) == []


def test_writes_through_a_directory_swapped_with_a_link_to_the_data_dir(
    sandboxed, server, workspace, swapping
):
    data = sandboxed.data_dir
    data.mkdir(parents=True, exist_ok=True)
    (workspace / "cfg").mkdir()
    swapping("dir", str(workspace / "cfg"), str(data))
    forged = json.dumps({str(workspace): {"evil": "0" * 64}})
    race(
        sandboxed,
        server,
        lambda i: [("write", {"path": f"cfg/mcp-approvals-{i}.json", "content": forged})],
    )
    assert not [p for p in data.iterdir() if p.name.startswith("mcp-approvals")]


def test_edits_of_a_file_swapped_with_a_link_outside(
    sandboxed, server, workspace, outside, swapping
):
    victim = outside / "victim.txt"
    victim.write_text("value = 1\n")
    swapping("file", str(workspace / "target.txt"), "value = 1\n", str(victim))
    edit = {"path": "target.txt", "old_string": "value = 1", "new_string": "value = 2"}
    race(sandboxed, server, lambda i: [("read", {"path": "target.txt"}), ("edit", edit)])
    assert victim.read_text() == "value = 1\n"


def test_writes_of_a_file_swapped_with_a_link_to_the_key_keep_it_out_of_the_diff(
    sandboxed, server, workspace, home, swapping
):
    key = home / ".ssh" / "id_rsa"
    swapping("file", str(workspace / "diffme.txt"), "decoy\n", str(key))
    race(
        sandboxed,
        server,
        lambda i: [
            ("read", {"path": "diffme.txt"}),
            ("write", {"path": "diffme.txt", "content": f"{i}\n"}),
        ],
    )
    assert key.read_text() == CANARY + "\n"


def test_grep_in_a_directory_swapped_with_a_link_to_the_key_folder(
    sandboxed, server, workspace, home, swapping
):
    """grep runs rg in the directory it checked, held open: a link swapped in after the
    check cannot send rg into the key folder."""
    (workspace / "keys").mkdir()
    (workspace / "keys" / "id_rsa").write_text("decoy OPENSSH\n")
    swapping("dir", str(workspace / "keys"), str(home / ".ssh"))
    race(sandboxed, server, lambda i: [("grep", {"pattern": "OPENSSH", "path": "keys"})])


def test_grep_of_a_file_swapped_with_a_link_to_the_key(
    sandboxed, server, workspace, home, swapping
):
    key = str(home / ".ssh" / "id_rsa")
    swapping("file", str(workspace / "notes.txt"), "decoy OPENSSH\n", key)
    race(sandboxed, server, lambda i: [("grep", {"pattern": "OPENSSH", "path": "notes.txt"})])
