"""A skill the user runs by name (`/name args`, in the REPL, `-p` and every front end):
its instructions sent as the turn's prompt, its `allowed-tools` granted for that work.

A skill already loaded in the conversation is not sent again: the turn names it and
carries the arguments. The grant is the same one the `skill` tool gives when the model
activates a skill (tools/policy.py's `SkillGrants`), so it holds for the turn and its
automatic resumes, as the project's trust lets it (runtime/skills.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caretz.agent.driver import run_with_auto_resume
from caretz.agent.outcomes import Outcome
from caretz.skills.prompt import loaded_skills, skill_content
from caretz.slash_commands import names as slash_names

if TYPE_CHECKING:
    from caretz.app.session import AppSession
    from caretz.runtime.skills import SessionSkills
    from caretz.skills.files import Skill


def skill_for(skills: SessionSkills | None, prompt: str) -> tuple[Skill, str] | None:
    """The skill a `/name args` prompt runs and its arguments (None: no skill by that
    name the user may run; the interactive session's own commands keep their names)."""
    if skills is None or not prompt.lstrip().startswith("/"):
        return None
    parsed = slash_names.parse(prompt.strip())
    if parsed is None or parsed[0] in slash_names.RESERVED_NAMES:
        return None
    skill = skills.user_skill(parsed[0])
    return (skill, parsed[1]) if skill is not None else None


def run_skill(session: AppSession, skill: Skill, arguments: str) -> Outcome:
    """The skill's turn (and the guard's automatic resumes) with its tools granted."""
    agent = session.agent
    grants = agent.parts.tool_ctx.skill_grants
    rules = session.skills.rules.get(skill.name, ()) if session.skills is not None else ()
    if grants is not None and rules:
        grants.add(rules)
    if skill.name in loaded_skills(agent.conversation.messages):
        prompt = f"Use the skill {skill.name} (its instructions are loaded above)."
        prompt += f"\n\nARGUMENTS: {arguments.strip()}" if arguments.strip() else ""
    else:
        prompt = skill_content(skill, arguments)
    return run_with_auto_resume(agent, prompt)
