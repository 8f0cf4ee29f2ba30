"""Where named agents are found, and which one a name means.

The project's folders, from the working folder up to the project's root (the nearest
first): `.caretz/agents`, `.claude/agents`, `.opencode/agents` (`*.md`), `.github/agents`
(`*.agent.md`) and `.codex/agents` (`*.toml`, agent_files/codex.py); then the user's
`~/.caretz/agents`, `~/.claude/agents` and `~/.codex/agents`.
The first folder to define a name wins it; a later one with the same name is shadowed
(and said so). A file caretz cannot read or use is left out with one warning naming it.

Every file is listed and read through a door (sandbox/door.py): the project's for the
project's folders (a folder or file leading out of the project is refused), the user's
own for theirs, and one whose only root is an installed plugin's folder for its
`agents/` (after all of these, each name under the plugin's: `plugin-name:reviewer`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from caretz.agent_files.codex import parse_codex_agent
from caretz.agent_files.definition import AgentDefinition, AgentFileError, parse_agent
from caretz.sandbox.door import ProjectDoor

MAX_FILE_BYTES = 256 * 1024
# (folder below a project or home, the suffix its agent files end in)
PROJECT_HOMES = (
    (".caretz/agents", ".md"),
    (".claude/agents", ".md"),
    (".opencode/agents", ".md"),
    (".github/agents", ".agent.md"),
    (".codex/agents", ".toml"),
)
USER_HOMES = ((".caretz/agents", ".md"), (".claude/agents", ".md"), (".codex/agents", ".toml"))


@dataclass(frozen=True, kw_only=True)
class AgentFolder:
    path: Path
    suffix: str
    scope: str  # "project", "user" or "plugin"
    door: ProjectDoor
    namespace: str = ""  # a plugin's name: its agent `reviewer` is `name:reviewer`


@dataclass
class AgentCatalog:
    agents: dict[str, AgentDefinition] = field(default_factory=dict)
    shadowed: list[AgentDefinition] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def get(self, name: str) -> AgentDefinition | None:
        return self.agents.get(name.lower())


def agent_folders(
    workspace: Path, project_root: Path, home: Path, door: ProjectDoor
) -> list[AgentFolder]:
    """The folders in the order they win a name; `door`: the project's."""
    folders = []
    for folder in _up_to(Path(workspace), Path(project_root)):
        folders += [
            AgentFolder(path=folder / sub, suffix=suffix, scope="project", door=door)
            for sub, suffix in PROJECT_HOMES
        ]
    users = ProjectDoor.users_own()
    folders += [
        AgentFolder(path=home / sub, suffix=suffix, scope="user", door=users)
        for sub, suffix in USER_HOMES
    ]
    return folders


def _up_to(start: Path, root: Path) -> list[Path]:
    found = [start]
    if start != root and root in start.parents:
        found += [parent for parent in start.parents if parent == root or root in parent.parents]
    return found


def load_agents(folders: Iterable[AgentFolder]) -> AgentCatalog:
    catalog = AgentCatalog()
    for folder in folders:
        try:
            paths = folder.door.list_files(folder.path, folder.suffix)
        except OSError as error:  # the door's Refused among them
            catalog.warnings.append(
                f"{folder.path}: not read ({_reason(error)}); its agents are left out"
            )
            continue
        for path in paths:
            try:
                agent = read_agent(path, folder)
            except (OSError, UnicodeDecodeError, AgentFileError) as error:
                catalog.warnings.append(_problem(path, error))
                continue
            if agent.name in catalog.agents:
                catalog.shadowed.append(agent)
                first = catalog.agents[agent.name].path
                catalog.warnings.append(f"{path}: agent {agent.name!r} is shadowed by {first}")
                continue
            catalog.agents[agent.name] = agent
    return catalog


def read_agent(path: Path, folder: AgentFolder) -> AgentDefinition:
    text = folder.door.text(path, MAX_FILE_BYTES)
    default = path.name.removesuffix(folder.suffix)
    parse = parse_codex_agent if folder.suffix == ".toml" else parse_agent
    agent = parse(text, path, folder.scope, default)
    if not folder.namespace:
        return agent
    return dataclasses.replace(agent, name=f"{folder.namespace}:{agent.name}")


def _problem(path: Path, error: OSError | UnicodeDecodeError | AgentFileError) -> str:
    if isinstance(error, AgentFileError):
        return f"{error}; the agent is left out"
    if isinstance(error, UnicodeDecodeError):
        return f"{path}: not UTF-8 text ({error.reason}); the agent is left out"
    assert isinstance(error, OSError)
    return f"{path}: not read ({_reason(error)}); the agent is left out"


def _reason(error: OSError) -> str:
    return getattr(error, "reason", None) or error.strerror or str(error)
