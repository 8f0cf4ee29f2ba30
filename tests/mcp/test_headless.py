"""MCP servers through the real CLI (`caretz -p`), the loopback model server and real
MCP servers: the reference `mcp-server-time`, and tests/mcp/servers/trouble.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Caretz
from tests.e2e.hook_scripts import hooks_entry, project_settings, write_hook
from tests.importtime import modules_imported_by_a_run
from tests.mcp.conftest import (
    BOUND_S,
    STARTUP_ROOM,
    processes_mentioning,
    time_server,
    trouble_server,
    wait_for_file,
    wait_gone,
)
from tests.modelserver import ModelServer, RecordedRequest, calls, text, tool

JUDGE = "judge-model"


def profile(
    servers: dict[str, Any],
    allow: list[str] | None = None,
    deny: list[str] | None = None,
    **mcp: Any,
) -> dict[str, Any]:
    # Every server may take as long as a busy machine needs, unless a test sets the limit.
    general: dict[str, Any] = {
        "mcpServers": servers,
        "mcp": {"startupTimeout": STARTUP_ROOM, **mcp},
    }
    general["permissions"] = {"allow": allow or [], "deny": deny or []}
    return {"profiles": {"general": general}}


def tool_result(request: RecordedRequest) -> dict[str, Any]:
    """The one tool result the model was sent in its last user message."""
    [block] = [b for b in request.messages[-1]["content"] if b.get("type") == "tool_result"]
    return block


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def mcp_lines(stderr: str) -> list[str]:
    """The run's `mcp:` lines, but for a call's wait for its server to start: `-p` does not
    wait for its servers, so whether a call of a tool in the first reply waits depends on
    the machine's speed."""
    lines = [line for line in stderr.splitlines() if line.startswith("mcp:")]
    return [line for line in lines if " waits for server " not in line]


def test_the_model_calls_the_time_server_and_the_result_arrives_in_the_next_request(
    caretz: Caretz, server: ModelServer
):
    caretz.write_config(profile({"time": time_server()}, allow=["mcp__time__get_current_time"]))
    server.add(tool("mcp__time__get_current_time", timezone="Europe/Paris"), text("Evening."))

    run = caretz("-p", "what time is it in Paris?")

    assert run.code == 0, run.stderr
    _, second = server.requests  # the first went out without waiting for the server
    offered = {spec["name"]: spec for spec in second.body["tools"]}
    schema = offered["mcp__time__get_current_time"]["input_schema"]
    assert schema["properties"]["timezone"]["type"] == "string"
    assert "mcp__time__convert_time" in offered
    block = tool_result(second)
    assert not block.get("is_error")
    assert json.loads(result_text(block))["timezone"] == "Europe/Paris"
    started = [e for e in caretz.events(run.session_id) if e["type"] == "Mcp.ServerStarted"]
    assert started[0]["server"] == "time" and len(started[0]["tools"]) == 2
    assert mcp_lines(run.stderr) == []


def test_a_headless_run_denies_an_mcp_call_no_rule_allows(caretz: Caretz, server: ModelServer):
    caretz.write_config(profile({"time": time_server()}))
    server.add(tool("mcp__time__get_current_time", timezone="UTC"), text("I could not."))

    run = caretz("-p", "what time is it?", "--output", "json")

    assert run.code == 0, run.stderr
    said = result_text(tool_result(server.requests[1]))
    assert said.startswith("caretz did not run this mcp__time__get_current_time call")
    assert "mcp__time__get_current_time runs outside the sandbox" in said
    assert 'add mcp__time__get_current_time to "permissions.allow"' in said
    result = json.loads(run.stdout.splitlines()[-1])
    assert [d["tool"] for d in result["permission_denials"]] == ["mcp__time__get_current_time"]


