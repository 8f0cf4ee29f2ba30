"""The `skill` tool: a skill's instructions once per conversation, a subagent's own
copy (its conversation starts empty), and its grant added to the work's SkillGrants."""

from __future__ import annotations

from pathlib import Path

from caretz.messages import Message
from caretz.skills.files import Skill
from caretz.skills.tool import SkillTool
from caretz.tools.base import ToolContext
from caretz.tools.policy import SkillGrants, with_skill_rules
from caretz.tools.registry import ToolRegistry


def test_a_skill_loads_once_per_conversation_and_a_subagent_has_its_own(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "style.md").write_text("never read")
    skill = Skill(
        name="notes",
        description="Take notes",
        path=folder / "SKILL.md",
        scope="user",
        body="NOTES STEPS",
    )
    conversation: list[Message] = []
    tool = SkillTool([skill], {}, lambda: conversation)
    ctx = ToolContext(workspace=tmp_path, skill_grants=SkillGrants())

    first = tool.run({"name": "notes"}, ctx)
    conversation.append(Message(role="tool", content=first.output, tool_call_id="c1"))
    second = tool.run({"name": "notes"}, ctx)
    registry = ToolRegistry([])
    registry.add(tool)
    child = registry.fresh().get("skill")
    assert isinstance(child, SkillTool) and child is not tool
    in_child = child.run({"name": "notes"}, ctx)

    assert first.output.startswith('<skill_content name="notes">')
    assert "NOTES STEPS" in first.output and "- refs/style.md" in first.output
    assert "never read" not in first.output
    assert second.output.startswith("Skill notes is loaded already")
    assert in_child.output == first.output  # the subagent's conversation does not hold it
    assert child.run({"name": "notes"}, ctx).output.startswith("Skill notes is loaded already")


def test_the_grant_joins_the_turns_own(tmp_path: Path) -> None:
    from caretz.permissions.rules import parse_rule

    rule = parse_rule("Bash(touch:*)", "allow", "test")
    skill = Skill(
        name="stamp",
        description="Stamp",
        path=tmp_path / "stamp" / "SKILL.md",
        scope="user",
        body="B",
        allowed_tools=("Bash(touch:*)",),
    )
    grants = SkillGrants()
    tool = SkillTool([skill], {"stamp": (rule,)}, lambda: [])

    before = with_skill_rules(None, grants)
    tool.run({"name": "stamp"}, ToolContext(workspace=tmp_path, skill_grants=grants))
    tool.run({"name": "stamp"}, ToolContext(workspace=tmp_path, skill_grants=grants))

    assert before is None
    after = with_skill_rules(None, grants)
    assert after is not None and after.rules == (rule,)  # added once
    grants.clear()
    assert with_skill_rules(None, grants) is None
