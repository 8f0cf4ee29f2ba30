"""MCP servers start behind the interactive prompt: the prompt comes while a real stdio
server is held (it answers initialize only once a file appears), its tools join when it
is ready, and a call of one of them waits for it. `-p` waits for the servers first."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import Caretz
from tests.mcp.conftest import trouble_server, wait_for_file
from tests.mcp.test_headless import profile
from tests.modelserver import ModelServer, calls, text


def held_server(tmp_path: Path) -> tuple[dict, Path, Path]:
    """trouble.py held until `release` exists (given all the time a slow machine needs),
    and the file its pid goes to once it runs."""
    release, pid_file = tmp_path / "release", tmp_path / "server.pid"
    entry = trouble_server("--start-when", str(release), "--pid-file", str(pid_file))
    entry["startupTimeout"] = "10m"
    return entry, release, pid_file


def offered(server: ModelServer, request: int) -> list[str]:
    return [spec["name"] for spec in server.requests[request].body["tools"]]


def test_the_prompt_comes_while_a_server_starts_and_its_tools_join_when_ready(
    caretz: Caretz, server: ModelServer, terminal, tmp_path: Path
):
    entry, release, pid_file = held_server(tmp_path)
    caretz.write_config(profile({"trouble": entry}))
    server.add(text("First."), text("Second."))
    term = terminal()

    term.expect("mcp: starting 'trouble'; their tools join when ready")
    wait_for_file(pid_file)  # the server runs, held before it answers initialize
    term.type("/mcp")
    term.expect("trouble  starting · stdio")
    term.type("before it is ready")
    term.expect("First.")
    assert not any(name.startswith("mcp__") for name in offered(server, 0))

    release.touch()
    ready = term.expect(
        r"mcp: server 'trouble' ready \(.* s\): its (\d+) tools join the conversation"
    )
    term.type("and now?")
    term.expect("Second.")
    session_id = term.ctrl_d()

    joined = [name for name in offered(server, 1) if name.startswith("mcp__trouble__")]
    assert "mcp__trouble__echo" in joined
    assert int(ready.group(1)) == len(joined)  # the line counts the tools that joined
    started = [e for e in caretz.events(session_id) if e["type"] == "Mcp.ServerStarted"]
    assert [(e["server"], e["background"]) for e in started] == [("trouble", True)]


def test_a_call_of_a_tool_whose_server_is_starting_waits_for_it(
    caretz: Caretz, server: ModelServer, terminal, tmp_path: Path
):
    entry, release, _ = held_server(tmp_path)
    caretz.write_config(profile({"trouble": entry}, allow=["mcp__trouble__*"]))
    server.add(calls(("mcp__trouble__echo", {"text": "hi"})), text("It answered."))
    term = terminal()

    term.type("use mcp__trouble__echo")
    term.expect("mcp: mcp__trouble__echo waits for server 'trouble' to start")
    release.touch()  # only now can the server answer: the call waited for it
    term.expect("It answered.")
    session_id = term.ctrl_d()

    assert "mcp__trouble__echo" not in offered(server, 0)
    [result] = [b for b in server.requests[1].messages[-1]["content"] if b["type"] == "tool_result"]
    assert result["content"] == "echo: hi"
    awaited = [e for e in caretz.events(session_id) if e["type"] == "Mcp.ServerAwaited"]
    assert [(e["server"], e["tool"]) for e in awaited] == [("trouble", "mcp__trouble__echo")]


def test_a_headless_run_waits_for_its_servers_before_the_first_request(
    caretz: Caretz, server: ModelServer, tmp_path: Path
):
    entry, release, pid_file = held_server(tmp_path)
    caretz.write_config(profile({"trouble": entry}))
    server.add(text("Done."))
    run = subprocess.Popen(
        [sys.executable, "-m", "caretz", "-p", "hello"],
        cwd=caretz.workspace,
        env=caretz.environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_file(pid_file)
        assert server.requests == []  # held: nothing is sent before the server is ready
        release.touch()
        out, err = run.communicate(timeout=120)
    finally:
        run.kill()
    assert run.returncode == 0, err
    assert "mcp__trouble__echo" in offered(server, 0)
