"""A session's MCP servers with real servers and the real SDK: results, failures, limits.

Each test starts real server processes (tests/mcp/servers/trouble.py, mcp-server-time)
or a real HTTP server, through caretz's own start-up path (plan, launcher, manager).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from caretz.mcp_client.config import McpConfig, McpServerEntry
from caretz.mcp_client.plan import Configured, plan_servers
from caretz.mcp_client.servers import McpServers
from caretz.tools.base import ToolContext, ToolResult
from tests.mcp.conftest import (
    STARTUP_ROOM,
    processes_mentioning,
    time_server,
    trouble_server,
)


class Started:
    """Servers started as a session starts them, with the events they emitted."""

    def __init__(self, tmp_path: Path):
        self.tmp_path = tmp_path
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.servers: McpServers | None = None

    def __call__(
        self, entries: dict[str, dict[str, Any]], env: dict[str, str] | None = None, **mcp: Any
    ) -> McpServers:
        config = McpConfig.model_validate({"startupTimeout": STARTUP_ROOM, **mcp})
        configured = [
            Configured(name, McpServerEntry.model_validate(entry), "profiles.json")
            for name, entry in entries.items()
        ]
        specs, not_started = plan_servers(
            configured,
            config,
            approved=lambda server: True,
            env=os.environ if env is None else env,
            project_env={},
            cwd=str(self.tmp_path),
        )
        self.servers = McpServers.start(specs, not_started, config, self.tmp_path / "logs")
        self.servers.emit = lambda record: self.events.append((record.type, record.to_dict()))
        return self.servers

    def call(self, tool_name: str, ctx: ToolContext | None = None, /, **args: Any) -> ToolResult:
        assert self.servers is not None
        tool = next(tool for tool in self.servers.tools if tool.spec.name == tool_name)
        return tool.run(args, ctx or ToolContext(workspace=self.tmp_path))

    def status(self, name: str) -> Any:
        assert self.servers is not None
        return next(status for status in self.servers.statuses() if status.name == name)


@pytest.fixture
def started(tmp_path: Path) -> Iterator[Started]:
    servers = Started(tmp_path)
    yield servers
    if servers.servers is not None:
        servers.servers.close()


def test_the_reference_time_server_lists_its_tools_with_their_schemas(started):
    servers = started({"time": time_server()})

    status = started.status("time")
    assert status.state == "ready"
    assert [tool.name for tool in status.tools] == [
        "mcp__time__get_current_time",
        "mcp__time__convert_time",
    ]
    spec = servers.tools[0].spec
    assert spec.parameters["properties"]["timezone"]["type"] == "string"
    assert spec.parameters["required"] == ["timezone"]
    result = started.call("mcp__time__get_current_time", timezone="Asia/Tokyo")
    assert result.ok and json.loads(result.output)["timezone"] == "Asia/Tokyo"


def test_text_and_structured_content_become_text_and_images_images(started):
    started({"trouble": trouble_server()})

    assert started.call("mcp__trouble__echo", text="hi").output == "echo: hi"
    weather = started.call("mcp__trouble__weather", city="Oslo")
    assert weather.ok and json.loads(weather.output) == {"city": "Oslo", "celsius": 21}
    picture = started.call("mcp__trouble__picture")
    assert picture.ok
    assert picture.output == "a pixel:\n[image: PNG, 1×1, 69 bytes; attached]"
    [pixel] = picture.images
    assert pixel.media_type == "image/png" and (pixel.width, pixel.height) == (1, 1)
    assert pixel.data.startswith(b"\x89PNG") and pixel.source == "mcp__trouble__picture"


def test_a_large_screenshot_is_scaled_down_and_a_bogus_image_is_a_placeholder(started):
    from tests.pictures import decoded

    started({"trouble": trouble_server()})

    shot = started.call("mcp__trouble__screenshot", width=2560, height=1600)
    assert shot.ok and "PNG, 2560×1600" in shot.output and "resized to PNG 1568×980" in shot.output
    assert decoded(shot.images[0].data).size == (1568, 980)
    bogus = started.call("mcp__trouble__bogus_image")
    assert bogus.ok and bogus.images == []
    assert bogus.output == (
        "[image: image/png, 19 bytes; not shown: not a PNG, JPEG, GIF or WebP image "
        "(or its header is broken)]"
    )


def test_a_text_only_model_gets_the_text_and_a_line_instead_of_the_images(started, tmp_path):
    started({"trouble": trouble_server()})
    ctx = ToolContext(workspace=tmp_path, no_images="model openai/o3-mini does not take images")

    picture = started.call("mcp__trouble__picture", ctx)

    assert picture.ok and picture.images == []
    assert picture.output.endswith(
        "[the images were not sent: model openai/o3-mini does not take images]"
    )


def test_an_error_result_is_a_failed_tool_result(started):
    started({"trouble": trouble_server()})

    result = started.call("mcp__trouble__fail", reason="try later")

    assert not result.ok
    assert "the database is locked: try later" in result.output


def test_a_result_over_the_size_cap_is_a_failed_result_that_shows_its_start(started):
    started({"trouble": trouble_server()}, maxResultChars=1000)

    over = started.call("mcp__trouble__huge", chars=5000)
    under = started.call("mcp__trouble__huge", chars=900)

    assert not over.ok
    assert "returned 5,000 characters" in over.output
    assert "(mcp.maxResultChars: 1,000)" in over.output
    assert len(over.output) < 2500
    assert under.ok and under.output == "x" * 900


def test_a_call_that_hangs_times_out_and_the_server_stays_up(started):
    started({"trouble": trouble_server()}, callTimeout="1s")

    began = time.monotonic()
    hung = started.call("mcp__trouble__hang", seconds=60)
    took = time.monotonic() - began

    assert not hung.ok and hung.ended_by == "timeout"
    assert "no answer from MCP server 'trouble' within 1 s (mcp.callTimeout)" in hung.output
    assert took < 5
    assert started.call("mcp__trouble__echo", text="still here").output == "echo: still here"


def test_a_call_stops_when_the_turn_is_cancelled(started, tmp_path):
    started({"trouble": trouble_server()})
    ctx = ToolContext(workspace=tmp_path)
    threading.Timer(0.5, ctx.cancel.set).start()

    result = started.call("mcp__trouble__hang", ctx, seconds=60)

    assert not result.ok and result.ended_by == "cancelled"
    assert result.duration_s < 5


def test_a_server_that_crashes_mid_call_is_marked_down_and_the_rest_goes_on(started):
    started({"trouble": trouble_server(), "time": time_server()})

    crashed = started.call("mcp__trouble__crash")
    again = started.call("mcp__trouble__echo", text="hello?")

    assert not crashed.ok
    assert "MCP server 'trouble' is down" in crashed.output
    assert "trouble: crashing on purpose" in crashed.output  # the last line of its stderr
    assert not again.ok and "is down" in again.output and again.duration_s == 0
    assert started.status("trouble").state == "down"
    assert [fields["server"] for kind, fields in started.events if kind == "Mcp.ServerDown"] == [
        "trouble"
    ]
    assert started.call("mcp__time__get_current_time", timezone="UTC").ok


def test_a_slow_server_misses_the_start_timeout_and_the_others_start(started, tmp_path):
    pid_file = tmp_path / "slow.pid"
    never = tmp_path / "never-created"
    servers = started(
        {
            "slow": trouble_server(
                "--start-when", str(never), "--pid-file", str(pid_file), startup=None
            ),
            "time": time_server(),  # with start-up room of its own
        },
        startupTimeout="1s",
    )

    assert started.status("time").state == "ready"
    slow = started.status("slow")
    assert slow.state == "failed"
    assert slow.detail == (
        "it was not ready within 1 s "
        "(raise mcp.startupTimeout, or mcpServers.slow.startupTimeout for it alone)"
    )
    servers.close()
    # Ended as its start was called off, before `close` returned, whether it had got as
    # far as writing its pid or not: its command line names the file it waits for.
    assert processes_mentioning(str(never)) == [], "the slow server outlived its start"


def test_a_missing_command_fails_to_start_in_one_line(started):
    started({"nope": {"command": "caretz-no-such-server"}})

    status = started.status("nope")

    assert status.state == "failed"
    assert status.detail == "command not found: caretz-no-such-server"


def test_a_server_gets_a_minimal_environment_without_caretz_keys(started):
    env = {
        "PATH": os.environ["PATH"],
        "HOME": "/home/someone",
        "ANTHROPIC_API_KEY": "sk-ant-secret",
        "DATABASE_URL": "postgres://app:hunter2@db/app",
        "TEAM_TOKEN": "tok-passed-on-purpose",
    }
    started({"trouble": trouble_server(env={"GITHUB_TOKEN": "${TEAM_TOKEN}"})}, env=env)

    def seen(name: str) -> str:
        return started.call("mcp__trouble__env", name=name).output

    assert seen("ANTHROPIC_API_KEY") == "(unset)"
    assert seen("DATABASE_URL") == "(unset)"
    assert seen("TEAM_TOKEN") == "(unset)"
    assert seen("GITHUB_TOKEN") == "tok-passed-on-purpose"
    assert seen("HOME") == "/home/someone"


def test_an_unset_variable_keeps_its_server_from_starting(started):
    started({"trouble": trouble_server(env={"KEY": "${CARETZ_TEST_UNSET}"})}, env={})

    status = started.status("trouble")

    assert status.state == "failed"
    assert "mcpServers.trouble.env.KEY uses ${CARETZ_TEST_UNSET}, which is not set" in (
        status.detail
    )


def test_http_servers_with_expanded_headers(http_trouble, started):
    transport, url = http_trouble
    started(
        {"web": {"type": transport, "url": url, "headers": {"X-Team": "${TEAM:-none}"}}},
        env={"TEAM": "blue"},
    )

    assert started.status("web").state == "ready"
    assert started.call("mcp__web__header", name="x-team").output == "blue"
    assert started.call("mcp__web__echo", text="over http").output == "echo: over http"
