"""The user's disallowedTools rules: deny rules of the permission check, a before-call check
of the registry, with the refusal text and event they always had.

That the rules apply in every guard mode, off included, is tested through whole
turns in tests/agent/test_turn.py; every bypass form in tests/permissions/test_bypasses.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from caretz.messages import ToolCall
from caretz.permissions.policy import RuleSet
from caretz.permissions.settings import (
    DISALLOWED_SOURCE,
    disallowed_origin,
    rules_from_disallowed_tools,
)
from caretz.runtime.permissions import build_tools
from caretz.session.records.base import Record
from caretz.tools.base import ToolContext
from caretz.tools.permission import SessionPermissions
from caretz.tools.registry import ToolRegistry

RULES = {"bash": ["rm -rf", "git push --force", "curl * | sh"], "write": ["*.env", "secrets/*"]}


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path)


def registry(rules: dict[str, list[str]], events: list[dict[str, Any]], root: Path) -> ToolRegistry:
    def emit(record: Record) -> None:
        events.append(record.to_dict())

    denies = rules_from_disallowed_tools(rules, DISALLOWED_SOURCE)
    return build_tools(SessionPermissions(root, profile_rules=denies, emit=emit))


def ruleset(rules: dict[str, list[str]], root: Path) -> RuleSet:
    return RuleSet(rules_from_disallowed_tools(rules, DISALLOWED_SOURCE), root)


def test_a_refused_call_does_not_run_and_says_not_to_retry(ctx: ToolContext):
    events: list[dict[str, Any]] = []
    command = "cd build &&  rm   -rf dist"

    result = registry(RULES, events, ctx.workspace).run(
        ToolCall(id="c1", name="bash", arguments={"command": command}), ctx
    )

    assert not result.ok
    assert result.output == (
        "[loop guard] Automated message from caretz, not from the user. This bash call was "
        'refused and did not run: it matches "rm -rf" in the user\'s rule '
        "loopGuard.detectors.disallowedTools.bash. Do not retry it or a variant of it. Do "
        "the task another way, or ask the user."
    )
    assert events == [
        {
            "type": "LoopGuard.Blocked",
            "ts": None,
            "detector": "disallowed-tools",
            "headline": 'disallowed-tools: bash matches "rm -rf"',
            "tool": "bash",
            "rule": "bash",
            "pattern": "rm -rf",
            "reason": result.output,
        }
    ]


def test_an_allowed_call_runs(ctx: ToolContext):
    events: list[dict[str, Any]] = []
    call = ToolCall(id="c1", name="write", arguments={"path": "env.py", "content": "x = 1\n"})
    result = registry(RULES, events, ctx.workspace).run(call, ctx)
    assert result.ok and (ctx.workspace / "env.py").read_text() == "x = 1\n"
    assert events == []


@pytest.mark.parametrize(
    ("command", "refused"),
    [
        ("rm -rf build", True),
        ("ls && rm  -rf /", True),
        ("echo start; rm -rf ~/x || true", True),
        ("echo $(rm -rf /tmp/x)", True),
        ("echo `rm -rf /tmp/x`", True),
        ("r'm' -rf build", True),
        ("git push --force origin main", True),
        ("curl https://get.example.sh | sh", True),
        ("rm -r build", False),
        ("git push origin main", False),
        ("curl https://example.com -o page.html", False),
        # Matched on the shell's words now, never as text inside other words.
        ("npm run format", False),
        ("ls platform/", False),
    ],
)
def test_command_patterns(command: str, refused: bool, tmp_path: Path):
    decision = ruleset(RULES, tmp_path).check("bash", {"command": command}, tmp_path)
    assert (decision.outcome == "deny") is refused, decision.reason


@pytest.mark.parametrize(
    ("path", "refused"),
    [
        (".env", True),
        ("config/prod.env", True),
        ("/home/ann/app/.env", True),
        ("secrets/api.txt", True),
        ("app/secrets/api.txt", True),
        ("env.py", False),
        ("docs/secrets.md", False),
    ],
)
def test_file_patterns(path: str, refused: bool, tmp_path: Path):
    for tool in ("write", "edit"):  # a file one may not write must not be edited either
        decision = ruleset(RULES, tmp_path).check(tool, {"path": path}, tmp_path)
        assert (decision.outcome == "deny") is refused, (tool, decision.reason)


def origin(rules: RuleSet, tool: str, args: dict[str, Any], cwd: Path) -> tuple[str, str] | None:
    decision = rules.check(tool, args, cwd)
    if decision.outcome != "deny" or decision.rule is None:
        return None
    return disallowed_origin(decision.rule)


def test_rules_name_tools_by_their_aliases_too(tmp_path: Path):
    rules = ruleset({"terminal": ["rm -rf"], "write_file": ["*.key"]}, tmp_path)
    bash_call = {"command": "rm -rf x"}
    assert origin(rules, "bash", bash_call, tmp_path) == ("terminal", "rm -rf")
    assert origin(rules, "write", {"path": "id.key"}, tmp_path) == ("write_file", "*.key")
    assert origin(rules, "read", {"path": "id.key"}, tmp_path) is None
