"""A project on a read-only mount, in the default mode, end to end: the real CLI inside a
mount namespace where the project folder is bound read-only, on both sandbox backends.

Everything that reads works (commands, the file tools, search, checkpoints); every write
fails with the tool's or the command's own one line; the sandbox creates nothing there.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Caretz
from tests.e2e.sandbox_folders import project_folder, require, scratch_folder
from tests.modelserver import calls, text, tool

LANDLOCK_PROGRAMS = ("bash", "cat", "ls", "touch", "git", "wc")


@pytest.fixture
def scratch() -> Iterator[Path]:
    yield from scratch_folder("caretz-e2e-ro-")


@pytest.fixture
def workspace(scratch: Path) -> Path:
    folder = project_folder(scratch)
    (folder / "src").mkdir()
    (folder / "src" / "app.py").write_text("print('hello')\n")
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    subprocess.run(["git", "add", "-A"], cwd=folder, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=folder, check=True)
    return folder


@pytest.fixture(params=["bwrap", "landlock"])
def backend(request: pytest.FixtureRequest, scratch: Path) -> dict[str, str]:
    """The environment that picks each backend (Landlock: a PATH without bwrap)."""
    require("bwrap", "git")
    if request.param == "bwrap":
        return {}
    bin_dir = scratch / "bin"
    bin_dir.mkdir()
    for program in LANDLOCK_PROGRAMS:
        found = shutil.which(program)
        assert found, f"{program} is missing"
        (bin_dir / program).symlink_to(found)
    return {"PATH": str(bin_dir)}


def read_only_mount(folder: Path) -> list[str]:
    """A command prefix that runs what follows in a mount namespace of its own, with
    `folder` bound read-only onto itself. Fails (never skips) under CI when it cannot."""
    unshare, mount = shutil.which("unshare"), shutil.which("mount")
    where = shlex.quote(str(folder))
    script = f'{mount} --bind {where} {where} && {mount} -o remount,bind,ro {where} && exec "$@"'
    prefix = [str(unshare), "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh"]
    probe = subprocess.run(
        [*prefix, "/bin/sh", "-c", f"touch {where}/probe"], capture_output=True, text=True
    )
    made = unshare and mount and "Read-only file system" in probe.stderr
    if not made:
        message = f"cannot bind a folder read-only here (needs root): {probe.stderr.strip()}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return prefix


def run_read_only(caretz: Caretz, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    command = [*read_only_mount(caretz.workspace), sys.executable, "-m", "caretz", *args]
    return subprocess.run(
        command,
        cwd=caretz.workspace,
        env=caretz.environment(env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_read_only_project_reads_and_each_write_fails_with_one_line(
    caretz, server, workspace, backend
):
    server.add(
        tool("bash", command="ls -a; cat README.md; git log --oneline | wc -l"),
        calls(("read", {"path": "src/app.py"}), ("read", {"path": "README.md"})),
        tool("grep", pattern="hello"),
        tool("bash", command="touch new.txt"),
        tool("write", path="new.txt", content="new\n"),
        tool("edit", path="README.md", old_string="hello", new_string="bye"),
        text("Looked, could not write."),
    )
    before = sorted(p.name for p in workspace.iterdir())

    done = run_read_only(caretz, backend, "-p", "look around, then try to write")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Looked, could not write.\n"
    assert "Traceback" not in done.stderr and "bwrap:" not in done.stderr
    session = done.stderr.rsplit("session ", 1)[1].split()[0]
    results = [e for e in caretz.events(session) if e["type"] == "Tool.Result"]
    listing, read, _, grep, touch, write, edit = results
    assert listing["ok"], listing["output"]
    assert listing["ok"] and "README.md" in listing["output"] and "hello" in listing["output"]
    assert listing["output"].splitlines()[-1].strip() == "1"  # git reads the repository
    assert read["ok"] and "print('hello')" in read["output"]
    assert grep["ok"] and "README.md" in grep["output"] and "src/app.py" in grep["output"]
    assert not touch["ok"] and "Read-only file system" in touch["output"]
    for failed in (write, edit):
        assert not failed["ok"] and "read-only file system" in failed["output"].lower()
        assert len(failed["output"].strip().splitlines()) == 1, failed["output"]
    assert "writable: nothing (read-only)" in server.requests[0].system  # the model is told
    # Nothing was created in the project: no mount point, no .caretz, no new file.
    assert sorted(p.name for p in workspace.iterdir()) == before
    assert (workspace / "README.md").read_text() == "hello\n"
