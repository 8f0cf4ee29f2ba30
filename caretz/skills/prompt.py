"""What the model sees of skills: the catalog in the system prompt (names and
descriptions within a budget), and a skill's instructions when it is activated.

The catalog takes about 2% of the context window (as Codex's does): over that, the
descriptions are shortened first, then the last skills are left out, with a line saying
how many. A skill's instructions come in one `<skill_content name="…">` block with the
files bundled beside it listed, not read; compaction keeps such blocks word for word
(agent/compaction.py), and a skill already loaded in the conversation is not loaded again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from xml.sax.saxutils import escape, quoteattr

from caretz.messages import Message
from caretz.skills.files import Skill

CATALOG_SHARE = 0.02  # of the context window
CHARS_PER_TOKEN = 4
MIN_DESCRIPTION = 60  # a description is never shortened below this before skills are left out
SKILL_TOOL = "skill"
CATALOG_INTRO = (
    "Skills: folders of instructions, scripts and references for particular tasks. When a "
    f"task matches a skill's description, call the {SKILL_TOOL} tool with its name first: "
    "its instructions then load. Paths in a skill are relative to its folder."
)
CONTENT_START = re.compile(r'<skill_content name="([a-z0-9-]+)">')


def catalog_budget(context_window: int) -> int:
    """The characters the catalog may take in a window of `context_window` tokens."""
    return int(context_window * CATALOG_SHARE * CHARS_PER_TOKEN)


def catalog_block(skills: Sequence[Skill], budget_chars: int) -> str:
    """The system prompt's catalog of the skills the model may activate ("" for none)."""
    offered = [skill for skill in skills if skill.model_invocable]
    if not offered:
        return ""
    width = max(len(skill.description) for skill in offered)
    text = _catalog(offered, width, 0)
    while len(text) > budget_chars and width > MIN_DESCRIPTION:
        width = max(MIN_DESCRIPTION, width * 3 // 4)
        text = _catalog(offered, width, 0)
    count = len(offered)
    while len(text) > budget_chars and count > 1:
        count -= 1
        text = _catalog(offered[:count], width, len(offered) - count)
    return text


def _catalog(skills: Sequence[Skill], width: int, left_out: int) -> str:
    lines = [CATALOG_INTRO, "<available_skills>"]
    for skill in skills:
        description = _shortened(skill.description, width)
        lines.append(
            f"<skill><name>{skill.name}</name><description>{escape(description)}</description>"
            f"<location>{escape(str(skill.path))}</location></skill>"
        )
    lines.append("</available_skills>")
    if left_out:
        lines.append(f"({left_out} more skills are not listed here, for room.)")
    return "\n".join(lines)


def _shortened(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def skill_content(skill: Skill, arguments: str = "") -> str:
    """A skill's instructions as the model receives them on activation."""
    lines = [
        f"<skill_content name={quoteattr(skill.name)}>",
        f"Skill {skill.name} ({skill.path}); its folder is {skill.folder}.",
        "",
        skill.body,
    ]
    bundled = skill.bundled()
    if bundled:
        lines += ["", "Files bundled with it (read one only when the instructions call for it):"]
        lines += [f"- {name}" for name in bundled]
    lines.append("</skill_content>")
    if arguments.strip():
        lines += ["", f"ARGUMENTS: {arguments.strip()}"]
    return "\n".join(lines)


def loaded_skills(messages: Iterable[Message]) -> set[str]:
    """The skills whose instructions a conversation already holds."""
    found: set[str] = set()
    for message in messages:
        if isinstance(message.content, str) and "<skill_content" in message.content:
            found.update(CONTENT_START.findall(message.content))
    return found