@pytest.mark.parametrize(
    ("rules", "mode", "refusal"),
    [
        ({"deny": ["mcp__time__*"]}, "yolo", "denied by the deny rule"),
        ({"allow": ["mcp__time"]}, "read-only", "read-only mode: mcp__time__get_current_time"),
    ],
)
def test_a_deny_rule_and_read_only_mode_refuse_an_mcp_call(
    caretz: Caretz, server: ModelServer, workspace: Path, rules, mode: str, refusal: str
):
    caretz.write_config(profile({"time": time_server()}))
    (workspace / ".caretz").mkdir()
    (workspace / ".caretz" / "settings.json").write_text(json.dumps({"permissions": rules}))
    server.add(tool("mcp__time__get_current_time", timezone="UTC"), text("Refused."))

    run = caretz("-p", "what time is it?", "--permission-mode", mode)

    assert run.code == 0, run.stderr
    block = tool_result(server.requests[1])
    assert block["is_error"] is True
    assert refusal in result_text(block)


def test_a_server_that_crashes_mid_call_is_down_and_the_session_goes_on(
    caretz: Caretz, server: ModelServer, tmp_path: Path
):
    pid_file = tmp_path / "trouble.pid"
    servers = {"trouble": trouble_server("--pid-file", str(pid_file))}
    caretz.write_config(profile(servers, allow=["mcp__trouble__*"]))
    server.add(tool("mcp__trouble__crash"), tool("mcp__trouble__echo", text="x"), text("Noted."))

    run = caretz("-p", "use the trouble server")

    assert run.code == 0, run.stderr
    crashed, again = tool_result(server.requests[1]), tool_result(server.requests[2])
    assert crashed["is_error"] and "MCP server 'trouble' is down" in result_text(crashed)
    assert again["is_error"] and "is down" in result_text(again)
    [line] = mcp_lines(run.stderr)
    assert line.startswith("mcp: server 'trouble' is down: its connection closed")
    down = [e for e in caretz.events(run.session_id) if e["type"] == "Mcp.ServerDown"]
    assert "crashing on purpose" in down[0]["reason"]
    shown = caretz("sessions", "show", run.session_id).stdout
    assert "mcp: server 'trouble' ready (" in shown
    assert "its 12 tools join the conversation" in shown
    assert line in shown
    assert wait_gone(int(pid_file.read_text()))


def test_an_error_result_is_a_failure_the_loop_guard_fingerprints(
    caretz: Caretz, server: ModelServer
):
    caretz.write_config(profile({"trouble": trouble_server()}, allow=["mcp__trouble__fail"]))
    server.add(*[tool("mcp__trouble__fail", reason="retry") for _ in range(3)], text("Locked."))
    server.add(text(json.dumps({"stuck": False, "confidence": 0.1, "reason": "-"})), model=JUDGE)

    run = caretz(
        "-p", "read the table", "--loop-guard", "shadow", "--loop-guard-model", f"anthropic/{JUDGE}"
    )

    assert run.code == 0, run.stderr
    assert all(tool_result(r)["is_error"] for r in server.requests_for("claude-test")[1:])
    fired = [e for e in caretz.events(run.session_id) if e["type"] == "LoopGuard.Fired"]
    assert fired, "the repeated failure never reached the loop guard"
    assert fired[0]["fingerprint"].startswith("Mcp__trouble__fail: ")
    assert "the database is locked: retry" in fired[0]["fingerprint"]


