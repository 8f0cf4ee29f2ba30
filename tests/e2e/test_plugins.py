"""Claude Code plugins end to end through the real CLI: a plugin folder as Claude Code
lays it out (unchanged), installed from a local git repository (file:// URL), a plain
path and a local marketplace (`name@marketplace`); its command, agent, skill, hook and
MCP server each working through the loopback model server, the hook and the server
waiting for approval first; list and remove; a broken plugin.json in one line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.checkpoints.helpers import git
from tests.modelserver import RecordedRequest, calls, text, tool

SERVER = """\
from mcp.server.mcpserver import MCPServer

server = MCPServer("echo")


@server.tool()
def echo(text: str) -> str:
    \"\"\"Send the text back.\"\"\"
    return f"plugin echo: {text}"


server.run("stdio")
"""
HOOK = (
    "#!/bin/sh\n"
    'echo "plugin hook saw $(head -c 200) in $CLAUDE_PLUGIN_ROOT" >> "$CARETZ_PROJECT_DIR/hook.ran"\n'
)
MCP_TOOL = "mcp__plugin_demo_echo__echo"


def write(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    return path


def a_plugin(folder: Path, name: str = "demo") -> Path:
    """A plugin as Claude Code's docs lay one out, committed in a git repository."""
    manifest = {
        "name": name,
        "version": "1.2.0",
        "description": "Greets, reviews, shouts",
        "author": {"name": "Ann Example", "email": "ann@example.com"},
        "keywords": ["demo"],
    }
    write(folder / ".claude-plugin" / "plugin.json", json.dumps(manifest))
    write(
        folder / "commands" / "greet.md",
        "---\ndescription: Greet someone\nargument-hint: NAME\n---\nGreet $ARGUMENTS warmly.\n",
    )
    write(
        folder / "agents" / "reviewer.md",
        "---\nname: reviewer\ndescription: Reviews code changes\ntools: Read, Grep\n"
        "color: green\n---\nYou review code for the demo plugin.\n",
    )
    write(
        folder / "skills" / "shout" / "SKILL.md",
        "---\nname: shout\ndescription: Shout the answer\n---\nSHOUT EVERY ANSWER.\n",
    )
    hook = {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/mark.sh"}
    hooks = {"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}
    write(folder / "hooks" / "hooks.json", json.dumps(hooks))
    write(folder / "scripts" / "mark.sh", HOOK).chmod(0o755)
    write(folder / "server.py", SERVER)
    server = {
        "command": sys.executable,
        "args": ["${CLAUDE_PLUGIN_ROOT}/server.py"],
        "startupTimeout": "10m",
    }
    write(folder / ".mcp.json", json.dumps({"mcpServers": {"echo": server}}))
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "the plugin")
    return folder


def results(request: RecordedRequest) -> str:
    """The tool results the request sends back, as one text."""
    return json.dumps(request.messages[-1]["content"])


def test_a_plugin_from_a_git_url_brings_its_parts_and_its_hook_and_server_wait_for_approval(
    caretz, server, workspace, tmp_path
):
    plugin = a_plugin(tmp_path / "demo-plugin")

    installed = caretz("plugin", "install", f"file://{plugin}")

    assert installed.code == 0, installed.stderr
    assert "installed demo 1.2.0" in installed.stdout
    copy = caretz.data_dir / "plugins" / "installed" / "demo"
    assert (copy / "scripts" / "mark.sh").stat().st_mode & 0o100  # still executable
    assert not (copy / ".git").exists()
    (plugin / "commands" / "greet.md").write_text("changed after install\n")  # a copy is used

    # Not approved: its hook does not run and its server does not start.
    server.add(tool("bash", command="echo before"), text("Hello."))
    before = caretz("-p", "hello")

    assert before.code == 0, before.stderr
    assert "the hooks of plugin demo" in before.stderr
    waiting = "hooks: plugin demo has hooks; they do not run until you approve them: caretz trust"
    assert waiting in before.stderr
    assert "MCP server plugin:demo:echo" in before.stderr
    assert MCP_TOOL not in server.requests[0].tool_names
    assert not (workspace / "hook.ran").exists()

    approved = caretz("trust", "--yes")
    assert approved.code == 0, approved.stderr
    assert "plugin demo: hooks/hooks.json" in approved.stdout
    server.requests.clear()
    server.add(
        tool(
            "bash",
            command=f"echo from-bash; ls {caretz.data_dir}/plugins; touch {copy}/planted || true",
        ),
        tool(MCP_TOOL, text="ping"),
        calls(("skill", {"name": "demo:shout"})),
        tool("task", subagent_type="demo:reviewer", prompt="review the change"),
        text("Looks good."),  # the reviewer's answer
        text("All done."),
    )

    run = caretz("-p", "/demo:greet World", "--allowedTools", "mcp__plugin_demo_echo")

    assert run.code == 0, run.stderr
    assert "All done." in run.stdout
    first, after_bash, after_mcp, after_skill, reviewer = server.requests[:5]
    assert "Greet World warmly." in json.dumps(first.messages[-1])
    assert "from-bash" in results(after_bash)
    assert "state.json" not in results(after_bash)  # the rest of the data dir stays hidden
    assert not (copy / "planted").exists()  # the installed copy is read-only to commands
    ran = (workspace / "hook.ran").read_text()
    assert "plugin hook saw" in ran and ran.rstrip().endswith(f"in {copy}")
    assert "plugin echo: ping" in results(after_mcp)
    assert "SHOUT EVERY ANSWER." in results(after_skill)
    assert "You review code for the demo plugin." in reviewer.system
    assert sorted(reviewer.tool_names) == ["grep", "read"]


def listed(caretz: Any) -> list[dict[str, Any]]:
    run = caretz("plugin", "list", "--output", "json")
    assert run.code == 0, run.stderr
    return json.loads(run.stdout)["plugins"]


def test_a_plugin_from_a_path_and_from_a_marketplace_listed_and_removed(caretz, tmp_path):
    market = tmp_path / "market"
    a_plugin(market / "plugins" / "demo")
    a_plugin(tmp_path / "other", name="other")
    entries = [{"name": "demo", "source": "./plugins/demo", "description": "The demo"}]
    catalog = {"name": "team-tools", "owner": {"name": "Team"}, "plugins": entries}
    (market / "plugins" / "keys").symlink_to(tmp_path / "other")  # out of the marketplace
    entries.append({"name": "keys", "source": "./plugins/keys"})
    write(market / ".claude-plugin" / "marketplace.json", json.dumps(catalog))
    assert caretz("plugin", "install", str(tmp_path / "other")).code == 0
    unknown = caretz("plugin", "install", "demo@team-tools")
    assert unknown.code == 2
    assert "no marketplace named 'team-tools'" in unknown.stderr
    added = caretz("plugin", "marketplace", "add", str(market))
    assert added.code == 0, added.stderr
    assert "added marketplace team-tools (2 plugins)" in added.stdout
    assert "demo@team-tools  The demo" in caretz("plugin", "marketplace", "list").stdout

    installed = caretz("plugin", "install", "demo@team-tools")
    escaping = caretz("plugin", "install", "keys@team-tools")

    assert installed.code == 0, installed.stderr
    assert escaping.code == 2 and "'./plugins/keys' leads out of the marketplace" in escaping.stderr
    rows = {row["name"]: row for row in listed(caretz)}
    assert rows["demo"]["marketplace"] == "team-tools" and rows["demo"]["enabled"]
    assert rows["other"]["source"] == str(tmp_path / "other")
    assert rows["demo"]["parts"] == {
        "commands": 1,
        "agents": 1,
        "skills": 1,
        "hook events": 1,
        "MCP servers": 1,
    }
    assert caretz("plugin", "disable", "other").code == 0
    skills = caretz("skills", "list", "--output", "json")
    assert [s["name"] for s in json.loads(skills.stdout)["skills"]] == ["demo:shout"]

    assert caretz("plugin", "remove", "demo").code == 0
    assert [row["name"] for row in listed(caretz)] == ["other"]
    assert not (caretz.data_dir / "plugins" / "installed" / "demo").exists()
    assert caretz("plugin", "remove", "demo").code == 2
    assert caretz("plugin", "marketplace", "remove", "team-tools").code == 0
    assert "no marketplaces" in caretz("plugin", "marketplace", "list").stdout


def test_a_broken_plugin_is_one_line_naming_its_file_and_nothing_is_installed(caretz, tmp_path):
    broken = a_plugin(tmp_path / "broken")
    (broken / ".claude-plugin" / "plugin.json").write_text('{"name": "broken",')
    off = a_plugin(tmp_path / "off", name="off")
    hook = {"type": "command", "command": "true", "sandbox": "off"}
    hooks = {"hooks": {"Stop": [{"hooks": [hook]}]}}
    (off / "hooks" / "hooks.json").write_text(json.dumps(hooks))

    bad_json = caretz("plugin", "install", str(broken))
    outside = caretz("plugin", "install", str(off))

    assert bad_json.code == 2
    manifest = broken / ".claude-plugin" / "plugin.json"
    assert bad_json.stderr.startswith(f"caretz: {manifest}: not valid JSON")
    assert len(bad_json.stderr.splitlines()) == 1
    assert outside.code == 2
    assert outside.stderr.startswith(f"caretz: {off / 'hooks' / 'hooks.json'}: ")
    assert "always run in the sandbox" in outside.stderr
    assert listed(caretz) == []
