"""A call that Ctrl-C stopped after it started gets one form of result, from one place:
`tools/base.py`'s `interrupted_result` (how long it ran, what became of its work, its
output until then). Each tool that can be stopped mid-call gives that form, and no other
code in caretz/ builds an interrupted result by hand (an AST scan)."""

from __future__ import annotations

import ast
import threading
from pathlib import Path
from typing import Any

import pytest

from caretz.mcp_client.config import McpConfig
from caretz.mcp_client.resource_tools import ReadMcpResource
from caretz.mcp_client.servers import ACTED, McpServers
from caretz.mcp_client.tools import McpTool
from caretz.tools.base import ToolContext, ToolInterrupted, ToolResult, interrupted_result
from caretz.web.cache import FetchCache
from caretz.web.fetch_tool import WebFetchTool

ROOT = Path(__file__).resolve().parents[2]
THE_ONE_PLACE = ROOT / "caretz" / "tools" / "base.py"
# The tools that raise ToolInterrupted, each tried below (bash in
# tests/agent/test_honest_outcomes.py, with a real command): a new one joins the list
# with a test of its result.
STOPPABLE = {
    "caretz/tools/bash.py",
    "caretz/web/fetch_tool.py",
    "caretz/mcp_client/servers.py",
    "caretz/mcp_client/resource_tools.py",
}


def stopped(tool: Any, args: dict[str, Any], tmp_path: Path) -> ToolResult:
    with pytest.raises(ToolInterrupted) as caught:
        tool.run(args, ToolContext(workspace=tmp_path))
    return caught.value.result


class InterruptedFetcher:
    """web_fetch's fetcher, stopped by Ctrl-C mid-fetch."""

    def key(self, url: str) -> str:
        return url

    def fetch(self, key: str, workspace: Path, cancel: threading.Event) -> Any:
        raise KeyboardInterrupt


class InterruptedManager:
    """The MCP servers' manager, stopped by Ctrl-C while a server works on a call."""

    def call(self, *args: Any) -> Any:
        raise KeyboardInterrupt


class InterruptedResources:
    """An MCP server's resources, stopped by Ctrl-C while one is read."""

    def read(self, server: str, uri: str, cancel: threading.Event) -> Any:
        raise KeyboardInterrupt


def interrupted_fetch(tmp_path: Path) -> tuple[ToolResult, str]:
    url = "https://docs.example.org/install"
    tool = WebFetchTool(InterruptedFetcher, FetchCache())
    return stopped(tool, {"url": url}, tmp_path), f"{url} was not fetched"


def interrupted_mcp_call(tmp_path: Path) -> tuple[ToolResult, str]:
    servers = McpServers(McpConfig())
    servers.manager = InterruptedManager()  # type: ignore[assignment]
    tool = McpTool("mcp__db__query", "db", "query", "Run a query.", {}, servers)
    return stopped(tool, {}, tmp_path), ACTED


def interrupted_resource_read(tmp_path: Path) -> tuple[ToolResult, str]:
    tool = ReadMcpResource(InterruptedResources())  # type: ignore[arg-type]
    uri = "db://tables/users"
    return stopped(tool, {"server": "db", "uri": uri}, tmp_path), f"{uri} was not read"


@pytest.mark.parametrize(
    "interrupted", [interrupted_fetch, interrupted_mcp_call, interrupted_resource_read]
)
def test_web_fetch_and_the_mcp_tools_give_the_one_interrupted_form(interrupted, tmp_path: Path):
    result, effect = interrupted(tmp_path)
    assert result == interrupted_result(result.duration_s, effect)
    assert not result.ok and result.ended_by == "interrupted"
    assert result.output.startswith("[interrupted by the user after ")


def test_the_form_keeps_the_output_until_then_and_says_how_long_it_ran():
    result = interrupted_result(2.14, "the command was killed", "building…")
    assert (
        result.output == "building…\n[interrupted by the user after 2.1 s; the command was killed]"
    )
    assert (result.ok, result.duration_s, result.ended_by) == (False, 2.14, "interrupted")


def hand_built(tree: ast.AST) -> list[int]:
    """Lines that build an interrupted result themselves: `ended_by="interrupted"` given,
    or the form's own words spelled out (a docstring aside)."""
    docstrings = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "ended_by":
            if isinstance(node.value, ast.Constant) and node.value.value == "interrupted":
                lines.append(node.value.lineno)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and "interrupted by the user after" in node.value.lower()
        ):
            lines.append(node.lineno)
    return lines


def raises_tool_interrupted(tree: ast.AST) -> bool:
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "ToolInterrupted"
        for node in ast.walk(tree)
    )


def test_no_code_outside_tools_base_builds_an_interrupted_result():
    trees = {
        path.relative_to(ROOT).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted((ROOT / "caretz").rglob("*.py"))
    }
    found = {
        name: lines
        for name, tree in trees.items()
        if name != "caretz/tools/base.py" and (lines := hand_built(tree))
    }
    assert found == {}, f"build it with caretz.tools.base.interrupted_result: {found}"
    assert hand_built(trees["caretz/tools/base.py"])  # the scan sees the one place
    stoppable = {name for name, tree in trees.items() if raises_tool_interrupted(tree)}
    assert stoppable == STOPPABLE, "a tool Ctrl-C can stop gets a test of its result here"


def test_the_scan_finds_a_result_built_by_hand():
    by_hand = """
ToolResult(ok=False, output="[interrupted by the user]", ended_by="interrupted")
text = f"[interrupted by the user after {seconds:.1f} s]"
"""
    assert hand_built(ast.parse(by_hand)) == [2, 3]
