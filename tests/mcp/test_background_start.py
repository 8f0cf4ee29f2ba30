"""MCP servers start behind the interactive prompt: the prompt comes while a real stdio
server is held (it answers initialize only once a file appears), its tools join when it
is ready, and a call of one of them waits for it. `-p` does the same: its first request
goes with the servers ready by then."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import Caretz
from tests.mcp.conftest import processes_mentioning, trouble_server, wait_for_file
from tests.mcp.test_headless import profile
from tests.modelserver import ModelServer, RecordedRequest, Reply, calls, text


def held_server(tmp_path: Path) -> tuple[dict, Path, Path]:
    """trouble.py held until `release` exists (given all the time a slow machine needs),
    and the file its pid goes to once it runs."""
    release, pid_file = tmp_path / "release", tmp_path / "server.pid"
    entry = trouble_server("--start-when", str(release), "--pid-file", str(pid_file))
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


def test_a_headless_run_sends_its_first_request_at_once_and_a_late_servers_tools_join(
    caretz: Caretz, server: ModelServer, tmp_path: Path
):
    """The server is held until the first request has arrived, so that request went out
    without waiting for it; the model's call of its tool waits for it, and the next
    request offers its tools."""
    entry, release, _ = held_server(tmp_path)
    caretz.write_config(profile({"trouble": entry}, allow=["mcp__trouble__echo"]))
    replies = iter([calls(("mcp__trouble__echo", {"text": "hi"})), text("It answered.")])

    def reply(request: RecordedRequest) -> Reply:
        if len(server.requests) == 1:
            release.touch()  # only now can the server start: the first request is here
        return next(replies)

    server.on(reply)

    run = caretz("-p", "use mcp__trouble__echo")

    assert run.code == 0, run.stderr
    _, second = server.requests
    assert not any(name.startswith("mcp__") for name in offered(server, 0))
    assert "mcp__trouble__echo" in offered(server, 1)
    [result] = [b for b in second.messages[-1]["content"] if b["type"] == "tool_result"]
    assert result["content"] == "echo: hi"
    assert [line for line in run.stderr.splitlines() if line.startswith("mcp:")] == [
        "mcp: mcp__trouble__echo waits for server 'trouble' to start (at most 600 s)"
    ]
    events = caretz.events(run.session_id)
    started = [e for e in events if e["type"] == "Mcp.ServerStarted"]
    assert [(e["server"], e["background"]) for e in started] == [("trouble", True)]


def test_a_headless_run_that_needs_no_mcp_tool_ends_while_a_server_is_held(
    caretz: Caretz, server: ModelServer, tmp_path: Path
):
    """The server never starts (its file never appears, and its own limit is ten minutes):
    the run answers and ends all the same, and the server's process ends with it."""
    entry, release, _ = held_server(tmp_path)
    caretz.write_config(profile({"trouble": entry}))
    server.add(text("Hello."))

    run = caretz("-p", "hello")

    assert run.code == 0, run.stderr
    assert run.stdout.strip() == "Hello."
    assert not any(name.startswith("mcp__") for name in offered(server, 0))
    assert [line for line in run.stderr.splitlines() if line.startswith("mcp:")] == []
    types = [e["type"] for e in caretz.events(run.session_id)]
    assert not [kind for kind in types if kind.startswith("Mcp.")]
    # Ended before caretz exits, whether it had written its pid or not.
    assert processes_mentioning(str(release)) == []
