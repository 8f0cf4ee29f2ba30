"""The files a repository puts where caretz reads by itself (AGENTS.md, command files,
settings, .mcp.json) and a rewind's writes, through the real CLI: whatever the repository
links them to, nothing outside it reaches a request, and nothing outside it is written.

The forms: links to a key, to /proc, to caretz's own keys file, a folder link in the
middle of the path, a hard link, a FIFO; a rewind raced by a real process that swaps a
folder for a link to HOME (tests/e2e/swapper.py: it signals once it has flipped).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import API_KEY, Caretz
from tests.modelserver import ModelServer, text, tool
from tests.sandbox.helpers import wait_for

KEY = "-----BEGIN OPENSSH PRIVATE KEY----- door-canary-5e1f"
KEYS_FILE = "ANTHROPIC_API_KEY=sk-ant-keysfile-canary-77d0"
OUTSIDE = "outside-canary-a9c3"
ENVIRON = "environ-canary-31b7"
SWAPPER = Path(__file__).with_name("swapper.py")
CANARIES = ("door-canary-5e1f", "keysfile-canary-77d0", OUTSIDE, ENVIRON, API_KEY)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(KEY + "\n")
    (home / ".config" / "caretz").mkdir(parents=True)
    (home / ".config" / "caretz" / "keys.env").write_text(KEYS_FILE + "\n")
    (home / ".bashrc").write_text("export PS1=home\n")
    return home


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "notes.md").write_text(OUTSIDE + "\n")
    return folder


def run_in(server: ModelServer, folder: Path, home: Path) -> Caretz:
    caretz = Caretz(server, folder)
    caretz.env.update(HOME=str(home), DOOR_CANARY=ENVIRON)
    caretz.env.pop("XDG_CONFIG_HOME", None)
    return caretz


def sent(server: ModelServer) -> str:
    return json.dumps([request.body for request in server.requests])


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_the_first_request_carries_only_the_instructions_the_door_lets_through(
    server, tmp_path, home, outside
):
    """From the repository's root down to the working directory, each folder's AGENTS.md
    is another form; the last two (a plain file, CLAUDE.md linked inside the project) go in."""
    root = tmp_path / "repo"
    cwd = root / "a" / "b" / "c" / "d" / "e" / "f"
    cwd.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "AGENTS.md").symlink_to(home / ".ssh" / "id_rsa")
    (root / "a" / "AGENTS.md").symlink_to("/proc/self/environ")
    os.mkfifo(root / "a" / "b" / "AGENTS.md")  # nobody writes: a read would never end
    (root / "a" / "b" / "c" / "up").symlink_to(home / ".config")  # a folder link mid-path
    (root / "a" / "b" / "c" / "AGENTS.md").symlink_to("up/caretz/keys.env")
    os.link(outside / "notes.md", root / "a" / "b" / "c" / "d" / "AGENTS.md")
    (root / "a" / "b" / "c" / "d" / "e" / "AGENTS.md").write_text("Follow the house style.\n")
    (root / "shared.md").write_text("Use tabs.\n")
    (cwd / "CLAUDE.md").symlink_to("../../../../../../shared.md")
    server.add(text("ok"))

    run = run_in(server, cwd, home)("-p", "hello")

    assert run.code == 0, run.stderr
    system = server.requests[0].system
    assert "Follow the house style." in system and "Use tabs." in system
    for canary in CANARIES:
        assert canary not in sent(server) and canary not in run.stdout + run.stderr
    refused = {
        root / "AGENTS.md": f"leads to {home / '.ssh' / 'id_rsa'}, outside the project",
        root / "a" / "AGENTS.md": "leads into /proc",
        root / "a" / "b" / "AGENTS.md": "is a FIFO (named pipe), not a regular file",
        root / "a" / "b" / "c" / "AGENTS.md": "keys.env, outside the project",
        root / "a" / "b" / "c" / "d" / "AGENTS.md": "has 2 hard links",
    }
    lines = [line for line in run.stderr.splitlines() if "not used as instructions" in line]
    assert len(lines) == len(refused), run.stderr
    for path, why in refused.items():
        assert any(f"{path}: not used as instructions: " in line and why in line for line in lines)


def test_command_files_that_lead_out_are_refused_in_one_line_and_nothing_is_sent(
    server, workspace, home
):
    commands = workspace / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").symlink_to(home / ".ssh" / "id_rsa")
    own = workspace / ".caretz" / "commands"
    own.mkdir(parents=True)
    (own / "hello.md").write_text("Say hello to the team.\n")
    os.mkfifo(own / "wait.md")
    caretz = run_in(server, workspace, home)

    review = caretz("-p", "/review")
    waiting = caretz("-p", "/wait")

    assert review.code == 2 and waiting.code == 2
    line = one_line(review.stderr)
    assert f"{commands / 'review.md'}: not read (leads to {home / '.ssh'}" in line
    assert "(nothing was sent)" in line
    assert "is a FIFO (named pipe), not a regular file" in one_line(waiting.stderr)
    assert server.requests == []

    for entry in commands.iterdir():
        entry.unlink()
    commands.rmdir()
    commands.symlink_to("/proc")
    server.add(text("Hello, team."))

    unknown = caretz("-p", "/name")
    hello = caretz("-p", "/hello")

    assert unknown.code == 2
    line = one_line(unknown.stderr)
    assert "unknown command /name" in line and f"{commands}: not read (leads into /proc" in line
    assert hello.code == 0, hello.stderr
    assert "Say hello to the team." in sent(server)
    for canary in CANARIES:
        assert canary not in sent(server)


@pytest.mark.parametrize("form", ["settings-link", "settings-hard-link", "mcp-fifo"])
def test_settings_and_mcp_files_the_door_refuses_stop_the_start_in_one_line(
    server, workspace, home, outside, form
):
    """Read as "no settings", a refused file would drop the project's deny rules and
    hooks: the run refuses to start instead, naming the file and why."""
    settings = workspace / ".caretz" / "settings.json"
    settings.parent.mkdir()
    if form == "settings-link":
        settings.symlink_to(home / ".ssh" / "id_rsa")
    elif form == "settings-hard-link":
        (outside / "settings.json").write_text('{"permissions": {"deny": ["Bash"]}}')
        os.link(outside / "settings.json", settings)
    else:
        os.mkfifo(workspace / ".mcp.json")

    run = run_in(server, workspace, home)("-p", "hello")

    assert run.code == 2
    line = one_line(run.stderr)
    why = {
        "settings-link": f"{settings}: cannot be read ({settings} is a symlink",
        "settings-hard-link": f"{settings}: cannot be read (has 2 hard links",
        "mcp-fifo": f"{workspace / '.mcp.json'}: cannot read the file: is a FIFO",
    }[form]
    assert why in line
    assert server.requests == []


def home_state(home: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(home)): path.read_bytes() if path.is_file() else b"<dir>"
        for path in sorted(home.rglob("*"))
    }


def test_a_rewind_whose_folder_is_swapped_for_a_link_to_home_mid_way_touches_nothing_there(
    server, workspace, home, tmp_path
):
    """The turn changes 200 files and adds 200 in `d`. While `caretz rewind` puts them
    back, a real process waits for the first added file to be taken away (the restore is
    under way) and swaps `d` for a link to HOME, where files of the same names wait."""
    (workspace / "d").mkdir()
    for i in range(200):
        (workspace / "d" / f"f{i:03}").write_text(f"before {i}\n")
        (home / f"n{i:03}").write_text(f"home's own n{i}\n")
    server.add(
        tool("bash", command="for f in d/f*; do echo changed > $f; echo new > d/n${f#d/f}; done"),
        text("Changed them."),
    )
    caretz = run_in(server, workspace, home)
    run = caretz("-p", "change the files")
    assert run.code == 0, run.stderr
    assert (workspace / "d" / "n000").read_text() == "new\n"
    before = home_state(home)
    ready, stop = tmp_path / "swapper.ready", tmp_path / "swapper.stop"
    swapper = subprocess.Popen(
        [sys.executable, str(SWAPPER), str(ready), str(stop), "once", str(workspace / "d")]
        + [str(workspace / "d" / "n000"), str(home)]
    )
    try:
        assert wait_for(ready.exists), "the swapper never started watching"
        rewind = caretz("rewind", run.session_id, "--turn", "1", "--force")
    finally:
        stop.write_text("stop")
        assert swapper.wait(timeout=30) == 0

    assert ready.read_text() == "swapped"  # the race did happen, mid-restore
    assert home_state(home) == before
    assert rewind.code != 0
    assert "restore failed" in one_line(rewind.stderr)
    assert os.readlink(workspace / "d") == str(home)  # left as the swap left it
