"""A data folder caretz cannot write, through the real CLI: a tmpfs that is full at the
start or fills during a turn, and a read-only mount, each in a mount namespace of the
caretz process's own (`unshare -m`, as root).

Each failure is one `caretz: cannot write caretz's data folder …` line naming the folder
and what to do, exit 1 (the README's runtime failure), the result object under
`--output json`; the log keeps every line written before, whole. In the interactive
session the prompt goes on, the failure is said once, and the log's held lines are
written once the folder has room again. The folder is filled from the model server's
reply (through the process's /proc/PID/root), never raced against a clock.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Caretz
from tests.e2e.terminal import Screen, wrapped
from tests.modelserver import ModelServer, RecordedRequest, Reply, text

FAILED = "cannot write caretz's data folder"
NO_ROOM = (
    "No space left on device: free space there, or point CARETZ_DATA_DIR at a folder with room"
)
READ_ONLY = (
    "Read-only file system: make it writable, or point CARETZ_DATA_DIR at a folder caretz can write"
)
# A reply longer than a page: its log line needs a page the full tmpfs does not have.
LONG_ANSWER = " ".join(f"Step {n} is done." for n in range(900))  # never a loop to cut
# Mounts the folder, as full or read-only as asked, records the namespace's pid, runs
# caretz (its command line: "$@"), then copies what the folder held out for the test.
SCRIPT = """
mount -t tmpfs -o size="$SIZE",mode=0700 tmpfs "$DATA" || exit 97
if [ "$FULL" = 1 ]; then dd if=/dev/zero of="$DATA/filler" bs=4k 2>/dev/null; fi
if [ "$READ_ONLY" = 1 ]; then mount -o remount,ro "$DATA" || exit 97; fi
echo $$ > "$PID_FILE"
"$@"
code=$?
rm -f "$DATA/filler"
cp -a "$DATA/." "$KEPT/"
exit $code
"""


class DataFolder:
    """caretz's data folder on a tmpfs of its own, mounted for one caretz process."""

    def __init__(self, root: Path, size: str, *, full: bool = False, read_only: bool = False):
        self.path, self.kept, self.pid_file = root / "data", root / "kept", root / "pid"
        self.path.mkdir()
        self.kept.mkdir()
        self.settings = {
            "SIZE": size,
            "FULL": "1" if full else "0",
            "READ_ONLY": "1" if read_only else "0",
            "DATA": str(self.path),
            "KEPT": str(self.kept),
            "PID_FILE": str(self.pid_file),
            "CARETZ_DATA_DIR": str(self.path),
        }

    @property
    def launcher(self) -> list[str]:
        return ["unshare", "-m", "--propagation", "private", "sh", "-c", SCRIPT, "sh"]

    def inside(self) -> Path:
        """The folder as the caretz process sees it: its tmpfs, not the empty mount point."""
        return Path(f"/proc/{self.pid_file.read_text().strip()}/root{self.path}")

    def fill(self) -> None:
        """Fill the tmpfs to its last page."""
        with (self.inside() / "filler").open("wb", buffering=0) as filler:
            try:
                while True:
                    filler.write(b"\0" * 65536)
            except OSError as error:
                assert error.errno == errno.ENOSPC

    def free(self) -> None:
        (self.inside() / "filler").unlink()

    def events(self) -> list[dict[str, Any]]:
        """The session's log as the folder held it at the end (every line JSON, or fail)."""
        (log,) = (self.kept / "sessions").glob("*/events.jsonl")
        lines = log.read_bytes().split(b"\n")
        assert lines[-1] == b"", "the log ends in a torn line"
        return [json.loads(line) for line in lines[:-1]]


