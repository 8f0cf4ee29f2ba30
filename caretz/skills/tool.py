"""The `skill` tool: the model activates a skill by name, and its instructions load.

Only the skills the model may activate are offered (an enum of their names). A skill
already loaded in the conversation is not loaded again. Its `allowed-tools`, as the
project's trust lets them apply (runtime/skills.py), join the allow rules of the calls
that follow in the same piece of work (`SkillGrants` on the tool context); deny and ask
rules still win, and nothing leaves the sandbox on their strength.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from caretz.messages import Message, ToolSpec
from caretz.skills.files import Skill
from caretz.skills.prompt import SKILL_TOOL, loaded_skills, skill_content
from caretz.tools.base import ToolArgumentError, ToolContext, ToolResult

if TYPE_CHECKING:
    from caretz.permissions.rules import Rule


def skill_spec(skills: Sequence[Skill]) -> ToolSpec:
    return ToolSpec(
        name=SKILL_TOOL,
        description=(
            "Load a skill's instructions (the skills are listed in the system prompt). Call "
            "it when a task matches a skill's description, before doing the task."
        ),
        parameters={
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": [skill.name for skill in skills]},
                "arguments": {"type": "string", "description": "What the skill is for here."},
            },
            "required": ["name"],
            "additionalProperties": False,
        },
    )


class SkillTool:
    effect = "internal"  # it reads caretz's own catalog (tools/base.py)

    def __init__(
        self,
        skills: Sequence[Skill],
        rules: Mapping[str, tuple[Rule, ...]],
        conversation: Callable[[], Sequence[Message]] | None = None,
    ):
        self.skills = {skill.name: skill for skill in skills if skill.model_invocable}
        self.rules = rules  # each skill's allowed-tools as allow rules, as trust lets them
        # The agent's conversation, where loaded skills are found (after a compaction or a
        # rewind too); None: the names this tool loaded itself (a subagent's).
        self.conversation = conversation
        self.loaded: set[str] = set()
        self.spec = skill_spec(list(self.skills.values()))

    def for_subagent(self) -> SkillTool:
        """The tool for a subagent, whose conversation starts empty."""
        return SkillTool(list(self.skills.values()), self.rules)

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        name = str(args["name"]).strip()
        skill = self.skills.get(name)
        if skill is None:
            known = ", ".join(self.skills) or "none"
            raise ToolArgumentError(f"no skill named {name!r} (the skills: {known})")
        granted = self.rules.get(name, ())
        if granted and ctx.skill_grants is not None:
            ctx.skill_grants.add(granted)
        conversation = self.conversation
        loaded = loaded_skills(conversation()) if conversation is not None else self.loaded
        if name in loaded:
            return ToolResult(
                ok=True, output=f"Skill {name} is loaded already (above): follow its instructions."
            )
        self.loaded.add(name)
        return ToolResult(ok=True, output=skill_content(skill, str(args.get("arguments") or "")))
