"""Where custom commands live, what they are called, and what each file says.

Folders, first one wins a name: the project's `.caretz/commands/`, the user's
`commands/` next to profiles.json, the project's `.claude/commands/` (read only, for
teams moving over from Claude Code). A file's path below its folder is its name:
`review.md` is `/review`, `frontend/test.md` is `/frontend:test`. Names are lower case.
An installed plugin's `commands/` come after these, each name under the plugin's
(`/plugin-name:review`), read through a door whose one root is the plugin's folder.
A command that would shadow a built-in command is left out, with a warning.

The project's folders and files are listed and read through the project's door
(sandbox/door.py): a folder or file that leads outside the project (`.claude/commands ->
/proc`, `review.md -> ~/.ssh/id_rsa`), a FIFO, a hard link or a file over the size cap is
left out with one warning naming it and why, and its name stays taken, so `/review` says
why it cannot run instead of running another folder's `review.md`. The user's own folder
is read through `ProjectDoor.users_own()`: what it holds is the user's choice.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from caretz.sandbox.door import ProjectDoor
from caretz.slash_commands.markdown import split_front_matter, split_list

PROJECT_FOLDER = Path(".caretz") / "commands"
CLAUDE_FOLDER = Path(".claude") / "commands"
USER_FOLDER = "commands"  # in the folder that holds profiles.json
MAX_FILE_BYTES = 256 * 1024


@dataclass(frozen=True)
class CommandFolder:
    path: Path
    label: str  # "project", "user", "claude" or "plugin", shown in /help
    door: ProjectDoor  # how its files are listed and read
    namespace: str = ""  # a plugin's name: its `review.md` is `/name:review`


@dataclass(frozen=True, kw_only=True)
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
    refused: dict[str, str] = field(default_factory=dict)  # a name's file not read: the line
    folders_refused: list[str] = field(default_factory=list)  # a folder not read: the line

    def get(self, name: str) -> CustomCommand | None:
        return self.commands.get(name.lower())


def command_folders(project_root: Path, config_dir: Path, door: ProjectDoor) -> list[CommandFolder]:
    """The folders, first one wins a name; `door`: the project's."""
    return [
        CommandFolder(project_root / PROJECT_FOLDER, "project", door),
        CommandFolder(config_dir / USER_FOLDER, "user", ProjectDoor.users_own()),
        CommandFolder(project_root / CLAUDE_FOLDER, "claude", door),
    ]


def load_catalog(folders: Iterable[CommandFolder], reserved: Iterable[str] = ()) -> Catalog:
    """Every command in `folders`; names in `reserved` (the built-in commands) are refused."""
    taken = {name.lower() for name in reserved}
    catalog = Catalog()
    for folder in folders:
        try:
            found = command_files(folder)
        except OSError as error:  # the door's Refused among them
            line = f"{folder.path}: not read ({_reason(error)}); its commands are left out"
            catalog.warnings.append(line)
            catalog.folders_refused.append(line)
            continue
        for name, path in found:
            if name in taken:
                catalog.warnings.append(
                    f"{path}: /{name} is a built-in command; the file is not used (rename it)"
                )
                continue
            if name in catalog.commands or name in catalog.refused:
                continue  # an earlier folder has it
            try:
                catalog.commands[name] = read_command(name, path, folder)
            except (OSError, UnicodeDecodeError) as error:
                line = f"{path}: not read ({_reason(error)})"
                catalog.warnings.append(line)
                catalog.refused[name] = line
    return catalog


def command_files(folder: CommandFolder) -> list[tuple[str, Path]]:
    """(name, path) of each `*.md` below the folder, sorted by name; the folder is listed
    through its door (Refused: a folder it does not open)."""
    found = []
    for path in folder.door.list_files(folder.path, ".md"):
        parts = path.relative_to(folder.path).with_suffix("").parts
        if any(not part or part.startswith(".") or " " in part for part in parts):
            continue
        found.append((":".join((*filter(None, [folder.namespace]), *parts)).lower(), path))
    return sorted(found)


def _reason(error: OSError | UnicodeDecodeError) -> str:
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 text: {error.reason} at byte {error.start}"
    return getattr(error, "reason", None) or error.strerror or str(error)


def read_command(name: str, path: Path, folder: CommandFolder) -> CustomCommand:
    raw = folder.door.text(path, MAX_FILE_BYTES)
    label = folder.label
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
