"""A session's skills: found through the project's gate when the session opens, their
`allowed-tools` read as allow rules where the project's trust lets them apply.

A project's skill that grants tools is a part of the project's configuration
(runtime/project_trust.py): until the user approves it, its catalog entry is shown and
it may be activated, but it grants nothing. A rule caretz cannot read leaves that skill
without its grant, with a warning; the skill still loads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.permissions.project import RuleError
from caretz.permissions.rules import parse_rule
from caretz.runtime import project_trust
from caretz.runtime.permissions import session_tool_names
from caretz.skills.prompt import catalog_block, catalog_budget
from caretz.skills.tool import SkillTool

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.messages import Message
    from caretz.permissions.rules import Rule
    from caretz.runtime.project_trust import ProjectTrust
    from caretz.skills.files import Skill
    from caretz.tools.base import Tool


@dataclass(frozen=True, kw_only=True)
class SessionSkills:
    skills: tuple[Skill, ...] = ()
    rules: Mapping[str, tuple[Rule, ...]] = field(default_factory=dict)  # as trust lets them
    withheld: tuple[str, ...] = ()  # project skills whose grant waits for approval
    warnings: tuple[str, ...] = ()
    root: Path | None = None  # the project's

    def get(self, name: str) -> Skill | None:
        return next((skill for skill in self.skills if skill.name == name), None)

    def user_skill(self, name: str) -> Skill | None:
        """The skill `/name` runs (None: none the user may run by that name)."""
        skill = self.get(name)
        return skill if skill is not None and skill.user_invocable else None

    def catalog(self, context_window: int) -> str:
        """The system prompt's catalog ("" when the model may activate none)."""
        if not any(skill.model_invocable for skill in self.skills):
            return ""
        return catalog_block(self.skills, catalog_budget(context_window))

    def tool(self, conversation: Callable[[], Sequence[Message]]) -> Tool | None:
        """The `skill` tool (None when the model may activate none)."""
        if not any(skill.model_invocable for skill in self.skills):
            return None
        return SkillTool(self.skills, self.rules, conversation)


def session_skills(
    settings: Settings, workspace: Path, trust: ProjectTrust, home: Path | None
) -> SessionSkills:
    """The skills a session in `workspace` has (the user's below `home`), their grants as
    `trust` lets them apply."""
    found = project_trust.skill_set(settings, workspace, home)
    warnings = list(found.warnings)
    rules: dict[str, tuple[Rule, ...]] = {}
    withheld: list[str] = []
    for skill in found.skills.values():
        if not skill.allowed_tools:
            continue
        if not trust.skill_approved(skill):
            withheld.append(skill.name)
            continue
        try:
            rules[skill.name] = skill_rules(skill)
        except RuleError as error:
            warnings.append(f"{error}; skill {skill.name} grants no tools")
    skills = tuple(found.skills.values())
    return SessionSkills(
        skills=skills,
        rules=rules,
        withheld=tuple(withheld),
        warnings=tuple(warnings),
        root=trust.config.root,
    )


def skill_rules(skill: Skill) -> tuple[Rule, ...]:
    """A skill's `allowed-tools` as allow rules; raises RuleError naming the file."""
    source = f"{skill.path}: allowed-tools"
    extra = frozenset(session_tool_names())
    return tuple(parse_rule(text, "allow", source, extra) for text in skill.allowed_tools)
