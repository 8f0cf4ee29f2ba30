"""What a session's commands share (its /tmp, its network namespace) and what two
sessions do not share; the session directory's lifetime."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from caretz.sandbox.runtime import SessionRuntime
from tests.sandbox.helpers import run_in

SERVER = """
import socket
server = socket.socket()
server.bind(("127.0.0.1", 8123))
server.listen()
print("listening", flush=True)
connection, _ = server.accept()
connection.sendall(b"hi")
"""
CLIENT = """
import socket
print(socket.create_connection(("127.0.0.1", 8123), 10).recv(10).decode())
"""


def start_in(sandbox, script: str) -> subprocess.Popen[str]:
    launch = sandbox.launch(["bash", "-c", script], dict(os.environ))
    try:
        return subprocess.Popen(
            launch.argv,
            cwd=launch.cwd,
            env=launch.env,
            pass_fds=launch.pass_fds,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    finally:
        launch.close()


def test_one_network_namespace_for_the_session_and_none_shared(make_policy, bwrap_sandbox, work):
    (work / "server.py").write_text(SERVER)
    (work / "client.py").write_text(CLIENT)
    session, other = bwrap_sandbox(make_policy()), bwrap_sandbox(make_policy())
    server = start_in(session, "python3 server.py")
    try:
        assert server.stdout is not None and server.stdout.readline() == "listening\n"
        elsewhere = run_in(other, "python3 client.py")
        here = run_in(session, "python3 client.py")
    finally:
        server.kill()
        server.wait()
    assert "Connection refused" in elsewhere.stderr
    assert here.stdout == "hi\n", here.stderr
    assert session.runtime.net_problem is None


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
def test_tmp_is_the_sessions_own(make_policy, bwrap_sandbox, landlock_sandbox, backend):
    make = bwrap_sandbox if backend == "bwrap" else landlock_sandbox
    session, other = make(make_policy()), make(make_policy())
    run_in(session, 'echo kept > "$TMPDIR/fixture"')
    theirs = session.runtime.tmp_dir() / "fixture"
    assert run_in(session, 'cat "$TMPDIR/fixture"').stdout == "kept\n"
    looked = run_in(other, f'cat "$TMPDIR/fixture" {theirs}')
    assert "kept" not in looked.stdout
    session.close()
    assert not theirs.parent.exists()


def test_abandoned_session_directories_go_and_a_shared_parent_is_refused(tmp_path: Path):
    parent = tmp_path / "caretz-test"
    parent.mkdir(mode=0o700)
    gone = subprocess.Popen(["true"])
    gone.wait()
    abandoned = parent / f"session-{gone.pid}-xyz"
    (abandoned / "tmp").mkdir(parents=True)
    runtime = SessionRuntime(parent)
    assert runtime.tmp_dir().is_dir() and not abandoned.exists()
    runtime.close()

    open_parent = tmp_path / "world"
    open_parent.mkdir()
    open_parent.chmod(0o777)
    with pytest.raises(OSError, match="not a private directory"):
        SessionRuntime(open_parent).tmp_dir()
