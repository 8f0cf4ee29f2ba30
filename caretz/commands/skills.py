"""`caretz skills list`: the skills that apply here, where each comes from, who may run
it, and whether its `allowed-tools` apply (a project's wait for `caretz trust`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.commands.loading import with_settings
from caretz.config_base import ConfigError
from caretz.runtime.project_trust import project_trust
from caretz.runtime.skills import SessionSkills, session_skills
from caretz.usage_error import fail

if TYPE_CHECKING:
    from caretz.config.overrides import Flags
    from caretz.config.settings import Settings
    from caretz.skills.files import Skill


def skills_command(flags: Flags, output: str = "text") -> int:
    return with_settings(flags, lambda settings: list_skills(settings, output))


def list_skills(settings: Settings, output: str, workspace: Path | None = None) -> int:
    """Print the skills that apply here, then the warnings (skipped, shadowed) on stderr;
    exit 2 for a project configuration caretz cannot read."""
    if output not in ("text", "json"):
        return fail(f"--output {output!r}: use text or json")
    workspace = workspace or Path.cwd()
    home = Path(os.environ.get("HOME") or Path.home())
    try:
        skills = session_skills(settings, workspace, project_trust(settings, workspace), home)
    except ConfigError as error:
        return fail(str(error))
    if output == "json":
        data = {
            "skills": [skill_data(skill, skills) for skill in skills.skills],
            "warnings": list(skills.warnings),
        }
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return 0
    if not skills.skills:
        sys.stdout.write("no skills here (docs/skills.md says where caretz looks)\n")
    for skill in skills.skills:
        sys.stdout.write("".join(line + "\n" for line in skill_lines(skill, skills)))
    sys.stderr.write("".join(f"warning: {line}\n" for line in skills.warnings))
    return 0


def grant_state(skill: Skill, skills: SessionSkills) -> str:
    """Whether the skill's `allowed-tools` apply: "" (it names none), "applies", or why not."""
    if not skill.allowed_tools:
        return ""
    if skill.name in skills.withheld and skill.path.parents[3] != skills.root:
        return "never applies: only skills in the project root's folders grant tools"
    if skill.name in skills.withheld:
        return "waits for approval: caretz trust"
    if skill.name not in skills.rules:
        return "not used (a rule caretz cannot read)"
    return "applies while it runs"


def invocation(skill: Skill) -> str:
    by = [
        who for who, yes in (("model", skill.model_invocable), ("you", skill.user_invocable)) if yes
    ]
    return "run by " + " and ".join(by) if by else "run by nobody"


def skill_lines(skill: Skill, skills: SessionSkills) -> list[str]:
    lines = [f"{skill.name} ({skill.scope}) {skill.path}", f"  {skill.description}"]
    lines.append(f"  {invocation(skill)}" + (f"; /{skill.name}" if skill.user_invocable else ""))
    state = grant_state(skill, skills)
    if state:
        lines.append(f"  allowed-tools: {' '.join(skill.allowed_tools)} ({state})")
    return lines


def skill_data(skill: Skill, skills: SessionSkills) -> dict[str, Any]:
    return {
        "name": skill.name,
        "scope": skill.scope,
        "path": str(skill.path),
        "description": skill.description,
        "modelInvocable": skill.model_invocable,
        "userInvocable": skill.user_invocable,
        "allowedTools": list(skill.allowed_tools),
        "allowedToolsApply": skill.name in skills.rules,
    }
