"""Where skills live and what each `SKILL.md` says.

Folders, nearest first: in every folder from the working folder up to the project's root,
`.caretz/skills/`, `.agents/skills/`, `.claude/skills/`; then the user's `~/.caretz/skills/`,
`~/.agents/skills/`, `~/.claude/skills/`. A skill is a folder `<name>/` holding a file named
exactly `SKILL.md`, with front matter (`name`, `description`, and what caretz reads besides:
`allowed-tools`, `disable-model-invocation`, `user-invocable`). The first folder that has a
name keeps it: a project's skill shadows the user's of the same name, with a warning.

Names follow the spec strictly (1-64 characters: lower-case letters, digits and single
hyphens, not at either end; the folder's name), and the file is read leniently: a name
that breaks a rule or differs from its folder is used as the folder's name with a warning;
a skill with no description, or a file that cannot be read, is left out with a warning.

Every file is read through a door (sandbox/door.py): the project's for its folders, so a
`SKILL.md` or a folder that leads outside the project is refused; the user's own for theirs.
An installed plugin's `skills/` come last, read through a door whose one root is the
plugin's folder, each name under the plugin's (`plugin-name:lint`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from caretz.sandbox.door import ProjectDoor, Refused
from caretz.slash_commands.markdown import split_front_matter, split_list

SKILL_FILE = "SKILL.md"
HOMES = (".caretz", ".agents", ".claude")  # each holds a `skills/` folder
MAX_SKILL_BYTES = 256 * 1024
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_SKILLS_PER_FOLDER = 500
NAME_RULE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_BUNDLED = 50  # files listed with a skill's instructions
SKIPPED = frozenset({".git", "node_modules"})


@dataclass(frozen=True)
class SkillFolder:
    path: Path  # a `skills/` folder
    scope: str  # "project", "user" or "plugin"
    door: ProjectDoor  # how its files are listed and read
    namespace: str = ""  # a plugin's name: its skill `lint` is `name:lint`


@dataclass(frozen=True, kw_only=True)
class Skill:
    name: str
    description: str
    path: Path  # its SKILL.md
    scope: str  # "project" or "user"
    body: str  # the instructions below the front matter
    allowed_tools: tuple[str, ...] = ()
    model_invocable: bool = True  # not `disable-model-invocation: true`
    user_invocable: bool = True  # not `user-invocable: false`
    door: ProjectDoor = field(default_factory=ProjectDoor.users_own, compare=False)

    @property
    def folder(self) -> Path:
        return self.path.parent

    def bundled(self, limit: int = MAX_BUNDLED) -> list[str]:
        """The files beside its SKILL.md, below its folder (listed, never read), at most
        `limit`; [] when its folder cannot be listed."""
        try:
            listed = self.door.list_files(self.folder, "")
        except OSError:
            return []
        names = [path.relative_to(self.folder).as_posix() for path in listed]
        return [name for name in names if name != SKILL_FILE][:limit]


@dataclass
class SkillSet:
    skills: dict[str, Skill] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name)


def skill_folders(
    workspace: Path, project_root: Path, home: Path | None, door: ProjectDoor
) -> list[SkillFolder]:
    """The folders, first one wins a name: the project's from `workspace` up to
    `project_root` (`door`: the project's), then the user's below `home` (None: none)."""
    start = Path(os.path.abspath(workspace))
    top = Path(os.path.abspath(project_root))
    chain = [start]
    if start != top and top in start.parents:
        chain += [parent for parent in start.parents if top in (parent, *parent.parents)]
    folders = [
        SkillFolder(folder / name / "skills", "project", door) for folder in chain for name in HOMES
    ]
    if home is not None:
        users = ProjectDoor.users_own()
        folders += [SkillFolder(home / name / "skills", "user", users) for name in HOMES]
    return folders


def load_skills(folders: Iterable[SkillFolder]) -> SkillSet:
    """Every skill in `folders`; what cannot be used is a warning."""
    found = SkillSet()
    for folder in folders:
        if not os.path.lexists(folder.path):
            continue
        try:
            files = skill_files(folder)
        except OSError as error:  # the door's Refused among them
            line = f"{folder.path}: not read ({_reason(error)}); its skills are left out"
            found.warnings.append(line)
            continue
        for path in files:
            _add(found, folder, path)
    return found


def _add(found: SkillSet, folder: SkillFolder, path: Path) -> None:
    try:
        skill, warnings = read_skill(path, folder)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        found.warnings.append(f"{path}: skill left out ({_reason(error)})")
        return
    found.warnings += warnings
    earlier = found.skills.get(skill.name)
    if earlier is not None:
        found.warnings.append(
            f"{path}: skill {skill.name!r} is shadowed by {earlier.path} ({earlier.scope}), "
            "which is used"
        )
        return
    found.skills[skill.name] = skill


def skill_files(folder: SkillFolder) -> list[Path]:
    """Each `<name>/SKILL.md` directly below the folder (listed through its door, following
    no symlinked folder), sorted; Refused for a folder the door does not open."""
    listed = folder.door.list_files(folder.path, SKILL_FILE)
    found = []
    for path in listed:
        parts = path.relative_to(folder.path).parts
        if len(parts) == 2 and parts[1] == SKILL_FILE and parts[0] not in SKIPPED:
            found.append(path)
    return sorted(found)[:MAX_SKILLS_PER_FOLDER]


def read_skill(path: Path, folder: SkillFolder) -> tuple[Skill, list[str]]:
    """The skill at `path` and the warnings its front matter earns; raises OSError (the
    door's Refused), UnicodeDecodeError, or ValueError (no description, a folder's name
    that is no skill name)."""
    raw = folder.door.text(path, MAX_SKILL_BYTES)
    meta, body = split_front_matter(raw)
    directory = path.parent.name
    if not valid_name(directory):
        raise ValueError(f"its folder's name {directory!r} is no skill name ({NAME_HELP})")
    description = _text(meta.get("description"))
    if not description:
        raise ValueError("no description in its front matter")
    warnings = name_warnings(path, _text(meta.get("name")))
    if len(description) > MAX_DESCRIPTION:
        warnings.append(f"{path}: description over {MAX_DESCRIPTION} characters; cut there")
    skill = Skill(
        name=f"{folder.namespace}:{directory}" if folder.namespace else directory,
        description=description[:MAX_DESCRIPTION],
        path=path,
        scope=folder.scope,
        body=body.strip(),
        allowed_tools=tuple(split_tools(meta.get("allowed-tools"))),
        model_invocable=not _true(meta.get("disable-model-invocation")),
        user_invocable=not _false(meta.get("user-invocable")),
        door=folder.door,
    )
    return skill, warnings


NAME_HELP = "1-64 lower-case letters, digits and single hyphens, none at either end"


def valid_name(name: str) -> bool:
    return len(name) <= MAX_NAME and NAME_RULE.match(name) is not None


def name_warnings(path: Path, written: str) -> list[str]:
    """What is wrong with the `name` a SKILL.md writes, as lines (none: nothing)."""
    directory = path.parent.name
    if not written or written == directory and valid_name(written):
        return []
    if not valid_name(written):
        return [f"{path}: name {written!r} breaks the rule ({NAME_HELP}); it is /{directory}"]
    return [f"{path}: name {written!r} is not its folder's name; it is /{directory}"]


def _text(value: str | list[str] | None) -> str:
    if isinstance(value, list):
        return " ".join(value).strip()
    return (value or "").strip()


def _true(value: str | list[str] | None) -> bool:
    return _text(value).lower() in ("true", "yes", "on")


def _false(value: str | list[str] | None) -> bool:
    return _text(value).lower() in ("false", "no", "off")


def split_tools(value: str | list[str] | None) -> list[str]:
    """`allowed-tools`: the spec's space-separated list, Claude Code's comma-separated one
    or a YAML list; `Bash(git log:*)` keeps what is inside its parentheses."""
    if value is None:
        return []
    items: Sequence[str] = value if isinstance(value, list) else [value]
    tools: list[str] = []
    for item in items:
        for part in split_list(item):
            tools += _words_outside_parentheses(part)
    return tools


def _words_outside_parentheses(text: str) -> list[str]:
    words, depth, current = [], 0, ""
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")" and depth > 0:
            depth -= 1
        if char.isspace() and depth == 0:
            words.append(current)
            current = ""
            continue
        current += char
    words.append(current)
    return [word for word in words if word]


def _reason(error: BaseException) -> str:
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 text: {error.reason} at byte {error.start}"
    if isinstance(error, Refused):
        return error.reason
    if isinstance(error, OSError):
        return error.strerror or str(error)
    return str(error)