@pytest.mark.parametrize(
    ("own", "mcp", "give"),
    [
        ("1s", {}, "raise mcpServers.slow.startupTimeout"),
        (
            None,
            {"startupTimeout": "1s"},
            "raise mcp.startupTimeout, or mcpServers.slow.startupTimeout for it alone",
        ),
    ],
    ids=["its own limit", "every server's limit"],
)
def test_a_server_past_its_start_limit_is_one_line_and_a_call_of_its_tool_fails_saying_so(
    caretz: Caretz, server: ModelServer, tmp_path: Path, own, mcp, give: str
):
    never = tmp_path / "never-created"  # the slow server waits for it: it never starts
    slow = trouble_server("--start-when", str(never), startup=own)
    caretz.write_config(profile({"slow": slow}, allow=["mcp__slow__echo"], **mcp))
    server.add(calls(("mcp__slow__echo", {"text": "hi"})), text("It did not start."))

    run = caretz("-p", "use mcp__slow__echo")

    assert run.code == 0, run.stderr
    reason = f"it was not ready within 1 s ({give})"
    assert mcp_lines(run.stderr) == [
        f"mcp: server 'slow' did not start: {reason}; going on without it"
    ]
    block = tool_result(server.requests[1])
    assert block["is_error"] is True
    assert result_text(block) == (
        f"MCP server 'slow' did not start: {reason}; mcp__slow__echo cannot run"
    )
    assert not any(name.startswith("mcp__") for name in server.requests[1].tool_names)
    failed = [e for e in caretz.events(run.session_id) if e["type"] == "Mcp.ServerFailed"]
    assert [e["server"] for e in failed] == ["slow"]
    assert processes_mentioning(str(never)) == []  # ended with its start, whatever it had done


def test_a_project_mcp_json_server_starts_once_approved_with_its_variables_expanded(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    entry = trouble_server(env={"SEEN": "${CARETZ_TEST_TEAM}", "OTHER": "${NOT_SET:-fallback}"})
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"trouble": entry}}))
    caretz.write_config(profile({}, allow=["mcp__trouble__env"]))
    team = {"CARETZ_TEST_TEAM": "blue"}
    server.add(text("No tools."))

    before = caretz("-p", "hello", env=team)

    assert before.code == 0, before.stderr
    assert mcp_lines(before.stderr) == [
        "mcp: server 'trouble' of .mcp.json runs outside the sandbox and is not started until "
        "you approve it: /mcp approve trouble, or caretz mcp approve trouble"
    ]
    assert not any(s["name"].startswith("mcp__") for s in server.requests[0].body["tools"])

    approved = caretz("mcp", "approve")
    assert approved.code == 0, approved.stderr
    assert approved.stdout.startswith("approved trouble: ")
    server.add(
        calls(("mcp__trouble__env", {"name": "SEEN"})),
        calls(("mcp__trouble__env", {"name": "OTHER"})),
        text("ok"),
    )
    after = caretz("-p", "what is SEEN?", env=team)

    assert after.code == 0, after.stderr
    assert result_text(tool_result(server.requests[2])) == "blue"
    assert result_text(tool_result(server.requests[3])) == "fallback"


def test_a_changed_mcp_json_entry_needs_approval_again(caretz: Caretz, workspace: Path):
    path = workspace / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {"time": time_server()}}))
    assert caretz("mcp", "approve", "time").code == 0
    changed = {**time_server(), "args": ["-m", "mcp_server_time", "--local-timezone", "Asia/Tokyo"]}
    path.write_text(json.dumps({"mcpServers": {"time": changed}}))

    listed = caretz("mcp", "list", "--output", "json")

    [status] = json.loads(listed.stdout)["servers"]
    assert status["status"] == "not approved"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"mcpServers": {"db": {"args": ["serve"]}}}', "mcpServers.db: a stdio server needs a command"),
        ('{"mcpServers": {"db": {"command": "db", "args": "serve"}}}', 'mcpServers.db.args: expected a list, not "serve"'),
        ('{"mcpServers": {"db": {"type": "http"}}}', "mcpServers.db: an http server needs a url"),
        ('{"mcpServers": {"db": {"command": "db",}}}', "not valid JSON: Expecting property name"),
    ],
)  # fmt: skip
def test_a_malformed_mcp_json_is_one_line_and_exit_2(
    caretz: Caretz, server: ModelServer, workspace: Path, content: str, problem: str
):
    (workspace / ".mcp.json").write_text(content)

    run = caretz("-p", "hello")

    assert run.code == 2
    [line] = run.stderr.splitlines()
    assert line.startswith(f"caretz: {workspace / '.mcp.json'}: {problem}")
    assert server.requests == []


