"""A project's hooks approval (caretz/hooks/approvals.py) and the store it shares with the
MCP servers' (caretz/approvals.py): real files in a tmp data dir."""

from __future__ import annotations

import json
from pathlib import Path

from caretz.approvals import ApprovalStore, digest
from caretz.hooks.approvals import HookApprovals
from caretz.mcp_client.approvals import Approvals
from caretz.mcp_client.config import McpServerEntry

SECTION = {"SessionStart": [{"hooks": [{"type": "command", "command": "./start.sh"}]}]}


def test_an_approval_holds_for_the_section_as_approved_in_that_project_only(tmp_path: Path):
    approvals = HookApprovals(tmp_path / "data")
    project = tmp_path / "project"
    assert not approvals.approved(project, SECTION)

    approvals.approve(project, SECTION)

    assert approvals.approved(project, json.loads(json.dumps(SECTION)))
    assert not approvals.approved(tmp_path / "elsewhere", SECTION)
    changed = {"SessionStart": [{"hooks": [{"type": "command", "command": "./other.sh"}]}]}
    assert not approvals.approved(project, changed)


def test_hook_and_server_approvals_share_the_store_but_not_the_file(tmp_path: Path):
    data = tmp_path / "data"
    HookApprovals(data).approve(tmp_path, SECTION)
    Approvals(data).approve(tmp_path, {"db": McpServerEntry(command="srv")})

    hooks = json.loads((data / "hook-approvals.json").read_text())
    servers = json.loads((data / "mcp-approvals.json").read_text())
    assert hooks == {str(tmp_path): {"hooks": digest(SECTION)}}
    assert list(servers[str(tmp_path)]) == ["db"]


def test_the_digest_ignores_key_order_and_an_unreadable_store_approves_nothing(tmp_path: Path):
    assert digest({"a": 1, "b": [2]}) == digest({"b": [2], "a": 1})
    assert digest({"a": 1}) != digest({"a": 2})
    store = ApprovalStore(tmp_path, "broken.json")
    store.path.write_text("{not json")
    assert not store.approved(tmp_path, "hooks", digest(SECTION))
    store.approve(tmp_path, {"hooks": digest(SECTION)})
    assert store.approved(tmp_path, "hooks", digest(SECTION))
