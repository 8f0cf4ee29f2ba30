"""Where custom commands live, what they are called, and what each file says.

Folders, first one wins a name: the project's `.caretz/commands/`, the user's
`commands/` next to profiles.json, the project's `.claude/commands/` (read only, for
teams moving over from Claude Code). A file's path below its folder is its name:
`review.md` is `/review`, `frontend/test.md` is `/frontend:test`. Names are lower case.
A command that would shadow a built-in command is left out, with a warning.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from caretz.slash_commands.markdown import split_front_matter, split_list

PROJECT_FOLDER = Path(".caretz") / "commands"
CLAUDE_FOLDER = Path(".claude") / "commands"
USER_FOLDER = "commands"  # in the folder that holds profiles.json
MAX_FILE_BYTES = 256 * 1024


@dataclass(frozen=True)
class CommandFolder:
    path: Path
    label: str  # "project", "user" or "claude", shown in /help


@dataclass(frozen=True)
class CustomCommand:
    name: str  # "frontend:test"
    path: Path
    label: str  # the folder it came from
    prompt: str  # the body, before its arguments are filled in
    description: str = ""
    argument_hint: str = ""
    model: str | None = None
    allowed_tools: tuple[str, ...] = ()


@dataclass
class Catalog:
    commands: dict[str, CustomCommand] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def get(self, name: str) -> CustomCommand | None:
        return self.commands.get(name.lower())


def command_folders(project_root: Path, config_dir: Path) -> list[CommandFolder]:
    return [
        CommandFolder(project_root / PROJECT_FOLDER, "project"),
        CommandFolder(config_dir / USER_FOLDER, "user"),
        CommandFolder(project_root / CLAUDE_FOLDER, "claude"),
    ]


def load_catalog(folders: Iterable[CommandFolder], reserved: Iterable[str] = ()) -> Catalog:
    """Every command in `folders`; names in `reserved` (the built-in commands) are refused."""
    taken = {name.lower() for name in reserved}
    catalog = Catalog()
    for folder in folders:
        for name, path in command_files(folder.path):
            if name in taken:
                catalog.warnings.append(
                    f"{path}: /{name} is a built-in command; the file is not used (rename it)"
                )
                continue
            if name in catalog.commands:
                continue  # an earlier folder has it
            try:
                catalog.commands[name] = read_command(name, path, folder.label)
            except (OSError, UnicodeDecodeError) as error:
                catalog.warnings.append(f"{path}: cannot be read ({error})")
    return catalog


def command_files(folder: Path) -> list[tuple[str, Path]]:
    """(name, path) of each `*.md` below `folder`, sorted by name."""
    if not folder.is_dir():
        return []
    found = []
    for path in folder.rglob("*.md"):
        if not path.is_file():
            continue
        parts = path.relative_to(folder).with_suffix("").parts
        if any(not part or part.startswith(".") or " " in part for part in parts):
            continue
        found.append((":".join(parts).lower(), path))
    return sorted(found)


def read_command(name: str, path: Path, label: str) -> CustomCommand:
    raw = path.read_bytes()[:MAX_FILE_BYTES].decode("utf-8")
    meta, prompt = split_front_matter(raw)
    model = _text(meta.get("model"))
    return CustomCommand(
        name=name,
        path=path,
        label=label,
        prompt=prompt.strip(),
        description=_text(meta.get("description")) or _first_line(prompt),
        argument_hint=_text(meta.get("argument-hint")),
        model=model or None,
        allowed_tools=tuple(_tools(meta.get("allowed-tools"))),
    )


def _text(value: str | list[str] | None) -> str:
    if isinstance(value, list):
        return ", ".join(value)
    return (value or "").strip()


def _tools(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [tool for item in items for tool in split_list(item)]


def _first_line(prompt: str) -> str:
    for line in prompt.splitlines():
        if line.strip():
            return line.strip().lstrip("#").strip()[:80]
    return ""
