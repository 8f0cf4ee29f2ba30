"""MCP configuration: entries, `${VAR}` expansion, tool names, approvals, rules, and how the
profile and `.mcp.json` are read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from caretz.config.mcp_servers import project_servers
from caretz.config.settings import resolve_settings
from caretz.config.show import show_settings
from caretz.config_base import ConfigError
from caretz.mcp_client.approvals import Approvals
from caretz.mcp_client.config import McpServerEntry
from caretz.mcp_client.expand import MissingVariable, expand
from caretz.mcp_client.names import MAX_TOOL_NAME, server_part, tool_name, unique_tool_names
from caretz.mcp_client.tools import McpTool
from caretz.messages import ToolCall
from caretz.permissions.policy import RuleSet
from caretz.permissions.proposals import propose_rules
from caretz.permissions.rules import parse_rule
from caretz.tools.base import ToolContext, ToolResult
from caretz.tools.registry import ToolRegistry, default_tools


def test_expansion_takes_braced_variables_and_defaults():
    env = {"HOST": "db.local", "EMPTY": ""}
    assert expand("${HOST}:5432", env, "x") == "db.local:5432"
    assert expand("${PORT:-5432}", env, "x") == "5432"
    assert expand("${EMPTY:-fallback}", env, "x") == "fallback"
    assert expand("$HOST and $$ stay", env, "x") == "$HOST and $$ stay"
    with pytest.raises(MissingVariable, match=r"mcpServers.db.args\[0\] uses \$\{TOKEN\}"):
        expand("--token=${TOKEN}", env, "mcpServers.db.args[0]")


def test_tool_names_are_what_both_wire_protocols_accept():
    assert tool_name("time", "get_current_time") == "mcp__time__get_current_time"
    assert tool_name("my.server v2", "list files") == "mcp__my_server_v2__list_files"
    assert server_part("git__hub") == "git_hub"  # the `__` after the server always ends it
    long = tool_name("a-very-long-server-name", "and_an_even_longer_tool_name_" * 3)
    assert len(long) == MAX_TOOL_NAME and long.startswith("mcp__a-very-long-server-name__")
    names = unique_tool_names("s", ["a.b", "a_b"])
    assert names["a.b"] == "mcp__s__a_b" and names["a_b"] != names["a.b"]


@pytest.mark.parametrize("text", ["mcp__git-hub__create_issue", "mcp__git-hub__*", "mcp__git-hub"])
def test_rules_name_a_hyphenated_server_and_its_tools(text: str, tmp_path: Path):
    rules = RuleSet([parse_rule(text, "allow", "test")], tmp_path)
    decision = rules.check("mcp__git-hub__create_issue", {"title": "x"}, tmp_path)
    assert decision.outcome == "allow"
    assert rules.check("mcp__git-hubx__create_issue", {}, tmp_path).outcome != "allow"


def test_yes_always_proposes_the_one_mcp_tool(tmp_path: Path):
    proposal = propose_rules(
        "mcp__time__get_current_time", {"timezone": "UTC"}, tmp_path, RuleSet([], tmp_path)
    )
    assert proposal.rules == ("mcp__time__get_current_time",) and proposal.unsavable is None


def test_an_approval_holds_for_the_entry_as_it_was_approved(tmp_path: Path):
    approvals = Approvals(tmp_path / "data")
    entry = McpServerEntry(command="npx", args=["server"])
    approvals.approve(tmp_path, {"db": entry})

    assert approvals.approved(tmp_path, "db", entry)
    assert not approvals.approved(tmp_path, "db", McpServerEntry(command="npx", args=["other"]))
    assert not approvals.approved(tmp_path / "elsewhere", "db", entry)
    assert not approvals.approved(tmp_path, "web", entry)


def test_mcp_json_keeps_other_tools_keys_and_reads_types(tmp_path: Path):
    (tmp_path / ".mcp.json").write_text(
        json.dumps({
            "mcpServers": {
                "local": {"type": "stdio", "command": "srv", "alwaysAllow": ["x"]},
                "remote": {"url": "https://mcp.example.com/mcp", "headers": {"A": "b"}},
                "legacy": {"type": "sse", "url": "https://old.example.com/sse"},
            },
            "someOtherTool": {"setting": True},
        })
    )  # fmt: skip

    servers = {server.name: server for server in project_servers(tmp_path)}

    assert [s.entry.transport for s in servers.values()] == ["stdio", "http", "sse"]
    assert all(server.project and server.source == ".mcp.json" for server in servers.values())


def test_profile_entries_are_strict(tmp_path: Path):
    config = tmp_path / "profiles.json"
    config.write_text(
        json.dumps({"profiles": {"general": {"mcpServers": {"db": {"comand": "srv"}}}}})
    )
    with pytest.raises(
        ConfigError, match=r"mcpServers.db.comand: unknown key \(did you mean 'command'"
    ):
        resolve_settings({"config": config}, {"ANTHROPIC_API_KEY": "k"})


def test_config_show_names_a_servers_env_and_headers_without_their_values(tmp_path: Path):
    config = tmp_path / "profiles.json"
    config.write_text(json.dumps({"profiles": {"general": {"mcpServers": {
        "db": {"command": "srv", "env": {"DB_TOKEN": "secret-1"}},
        "web": {"url": "https://x.example/mcp", "headers": {"Authorization": "Bearer s-2"}},
    }}}}))  # fmt: skip
    settings = resolve_settings({"config": config}, {"ANTHROPIC_API_KEY": "k"})

    shown = json.dumps(show_settings(settings, {}))

    assert "secret-1" not in shown and "s-2" not in shown
    servers = show_settings(settings, {})["mcpServers"]
    assert servers["db"]["env"] == ["DB_TOKEN"] and servers["web"]["headers"] == ["Authorization"]


class _Answers:
    def call_tool(self, tool: McpTool, args: dict, ctx: ToolContext) -> ToolResult:
        return ToolResult(ok=True, output=f"{tool.remote} ran")


def test_a_subagents_registry_keeps_the_mcp_tools_and_the_checks(tmp_path: Path):
    seen: list[str] = []

    def check(call: ToolCall, ctx: ToolContext) -> None:
        seen.append(call.name)

    mcp = McpTool("mcp__s__t", "s", "t", "does t", {"type": "object"}, _Answers())
    registry = ToolRegistry([*default_tools(), mcp], before_call=[check])

    child = registry.fresh()
    result = child.run(
        ToolCall(id="1", name="mcp__s__t", arguments={}), ToolContext(workspace=tmp_path)
    )

    assert child.names() == registry.names()
    assert result.ok and result.output == "t ran" and seen == ["mcp__s__t"]
    assert child.effect_of("mcp__s__t") == "external"