def can_mount() -> None:
    """Whether a tmpfs can be mounted in a mount namespace here: as root with unshare. In
    CI (root in a container) it must: the test fails there rather than skip."""
    able = os.getuid() == 0 and shutil.which("unshare") is not None
    if able:
        probe = subprocess.run(
            ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=4k tmpfs /mnt"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        able = probe.returncode == 0
    if not able and os.environ.get("CI"):
        pytest.fail("CI runs as root with unshare (util-linux): a tmpfs must mount there")
    if not able:
        pytest.skip("mounting a tmpfs takes root and unshare")


def run(caretz: Caretz, folder: DataFolder, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*folder.launcher, sys.executable, "-m", "caretz", *args],
        cwd=caretz.workspace,
        env=caretz.environment(folder.settings),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 97, f"the tmpfs did not mount: {done.stderr}"
    return done


def one_line(stderr: str, folder: DataFolder, reason: str) -> None:
    """stderr is the one line naming the folder and what to do, and nothing else."""
    assert "Traceback" not in stderr and "Error" not in stderr
    assert stderr.strip().splitlines() == [f"caretz: {FAILED} {folder.path}: {reason}"], stderr


def test_a_full_data_folder_at_the_start_is_one_line_and_exit_1(
    caretz: Caretz, server: ModelServer, tmp_path: Path
):
    can_mount()
    folder = DataFolder(tmp_path, "256k", full=True)
    done = run(caretz, folder, "-p", "say hello")
    assert done.returncode == 1
    one_line(done.stderr, folder, NO_ROOM)
    assert server.requests == []  # nothing sent for a session that cannot be kept


def test_a_read_only_data_folder_is_one_line_and_the_result_object(
    caretz: Caretz, server: ModelServer, tmp_path: Path
):
    can_mount()
    folder = DataFolder(tmp_path, "256k", read_only=True)
    done = run(caretz, folder, "-p", "say hello", "--output", "json")
    assert done.returncode == 1
    one_line(done.stderr, folder, READ_ONLY)
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["type"] == "result"
    assert (result["status"], result["exit_code"]) == ("error", 1)
    assert result["message"] == done.stderr.strip().removeprefix("caretz: ")


def filled_then(folder: DataFolder, reply: Reply):
    """A responder that fills the folder, then answers `reply`."""

    def respond(request: RecordedRequest) -> Reply:
        folder.fill()
        return reply

    return respond


def test_a_folder_that_fills_during_a_turn_ends_it_with_the_result_object_and_the_log_whole(
    caretz: Caretz, server: ModelServer, tmp_path: Path
):
    can_mount()
    folder = DataFolder(tmp_path, "1m")
    server.on(filled_then(folder, text(LONG_ANSWER)))
    done = run(caretz, folder, "-p", "say hello", "--output", "json")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "Error" not in done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert (result["type"], result["status"], result["exit_code"]) == ("result", "error", 1)
    assert result["message"] == f"{FAILED} {folder.path}: {NO_ROOM}" and result["session_id"]
    # What was logged before the folder filled is there, whole; nothing after it is torn.
    kinds = [event["type"] for event in folder.events()]
    assert kinds[:3] == ["Session.Started", "Turn.Started", "Model.Request"], kinds


def test_the_interactive_session_says_it_once_goes_on_and_writes_the_log_when_it_can(
    caretz: Caretz, server: ModelServer, tmp_path: Path
):
    can_mount()
    folder = DataFolder(tmp_path, "1m")
    server.on(filled_then(folder, text(LONG_ANSWER)))
    term = Screen(caretz, env=folder.settings, launcher=folder.launcher)
    try:
        term.type("first, while the folder fills")
        term.expect(wrapped(f"{FAILED} {folder.path}: No space left on device"))
        term.expect("the session goes on")
        server.add(text("second answer, held"), text("third answer, written"))
        term.turn("second, the folder still full")
        folder.free()
        term.child.send("third, after the folder has room\r")  # at the prompt turn() waited for
        term.expect("done · ")
        session_id = term.ctrl_d()
    finally:
        term.close()
    shown = "".join(term.transcript)
    assert shown.count("the session goes on") == 1  # said once, not at every prompt
    assert "Unhandled exception" not in shown and "Traceback" not in shown
    answers = [
        event["message"]["content"]
        for event in folder.events()
        if event["type"] == "Model.Response"
    ]
    assert answers == [LONG_ANSWER, "second answer, held", "third answer, written"]
    assert session_id