def _caretz_calling_hang(
    caretz: Caretz, server: ModelServer, tmp_path: Path, stderr: Any
) -> subprocess.Popen[str]:
    servers = {"trouble": trouble_server("--pid-file", str(tmp_path / "trouble.pid"))}
    caretz.write_config(profile(servers, allow=["mcp__trouble__hang"]))
    server.add(tool("mcp__trouble__hang", seconds=120, mark=str(tmp_path / "hanging")))
    server.add(text("done"))
    return subprocess.Popen(
        [sys.executable, "-m", "caretz", "-p", "wait"],
        cwd=caretz.workspace,
        env=caretz.environment({"PYTHONFAULTHANDLER": "1"}),
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        text=True,
    )


@pytest.mark.parametrize("how", ["SIGTERM", "kill -9"])
def test_no_server_process_outlives_caretz_killed_mid_call(
    caretz: Caretz, server: ModelServer, tmp_path: Path, how: str
):
    log = tmp_path / "stderr.txt"
    with log.open("w") as stderr:
        process = _caretz_calling_hang(caretz, server, tmp_path, stderr)
    try:
        pid = int(wait_for_file(tmp_path / "trouble.pid"))
        wait_for_file(tmp_path / "hanging")  # the server is in the middle of the call
        os.kill(process.pid, signal.SIGTERM if how == "SIGTERM" else signal.SIGKILL)
        try:
            code = process.wait(timeout=BOUND_S)
        except subprocess.TimeoutExpired:  # show where it hangs (PYTHONFAULTHANDLER)
            os.kill(process.pid, signal.SIGABRT)
            process.wait(5)
            raise AssertionError(f"caretz did not end:\n{log.read_text()}") from None
    finally:
        if process.poll() is None:
            process.kill()
    assert code == (143 if how == "SIGTERM" else -9), log.read_text()
    assert wait_gone(pid), f"the MCP server outlived caretz ({how})"


def test_a_session_without_servers_never_imports_the_sdk(caretz: Caretz, server: ModelServer):
    def loaded(*replies: Any) -> set[str]:
        server.add(*replies, text("hi"))
        return modules_imported_by_a_run(caretz.workspace, caretz.environment())

    without = loaded()
    caretz.write_config(profile({"time": time_server()}))
    # The call waits for the server (the run does not otherwise), so the SDK has loaded.
    with_server = loaded(tool("mcp__time__get_current_time", timezone="UTC"))

    assert not {name for name in without if name == "mcp" or name.startswith("mcp.")}
    assert "caretz.mcp_client.connection" not in without
    assert "mcp.client.stdio" in with_server


def test_mcp_list_shows_each_server_its_status_and_its_tools(caretz: Caretz):
    caretz.write_config(
        profile({"time": time_server(), "gone": {"command": "caretz-no-such-server"}})
    )

    listed = caretz("mcp", "list")
    as_json = caretz("mcp", "list", "--output", "json")

    assert listed.code == 1 and as_json.code == 1  # a server failed to start
    lines = listed.stdout.splitlines()
    assert lines[0].startswith("time  ready · stdio · ")
    assert lines[1].startswith("  mcp__time__get_current_time  Get current time")
    assert "gone  failed · stdio · caretz-no-such-server" in listed.stdout
    assert "  command not found: caretz-no-such-server" in lines
    servers = {s["name"]: s for s in json.loads(as_json.stdout)["servers"]}
    assert [t["tool"] for t in servers["time"]["tools"]] == ["get_current_time", "convert_time"]
    assert servers["gone"]["status"] == "failed"


