"""caretz's data dir is the user's alone, whatever the umask: a full session through the
real CLI (a checkpoint of a project with a `.env`, an image, an MCP server's log, a hook
approval, the prompt history) leaves every folder 0700 and every file without a bit for
the group or others, and another user (uid 65534, through setpriv) reads none of it.
A data dir an older caretz left open is closed at start."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Caretz
from tests.e2e.hook_scripts import hooks_entry
from tests.mcp.conftest import trouble_server
from tests.modelserver import ModelServer, text, tool
from tests.pictures import png

SECRET = "DEPLOY_TOKEN=tok-3f9a1c7e-private"
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    """The test process's umask, which every caretz it starts inherits, for a while."""
    before = os.umask(mask)
    try:
        yield
    finally:
        os.umask(before)


def open_to_others(root: Path) -> list[str]:
    """Every folder under `root` (itself too) that is not 0700 and every file with a bit for
    the group or others, with its mode."""
    found = []
    for path in [root, *root.rglob("*")]:
        info = path.lstat()
        mode = stat.S_IMODE(info.st_mode)
        folder, link = stat.S_ISDIR(info.st_mode), stat.S_ISLNK(info.st_mode)
        if (folder and mode != 0o700) or (not folder and not link and mode & 0o077):
            found.append(f"{path.relative_to(root.parent)} {mode:o}")
    return found


def as_nobody(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*NOBODY, *argv], capture_output=True, text=True, timeout=60)


def can_switch_user() -> bool:
    """Whether this test can act as another user: root with setpriv. In CI (which runs as
    root) it must: the check then fails rather than skip."""
    able = os.getuid() == 0 and shutil.which("setpriv") is not None
    if not able and os.environ.get("CI"):
        pytest.fail("the tests run as root with setpriv (util-linux) in CI")
    return able


@pytest.fixture
def readable_elsewhere() -> Iterator[Path]:
    """A file another user can read, to show the switch to that user works at all."""
    folder = Path(tempfile.mkdtemp())
    folder.chmod(0o755)
    (folder / "open.txt").write_text("anyone may read this\n")
    (folder / "open.txt").chmod(0o644)
    yield folder / "open.txt"
    shutil.rmtree(folder)


def full_session(caretz: Caretz, server: ModelServer, workspace: Path) -> str:
    """A project with a secret, its hooks approved; a run that reads an image, writes a
    file (a checkpoint first), cats the secret and calls an MCP server. Its session ID."""
    (workspace / ".env").write_text(SECRET + "\n")
    (workspace / "shot.png").write_bytes(png(12, 8))
    (workspace / ".caretz").mkdir()
    settings = {"hooks": {"PostToolUse": [hooks_entry("true")]}}
    (workspace / ".caretz" / "settings.json").write_text(json.dumps(settings))
    approved = caretz("hooks", "approve")
    assert approved.code == 0, approved.stderr
    caretz.write_config(
        {
            "profiles": {
                "general": {
                    "mcpServers": {"trouble": trouble_server()},
                    "permissions": {"allow": ["mcp__trouble__echo", "Bash(cat .env)"]},
                }
            }
        }
    )
    server.add(
        tool("read", path="shot.png"),
        tool("write", path="notes.txt", content="what changed\n"),
        tool("bash", command="cat .env"),
        tool("mcp__trouble__echo", text="hello"),
        text("Done."),
    )
    run = caretz("-p", "look, note, check", "--loop-guard", "off")
    assert run.code == 0, run.stderr
    return run.session_id


@pytest.mark.parametrize("mask", [0o000, 0o022], ids=["umask 000", "umask 022"])
def test_a_full_session_leaves_nothing_another_user_can_read(
    caretz: Caretz, server: ModelServer, workspace: Path, screen, readable_elsewhere, mask
):
    with umask(mask):
        session = full_session(caretz, server, workspace)
        if mask == 0:  # the interactive session's prompt history
            server.add(text("Hi."))
            term = screen()
            term.turn("hello")
            term.ctrl_d()

    data = caretz.data_dir
    store = next((data / "checkpoints").iterdir()) / "git"
    kept = {
        "log": data / "sessions" / session / "events.jsonl",
        "image": next((data / "sessions" / session / "images").iterdir()),
        "approvals": data / "hook-approvals.json",
        "mcp log": data / "mcp-logs" / "trouble.log",
        "checkpoint object": next(p for p in (store / "objects").rglob("*") if p.is_file()),
    }
    if mask == 0:
        kept["history"] = data / "prompt-history"
    assert all(path.is_file() for path in kept.values()), kept
    snapshot = subprocess.run(
        ["git", f"--git-dir={store}", "show", "refs/caretz/latest:.env"],
        capture_output=True,
        text=True,
    )
    assert SECRET in snapshot.stdout  # the store does hold the project's secret
    assert open_to_others(data) == []
    if can_switch_user():
        assert as_nobody("cat", str(readable_elsewhere)).returncode == 0  # the switch works
        for what, path in kept.items():
            read = as_nobody("cat", str(path))
            assert read.returncode != 0 and read.stdout == "", what
        listing = as_nobody("ls", "-R", str(data))
        assert listing.returncode != 0 and session not in listing.stdout
        shown = as_nobody("git", f"--git-dir={store}", "show", "refs/caretz/latest:.env")
        assert SECRET not in shown.stdout


def test_a_data_dir_an_older_caretz_left_open_is_closed_at_start(caretz: Caretz):
    data = caretz.data_dir
    old = data / "sessions" / "20250101-000000-abcd"
    objects = data / "checkpoints" / "project-0123" / "git" / "objects" / "ab"
    for folder in (old, objects):
        folder.mkdir(parents=True)
    (old / "events.jsonl").write_text("{}\n")
    (objects / "cdef").write_bytes(b"zlib")
    for path in [data, *data.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    (objects / "cdef").chmod(0o444)  # as git writes its objects

    run = caretz("sessions", "list", "--all")

    assert run.code == 0, run.stderr
    assert open_to_others(data) == []
    assert stat.S_IMODE((objects / "cdef").stat().st_mode) == 0o400  # read-only, as it was


def test_a_data_dir_everyone_may_write_in_is_refused_not_taken(caretz: Caretz, tmp_path: Path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp: closing it would take it from everyone else

    run = caretz("-p", "hi", env={"CARETZ_DATA_DIR": str(shared)})

    assert run.code == 2
    [line] = run.stderr.strip().splitlines()
    assert line.startswith("caretz: ") and "CARETZ_DATA_DIR" in line and str(shared) in line
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
    assert list(shared.iterdir()) == []


def test_an_open_folder_of_the_users_is_refused_not_closed(caretz: Caretz, tmp_path: Path):
    home = tmp_path / "home"
    (home / "public_html").mkdir(parents=True)
    (home / "public_html" / "index.html").write_text("<p>shared on purpose</p>")
    for path in [home, *home.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)

    run = caretz("-p", "hi", env={"CARETZ_DATA_DIR": str(home)})

    assert run.code == 2
    [line] = run.stderr.strip().splitlines()
    assert "holds what caretz did not make (public_html)" in line and "CARETZ_DATA_DIR" in line
    assert stat.S_IMODE((home / "public_html" / "index.html").stat().st_mode) == 0o644
    assert stat.S_IMODE(home.stat().st_mode) == 0o755
