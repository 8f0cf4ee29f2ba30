"""A PreToolUse hook's "allow" and "ask" (`PermissionHint`) and a custom command's
turn rules, weighed by the real permission check over the real tool registry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from caretz.messages import ToolCall
from caretz.permissions.rules import parse_rule
from caretz.permissions.settings import rules_from_permissions
from caretz.runtime.permissions import build_tools
from caretz.tools.asking import Answer
from caretz.tools.base import ToolContext, ToolResult
from caretz.tools.permission import PermissionCheck, SessionPermissions
from caretz.tools.policy import PermissionHint, Proceed, TurnGrant
from caretz.tools.registry import ToolRegistry
from tests.tools.test_permission import GrantRecorder, ScriptedAsker

HOOK = "the PreToolUse hook `./check.sh`"


def hinting(decision: str, reason: str = "checked"):
    def check(call: ToolCall, ctx: ToolContext) -> Proceed:
        return Proceed(hint=PermissionHint(decision, reason, HOOK))  # type: ignore[arg-type]

    return check


def session(
    root: Path,
    hint: str | None,
    mode: str = "auto",
    asker: Any = None,
    rules: dict[str, list[str]] | None = None,
    after: Any = (),
    tools: list[Any] | None = None,
):
    permissions = SessionPermissions(
        root,
        profile_rules=rules_from_permissions(rules or {}, "profiles.json"),
        mode=mode,  # type: ignore[arg-type]
        asker=asker,
    )
    first = (hinting(hint),) if hint else ()
    if tools is None:
        return permissions, build_tools(permissions, after, first)
    registry = ToolRegistry(tools)
    registry.before_call = (*first, PermissionCheck(permissions, registry.effect_of))
    return permissions, registry


def run(registry, root: Path, tool: str, grant: TurnGrant | None = None, **args: Any) -> ToolResult:
    return registry.run(
        ToolCall(id="c1", name=tool, arguments=args), ToolContext(workspace=root, grant=grant)
    )


def test_an_allow_counts_as_an_allow_rule_where_no_rule_decided(tmp_path: Path):
    asker = ScriptedAsker()  # no answers: a question would fail the test
    _, registry = session(tmp_path, "allow", mode="ask", asker=asker)

    assert run(registry, tmp_path, "bash", command="echo hi > made.txt").ok
    assert (tmp_path / "made.txt").exists() and asker.questions == []


def test_an_allow_never_beats_a_deny_or_an_ask_rule(tmp_path: Path):
    rules = {"deny": ["Bash(rm:*)"], "ask": ["Bash(git push:*)"]}
    asker = ScriptedAsker(Answer("no"))
    _, registry = session(tmp_path, "allow", asker=asker, rules=rules)

    denied = run(registry, tmp_path, "bash", command="rm -rf x")
    asked = run(registry, tmp_path, "bash", command="git push origin main")

    assert not denied.ok and "denied by the deny rule Bash(rm:*)" in denied.output
    assert not asked.ok and [q.rule for q in asker.questions] == [
        "Bash(git push:*) (profiles.json)"
    ]


def test_an_allow_does_not_let_a_command_leave_the_sandbox(tmp_path: Path):
    tool, asker = GrantRecorder(), ScriptedAsker(Answer("no"))
    _, registry = session(tmp_path, "allow", asker=asker, tools=[tool])

    run(registry, tmp_path, "bash", command="curl x", escalate="needs the network")

    assert tool.seen == [] and len(asker.questions) == 1


def test_an_ask_asks_where_the_call_would_have_run_and_offers_no_always(tmp_path: Path):
    asker = ScriptedAsker(Answer("yes"))
    _, registry = session(tmp_path, "ask", asker=asker)

    assert run(registry, tmp_path, "bash", command="echo ok").ok
    (question,) = asker.questions
    assert question.reason == f"{HOOK} asks first: checked"
    assert question.saves == ()


def test_an_ask_is_a_refusal_where_nobody_can_answer(tmp_path: Path):
    permissions, registry = session(tmp_path, "ask")

    result = run(registry, tmp_path, "bash", command="echo hi > made.txt")

    assert not result.ok and not (tmp_path / "made.txt").exists()
    assert permissions.denials[0]["reason"] == f"{HOOK} asks first: checked"


def test_a_hint_does_not_carry_over_to_a_call_a_later_check_puts_in_its_place(tmp_path: Path):
    asker = ScriptedAsker(Answer("no"))

    def rewrite(call: ToolCall, ctx: ToolContext) -> Proceed:
        return Proceed(call=ToolCall(id=call.id, name="bash", arguments={"command": "echo other"}))

    permissions = SessionPermissions(tmp_path, mode="ask", asker=asker)
    registry = build_tools(permissions, first_checks=(hinting("allow"), rewrite))

    assert not run(registry, tmp_path, "bash", command="echo first").ok
    assert len(asker.questions) == 1  # the rewritten call was judged without the allow


def test_turn_rules_allow_for_the_turn_only_and_never_past_a_deny_rule(tmp_path: Path):
    permissions, registry = session(tmp_path, None, mode="ask", rules={"deny": ["Bash(rm:*)"]})
    allowed = [parse_rule(text, "allow", "cmd.md") for text in ("Bash(touch:*)", "Bash")]

    grant = TurnGrant(tuple(allowed))
    made = run(registry, tmp_path, "bash", command="touch made.txt", grant=grant)
    removed = run(registry, tmp_path, "bash", command="rm -f made.txt", grant=grant)
    after = run(registry, tmp_path, "bash", command="touch again.txt")

    assert made.ok and (tmp_path / "made.txt").exists()
    assert not removed.ok and "denied by the deny rule" in removed.output
    assert not after.ok and not (tmp_path / "again.txt").exists()