def test_a_remote_server_over_http_serves_the_model(
    http_trouble: tuple[str, str], caretz: Caretz, server: ModelServer
):
    transport, url = http_trouble
    web = {"type": transport, "url": url, "headers": {"X-Team": "${CARETZ_TEST_TEAM}"}}
    caretz.write_config(profile({"web": web}, allow=["mcp__web__header"]))
    server.add(calls(("mcp__web__header", {"name": "x-team"})), text("Blue team."))

    run = caretz("-p", "which team?", env={"CARETZ_TEST_TEAM": "blue"})

    assert run.code == 0, run.stderr
    assert result_text(tool_result(server.requests[1])) == "blue"


# Blocks the time server's calls for Tokyo (exit 2, the reason on stderr) and logs the rest.
NO_TOKYO = """
import json, os, sys
event = json.load(sys.stdin)
with open(os.path.join(os.environ["CARETZ_PROJECT_DIR"], "mcp-hook.jsonl"), "a") as log:
    log.write(json.dumps(event) + "\\n")
if event["tool_input"].get("timezone") == "Asia/Tokyo":
    print("Tokyo is off limits in this project", file=sys.stderr)
    sys.exit(2)
"""


def test_a_pre_tool_use_hook_matches_mcp_tools_and_blocks_one_call(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    command = write_hook(workspace, "no_tokyo", NO_TOKYO)
    project_settings(workspace, {"hooks": {"PreToolUse": [hooks_entry(command, "mcp__time__.*")]}})
    caretz.write_config(profile({"time": time_server()}, allow=["mcp__time__*"]))
    server.add(tool("mcp__time__get_current_time", timezone="Asia/Tokyo"))
    server.add(tool("mcp__time__get_current_time", timezone="Europe/Paris"))
    server.add(text("Paris only."))

    run = caretz("-p", "what time is it in Tokyo and Paris?")

    assert run.code == 0, run.stderr
    blocked = result_text(tool_result(server.requests[1]))
    assert "Tokyo is off limits in this project" in blocked
    answered = tool_result(server.requests[2])
    assert not answered.get("is_error")
    assert json.loads(result_text(answered))["timezone"] == "Europe/Paris"
    seen = [json.loads(line) for line in (workspace / "mcp-hook.jsonl").read_text().splitlines()]
    assert [event["tool_name"] for event in seen] == ["mcp__time__get_current_time"] * 2


def test_read_only_calls_of_one_reply_run_at_the_same_time(caretz: Caretz, server: ModelServer):
    """`meet` (readOnlyHint) answers only once both calls are in the server: a barrier.
    Run one after the other, the first would wait alone. Results come back in order. The
    first reply's call waits for the server, so the second's calls are of known tools."""
    allow = ["mcp__trouble__meet", "mcp__trouble__echo"]
    caretz.write_config(profile({"trouble": trouble_server()}, allow=allow))
    (caretz.workspace / "a.txt").write_text("first file\n")
    server.add(
        calls(("mcp__trouble__echo", {"text": "ready?"})),
        calls(
            ("mcp__trouble__meet", {"parties": 3}),
            ("read", {"path": "a.txt"}),
            ("mcp__trouble__meet", {"parties": 3}),
            ("mcp__trouble__meet", {"parties": 3}),
        ),
        text("done"),
    )

    run = caretz("-p", "meet", "--loop-guard", "off")

    assert run.code == 0, run.stderr
    events = [e for e in caretz.events(run.session_id) if e["type"].startswith("Tool.")][2:]
    assert [e["type"] for e in events] == ["Tool.Called"] * 4 + ["Tool.Result"] * 4
    outputs = [e["output"] for e in events if e["type"] == "Tool.Result"]
    assert outputs == [
        "together: 3 calls arrived",
        "     1\tfirst file",
        "together: 3 calls arrived",
        "together: 3 calls arrived",
    ]
    sent = [b for b in server.requests[2].messages[-1]["content"] if b.get("type") == "tool_result"]
    assert [result_text(b) for b in sent] == outputs
