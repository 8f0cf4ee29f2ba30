"""One sandbox per session, end to end: the real CLI, the loopback model server scripting
bash calls, real bubblewrap and the Landlock fallback (bwrap off PATH).

A background server job is reached from a later command, /tmp (TMPDIR under Landlock)
and the working directory carry over, two sessions at once share neither, host Unix
sockets (pathname, abstract, an ssh-agent) are refused with the network off unless the
user names them, and under Landlock nothing a command started outlives caretz even when
the command kills its own launcher.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Caretz, Run
from tests.e2e.sandbox_folders import project_folder, require, scratch_folder
from tests.modelserver import text, tool
from tests.sandbox.helpers import kill_all, marker, sleepers, wait_for

LANDLOCK_PROGRAMS = ("bash", "cat", "ls", "mkdir", "pgrep", "sleep", "kill", "env")


@pytest.fixture(autouse=True)
def bwrap_installed() -> None:
    require("bwrap")


@pytest.fixture
def scratch() -> Iterator[Path]:
    yield from scratch_folder("caretz-e2e-ses-")


@pytest.fixture
def workspace(scratch: Path) -> Path:
    return project_folder(scratch, readme=False)


@pytest.fixture
def landlock_path(scratch: Path) -> str:
    """A PATH without bwrap: caretz falls back to Landlock."""
    bin_dir = scratch / "bin"
    bin_dir.mkdir()
    for program in LANDLOCK_PROGRAMS:
        found = shutil.which(program)
        assert found, f"{program} is missing"
        (bin_dir / program).symlink_to(found)
    (bin_dir / "python3").symlink_to(os.path.realpath(sys.executable))
    return str(bin_dir)


@pytest.fixture(params=["bwrap", "landlock"])
def backend(request: pytest.FixtureRequest, landlock_path: str) -> dict[str, str]:
    """The environment that picks each backend."""
    return {} if request.param == "bwrap" else {"PATH": landlock_path}


def outputs(caretz: Caretz, run: Run) -> list[str]:
    assert run.code == 0, run.stderr
    events = caretz.events(run.session_id)
    return [e["output"] for e in events if e["type"] == "Tool.Result"]


def tmp_dir(env: dict[str, str]) -> str:
    return '"$TMPDIR"' if env else "/tmp"  # Landlock's /tmp is read-only: TMPDIR is the session's


# -- what a session's commands share --------------------------------------------------------

SERVE = "python3 -u -m http.server 8000 --bind 127.0.0.1"
FETCH = (
    "python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:8000/',"
    ' timeout=10).status)"'
)


def test_a_server_job_is_reached_by_a_later_command(caretz, server):
    server.add(
        tool("bash", command=SERVE, background=True),
        tool("job_output", job_id="j1", wait=20),
        tool("bash", command=FETCH),
        text("done"),
    )

    started, served, fetched = outputs(caretz, caretz("-p", "serve and fetch"))

    assert started.startswith("Started background job j1") and "Serving HTTP" in served
    assert fetched.strip() == "200"


def test_tmp_and_the_working_directory_carry_over(caretz, server, workspace, backend):
    tmp = tmp_dir(backend)
    server.add(
        tool("bash", command=f"echo kept > {tmp}/fixture.txt; mkdir -p sub/deeper && cd sub"),
        tool("bash", command=f"cat {tmp}/fixture.txt; pwd; cd deeper"),
        tool("bash", command="pwd; cd /"),
        tool("bash", command="pwd"),
        text("done"),
    )

    first, second, third, fourth = outputs(caretz, caretz("-p", "go", env=backend))

    assert first == "(no output)"
    assert second.splitlines() == ["kept", str(workspace / "sub")]
    assert third.splitlines()[0] == str(workspace / "sub" / "deeper")
    assert "the next command starts in" in third  # `cd /` leaves the project: not kept
    assert fourth.strip() == str(workspace)


def test_two_sessions_at_once_share_neither_tmp_nor_the_network(caretz, server, workspace):
    gate = workspace / "gate"
    os.mkfifo(gate)
    mark = uuid.uuid4().hex
    server.add(
        tool("bash", command=f"echo {mark} > /tmp/mark"),
        tool("bash", command=SERVE, background=True),
        tool("job_output", job_id="j1", wait=20),
        tool("bash", command="cat gate"),  # holds the first session open
    )
    first = subprocess.Popen(
        [sys.executable, "-m", "caretz", "-p", "hold"],
        cwd=workspace,
        env=caretz.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_for(lambda: len(server.requests) == 4, timeout=60), "the first never held"
        server.add(tool("bash", command=f"cat /tmp/mark; ls -A /tmp; {FETCH}"), text("done"))
        (other,) = outputs(caretz, caretz("-p", "look"))
        server.add(text("released"))
        with gate.open("w") as handle:
            handle.write("go\n")
        first.communicate(timeout=60)
    finally:
        first.kill()
    assert mark not in other and "No such file" in other
    assert "Connection refused" in other
    assert first.returncode == 0


# -- host sockets with the network off ------------------------------------------------------


class SocketServer:
    """A Unix socket server on the host that greets whoever connects."""

    def __init__(self, address: str | bytes):
        self.socket = socket.socket(socket.AF_UNIX)
        self.socket.bind(address)
        self.socket.listen()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            with connection:
                connection.sendall(b"greetings from the host")

    def close(self) -> None:
        self.socket.close()


@pytest.fixture
def host_socket(scratch: Path) -> Iterator[Path]:
    path = scratch / "run" / "db.sock"
    path.parent.mkdir()
    served = SocketServer(str(path))
    yield path
    served.close()


def connect(address: str) -> str:
    return (
        'python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); '
        f's.connect({address}); print(s.recv(100).decode())"'
    )


def test_host_sockets_are_refused_with_the_network_off(caretz, server, host_socket, backend):
    name = f"caretz-test-{uuid.uuid4().hex}"
    abstract = SocketServer(b"\0" + name.encode())
    try:
        server.add(
            tool("bash", command=connect(repr(str(host_socket)))),
            tool("bash", command=connect(repr("\0" + name))),
            text("done"),
        )
        pathname, hidden_abstract = outputs(caretz, caretz("-p", "connect", env=backend))
    finally:
        abstract.close()
    for output in (pathname, hidden_abstract):
        assert "PermissionError" in output and "greetings" not in output, output


def test_a_named_socket_is_reachable_under_bubblewrap(caretz, server, host_socket):
    caretz.write_config(
        {"profiles": {"general": {"sandbox": {"allowUnixSockets": [str(host_socket)]}}}}
    )
    server.add(tool("bash", command=connect(repr(str(host_socket)))), text("done"))

    (output,) = outputs(caretz, caretz("-p", "connect"))

    assert output.strip() == "greetings from the host"


def test_a_named_socket_stays_refused_under_landlock(caretz, server, host_socket, landlock_path):
    caretz.write_config(
        {"profiles": {"general": {"sandbox": {"allowUnixSockets": [str(host_socket)]}}}}
    )
    server.add(tool("bash", command=connect(repr(str(host_socket)))), text("done"))

    (output,) = outputs(caretz, caretz("-p", "connect", env={"PATH": landlock_path}))

    assert "PermissionError" in output  # Landlock cannot limit connect(): fail closed


def test_the_ssh_agent_only_when_allowed(caretz, server, scratch):
    agent = scratch / "agent" / "agent.sock"
    agent.parent.mkdir()
    served = SocketServer(str(agent))
    probe = 'echo "agent=[$SSH_AUTH_SOCK]"; ' + connect("sys.argv[1]")[:-1] + '" "$SSH_AUTH_SOCK"'
    env = {"SSH_AUTH_SOCK": str(agent)}
    try:
        server.add(tool("bash", command=probe), text("done"))
        (refused,) = outputs(caretz, caretz("-p", "sign", env=env))
        caretz.write_config({"profiles": {"general": {"sandbox": {"allowSshAgent": True}}}})
        server.add(tool("bash", command=probe), text("done"))
        (allowed,) = outputs(caretz, caretz("-p", "sign", env=env))
    finally:
        served.close()
    assert "agent=[]" in refused and "greetings" not in refused
    assert f"agent=[{agent}]" in allowed and "greetings from the host" in allowed


# -- no survivors ---------------------------------------------------------------------------


LIMIT_LAUNCHER = (
    "python3 -c 'import resource,sys; "
    "resource.prlimit(int(sys.argv[1]), resource.RLIMIT_NOFILE, (0, 0))' $PPID"
)


def test_a_command_cannot_end_its_launcher_with_a_limit_under_landlock(
    caretz, server, landlock_path
):
    """A launcher with no file descriptors left could not kill what the command started."""
    mark = marker()
    server.add(tool("bash", command=f"sleep {mark} & {LIMIT_LAUNCHER}; echo tried"), text("ok"))
    try:
        (output,) = outputs(caretz, caretz("-p", "escape", env={"PATH": landlock_path}))
        assert wait_for(lambda: not sleepers(mark), timeout=30), f"left: {sleepers(mark)}"
    finally:
        kill_all(sleepers(mark))
    assert "PermissionError" in output and "tried" in output


def test_what_a_killed_launcher_leaves_ends_with_caretz(caretz, server):
    """The launcher killed outright (here with the sandbox off, where nothing scopes the
    signal): its orphans come back to caretz, the subreaper, which ends them at exit."""
    mark = marker()
    server.add(
        tool("bash", command=f"sleep {mark} & kill -9 $PPID; echo launcher gone"),
        tool("bash", command=f"pgrep -x -f 'sleep {mark}' || echo none"),
        text("done"),
    )
    try:
        run = caretz("-p", "escape", "--sandbox", "off", "--permission-mode", "yolo")
        killed, looked = outputs(caretz, run)
        assert wait_for(lambda: not sleepers(mark), timeout=30), f"left: {sleepers(mark)}"
    finally:
        kill_all(sleepers(mark))
    # The launcher was killed: its end is the command's (what the shell printed after the
    # kill may or may not arrive before the orphan's hold on the pipe stops the read).
    assert "[exit code -9]" in killed, killed
    assert looked.strip().isdigit(), looked  # the orphan was running while caretz was


def test_sandbox_check_says_what_each_backend_does_with_sockets(caretz, landlock_path):
    bwrap_text = caretz("sandbox", "check")
    landlock = caretz("sandbox", "check", "--output", "json", env={"PATH": landlock_path})

    assert bwrap_text.code == 0 and "enforced: Unix sockets: no new ones (seccomp)" in (
        bwrap_text.stdout
    )
    assert "shared by its commands" in bwrap_text.stdout
    data = json.loads(landlock.stdout)
    assert data["backend"] == "landlock"
    assert any("need bubblewrap" in item for item in data["enforced"])
    assert any("cannot listen on TCP" in item for item in data["not_enforced"])
