"""The one gate for a project's configuration: what a repository brings that widens what
caretz does is read here, and a session uses it only once the user approved it, whole.

A project brings, in its own files: allow rules (`permissions.allow` in
`.caretz/settings.json`), hooks (its `hooks`), MCP servers (`.mcp.json`), custom
command files (`.caretz/commands/`, `.claude/commands/`) that run shell lines or grant
tools (`allowed-tools`), and skills (`.caretz/skills/`, `.agents/skills/`, `.claude/skills/`)
that grant tools. Each lets caretz do what it would otherwise ask about, or not do at all,
so `read_project` is the only place they are read and `project_trust` the only function
that says which of them a session uses: all of them when the user approved the
configuration as it is now (one digest over all of it: `caretz trust`, the interactive
session's question, or a Python API client's `trust_project`), and otherwise only the
parts approved on their own (`caretz hooks approve`, `caretz mcp approve NAME`, which
scripts use). A change to any part asks again. Deny and ask rules only restrict, so they
apply whether approved or not. A feature that brings a new kind of project configuration
(skills, agents, plugins) reads it in `read_project` and adds it to `ProjectConfig.parts`.

caretz's own keys never expand into a project's configuration (runtime/project_keys.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.agent_files.folders import AgentCatalog, agent_folders, load_agents
from caretz.config import sandbox as sandbox_config
from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.permissions.project import (
    PROJECT_SETTINGS,
    RuleError,
    find_project_root,
    read_project_settings,
)
from caretz.sandbox.door import ProjectDoor

if TYPE_CHECKING:
    from caretz import approvals
    from caretz.config import mcp_servers as mcp_server_config
    from caretz.hooks import approvals as hook_approvals
    from caretz.mcp_client import approvals as mcp_approvals
    from caretz.permissions import proposals as rule_proposals
    from caretz.runtime import hooks as runtime_hooks
    from caretz.skills import files as skill_reading
    from caretz.slash_commands import files as command_reading
    from caretz.slash_commands import inline
else:
    # What reads the parts beyond the settings file (pydantic's schemas, the command files)
    # and the approvals (hashing): only for a project that has them.
    approvals = lazy_module("caretz.approvals")
    mcp_server_config = lazy_module("caretz.config.mcp_servers")
    mcp_approvals = lazy_module("caretz.mcp_client.approvals")
    hook_approvals = lazy_module("caretz.hooks.approvals")
    runtime_hooks = lazy_module("caretz.runtime.hooks")
    command_reading = lazy_module("caretz.slash_commands.files")
    skill_reading = lazy_module("caretz.skills.files")
    inline = lazy_module("caretz.slash_commands.inline")
    rule_proposals = lazy_module("caretz.permissions.proposals")  # for "yes, always" only

if TYPE_CHECKING:
    from caretz.approvals import ApprovalStore
    from caretz.config.settings import Settings
    from caretz.mcp_client.plan import Configured
    from caretz.runtime.hooks import ProjectHooksSection
    from caretz.skills.files import Skill, SkillSet
    from caretz.slash_commands.files import Catalog, CustomCommand

TRUST_FILE = "project-trust.json"
WHOLE = "*"  # the store's key of the whole's digest; the others are the parts', to say what changed
MCP_FILE = ".mcp.json"
PROJECT_LABELS = ("project", "claude")  # the command folders a repository brings
# Where those folders are (slash_commands/files.py names them): a project without these
# has none, and the command files' reader is not loaded.
COMMAND_HOMES = (".caretz", ".claude")
SKILL_HOMES = (".caretz", ".agents", ".claude")  # each with a `skills/` (skills/files.py)


@dataclass(frozen=True)
class ProjectCommand:
    """A project command file that widens: the shell lines it runs, the tools it grants."""

    name: str
    path: str  # below the project root
    shell: tuple[str, ...]
    allowed_tools: tuple[str, ...]

    def data(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "shell": list(self.shell),
            "allowedTools": list(self.allowed_tools),
        }


@dataclass(frozen=True)
class ProjectSkill:
    """A project's skill that widens: the tools it grants while it runs."""

    name: str
    path: str  # below the project root
    allowed_tools: tuple[str, ...]

    def data(self) -> dict[str, Any]:
        return {"path": self.path, "allowedTools": list(self.allowed_tools)}


@dataclass(frozen=True)
class ProjectConfig:
    """A project's configuration as read: what it brings, whether approved or not."""

    root: Path
    settings: Mapping[str, Any]  # `.caretz/settings.json` as an object ({}: none)
    hooks: ProjectHooksSection | None = None
    servers: tuple[Configured, ...] = ()
    commands: tuple[ProjectCommand, ...] = ()
    skills: tuple[ProjectSkill, ...] = ()

    @property
    def permissions(self) -> Any:
        return self.settings.get("permissions")

    @property
    def allow(self) -> list[Any]:
        """The allow rules as written (a bad one is the rule reader's error)."""
        written = self.permissions
        allow = written.get("allow") if isinstance(written, Mapping) else None
        return list(allow) if isinstance(allow, list) else []

    def parts(self) -> dict[str, Any]:
        """Each part that widens what caretz does, by a stable key, as written."""
        parts: dict[str, Any] = {}
        if self.allow:
            parts["allow"] = self.allow
        if self.hooks is not None and self.hooks.config:
            parts["hooks"] = self.hooks.data
        for server in self.servers:
            parts[f"mcp:{server.name}"] = mcp_approvals.entry_data(server.entry)
        for command in self.commands:
            parts[f"command:{command.name}"] = command.data()
        for skill in self.skills:
            parts[f"skill:{skill.name}"] = skill.data()
        return parts

    def command(self, name: str) -> ProjectCommand | None:
        return next((c for c in self.commands if c.name == name), None)


@dataclass(frozen=True)
class ProjectTrust:
    """What a session uses of its project's configuration."""

    config: ProjectConfig
    approved: bool  # the whole, as it is now (or nothing to approve)
    changed: tuple[str, ...] = ()  # the parts changed since the whole was last approved
    hooks_approved: bool = False  # the whole, or `caretz hooks approve`
    approved_servers: frozenset[str] = field(default_factory=frozenset)
    project_servers: str = "approved"  # the profile's mcp.projectServers

    def server_approved(self, name: str) -> bool:
        return self.approved or self.project_servers == "all" or name in self.approved_servers

    def ignored(self) -> list[str]:
        """The parts a session leaves out for want of approval, as keys of `parts()`."""
        if self.approved:
            return []
        keys = list(self.config.parts())
        return [key for key in keys if not self._part_used(key)]

    def _part_used(self, key: str) -> bool:
        if key == "hooks":
            return self.hooks_approved
        if key.startswith("mcp:"):
            return self.project_servers == "none" or self.server_approved(key[4:])
        return False

    def command_approved(self, command: CustomCommand) -> bool:
        """Whether `command` (as read now) may run its shell lines and grant its tools: a
        project's only when the whole was approved and the file still says the same."""
        widening = project_command(command, self.config.root)
        if widening is None:
            return True
        return self.approved and self.config.command(command.name) == widening

    def skill_approved(self, skill: Skill) -> bool:
        """Whether `skill` (as read now) may grant its `allowed-tools`: a project's only
        when the whole was approved and its SKILL.md still says the same."""
        widening = project_skill(skill, self.config.root)
        if widening is None:
            return True
        return self.approved and widening in self.config.skills


def project_trust(
    settings: Settings, workspace: Path, approved_by_client: bool = False
) -> ProjectTrust:
    """The gate: the project's configuration as it is now and what of it a session uses.
    `approved_by_client`: a client approved it for this session (the Python API's
    `trust_project`). Raises ConfigError for a file caretz cannot read."""
    return decide(settings, read_project(workspace), approved_by_client)


def decide(settings: Settings, config: ProjectConfig, by_client: bool = False) -> ProjectTrust:
    parts = part_digests(config)
    if not parts:
        return ProjectTrust(config, approved=True)  # nothing to approve
    recorded = trust_store(settings.data_dir).recorded(config.root)
    whole = by_client or recorded.get(WHOLE) == whole_digest(parts)
    changed = () if whole or WHOLE not in recorded else changed_parts(recorded, parts)
    root, data_dir = config.root, settings.data_dir
    hooks = config.hooks
    hooks_approved = whole or (
        hooks is not None and hook_approvals.HookApprovals(data_dir).approved(root, hooks.data)
    )
    servers: set[str] = set()
    if config.servers:
        approvals = mcp_approvals.Approvals(data_dir)
        servers = {s.name for s in config.servers if approvals.approved(root, s.name, s.entry)}
    policy = settings.profile.mcp.project_servers if config.servers else "approved"
    return ProjectTrust(config, whole, changed, hooks_approved, frozenset(servers), policy)


def read_project(workspace: Path) -> ProjectConfig:
    """Every part of the project's configuration, read now; raises ConfigError naming the
    file for one caretz cannot read."""
    root = find_project_root(workspace)
    try:
        written = read_project_settings(root)
    except RuleError as error:
        raise ConfigError(str(error)) from None
    hooks = None
    if written.get(runtime_hooks.PROJECT_KEY) is not None:
        hooks = runtime_hooks.project_hooks_section(root, written[runtime_hooks.PROJECT_KEY])
    servers: tuple[Configured, ...] = ()
    if (root / MCP_FILE).exists():  # else the schema (pydantic) is not loaded
        servers = tuple(mcp_server_config.project_servers(root, workspace))
    commands, skills = tuple(project_commands(root)), tuple(project_skills(root))
    return ProjectConfig(root, written, hooks, servers, commands, skills)


def project_commands(root: Path) -> list[ProjectCommand]:
    """The project's command files that run shell lines or grant tools. A folder that
    leads out of the project, or cannot be listed, brings none (its commands cannot be
    approved, so they never run their shell lines)."""
    if not any((root / home).is_dir() for home in COMMAND_HOMES):
        return []
    inside = ProjectDoor((Path(os.path.realpath(root)),))  # the project's files alone
    folders = [
        folder
        for folder in command_reading.command_folders(root, root, inside)
        if folder.label in PROJECT_LABELS and _inside(folder.path, root)
    ]
    try:
        catalog = command_reading.load_catalog(folders)
    except OSError:
        return []
    found = (project_command(command, root) for command in catalog.commands.values())
    return [command for command in found if command is not None]


def _inside(path: Path, root: Path) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def project_command(command: CustomCommand, root: Path) -> ProjectCommand | None:
    """What a command file of the project's widens (None: a user's, or one that widens
    nothing)."""
    if command.label not in PROJECT_LABELS:
        return None
    shell = tuple(span.command for span in inline.shell_spans(command.prompt))
    if not shell and not command.allowed_tools:
        return None
    try:
        path = str(command.path.relative_to(root))
    except ValueError:
        path = str(command.path)
    return ProjectCommand(command.name, path, shell, tuple(command.allowed_tools))


def project_skills(root: Path) -> list[ProjectSkill]:
    """The root's skills that grant tools (a subfolder's never grant), read through a door
    that opens the project's files alone (one leading out of it is never approved)."""
    if not has_skills(root, None):
        return []  # none: the skills' reader is not loaded
    inside = ProjectDoor((Path(os.path.realpath(root)),))
    found = skill_reading.load_skills(skill_reading.skill_folders(root, root, None, inside))
    widening = (project_skill(skill, root) for skill in found.skills.values())
    return [skill for skill in widening if skill is not None]


def project_skill(skill: Skill, root: Path) -> ProjectSkill | None:
    """What a project's skill widens (None: a user's, or one that grants nothing)."""
    if skill.scope != "project" or not skill.allowed_tools:
        return None
    return ProjectSkill(skill.name, os.path.relpath(skill.path, root), skill.allowed_tools)


def has_skills(workspace: Path, home: Path | None) -> bool:
    """Whether a skill folder stands anywhere skills are looked for (else the skills'
    modules are not loaded). `home`: the user's (None: the project's alone)."""
    root, start = find_project_root(workspace), Path(os.path.abspath(workspace))
    folders = [start, *(p for p in start.parents if root in (p, *p.parents)), *filter(None, [home])]
    return any(os.path.lexists(f / name / "skills") for f in folders for name in SKILL_HOMES)


def skill_set(settings: Settings, workspace: Path, home: Path | None) -> SkillSet:
    """The skills of a session in `workspace`: the project's (through its door), then the
    user's below `home` (None: none). Whether a project's may grant its tools is
    `ProjectTrust.skill_approved`'s."""
    door, root = sandbox_config.project_door(settings, workspace), find_project_root(workspace)
    return skill_reading.load_skills(skill_reading.skill_folders(workspace, root, home, door))


def command_catalog(settings: Settings, workspace: Path, reserved: Iterable[str] = ()) -> Catalog:
    """The custom commands of a session in `workspace` (the project's, the user's);
    `reserved`: built-in names. Whether a project's may run its shell lines is
    `ProjectTrust.command_approved`'s."""
    root = find_project_root(workspace)
    door = sandbox_config.project_door(settings, workspace)
    folders = command_reading.command_folders(root, settings.config_path.parent, door)
    return command_reading.load_catalog(folders, reserved)


def agent_catalog(settings: Settings, workspace: Path, home: Path) -> AgentCatalog:
    """The named subagents of a session in `workspace`: the project's (from `workspace` up
    to its root, through the project's door) and the user's under `home`. Nothing in an
    agent file widens what a session does (its tools and mode only narrow, under the
    session's rules and sandbox: caretz/agent/named.py), so a project's agents are used
    before the project is approved, and are no part of what approval covers."""
    root = find_project_root(workspace)
    folders = agent_folders(workspace, root, home, ProjectDoor(()))
    if not any(os.path.lexists(folder.path) for folder in folders):
        return AgentCatalog()  # none: no door built, no file reader loaded
    door = sandbox_config.project_door(settings, workspace)
    return load_agents(agent_folders(workspace, root, home, door))


# -- approving ---------------------------------------------------------------------------


def trust_store(data_dir: Path) -> ApprovalStore:
    return approvals.ApprovalStore(data_dir, TRUST_FILE)


def part_digests(config: ProjectConfig) -> dict[str, str]:
    return {key: approvals.digest(value) for key, value in config.parts().items()}


def whole_digest(parts: Mapping[str, str]) -> str:
    return approvals.digest(dict(parts))


def changed_parts(recorded: Mapping[str, str], parts: Mapping[str, str]) -> tuple[str, ...]:
    """The parts added, changed or gone since the approval `recorded`."""
    keys = dict.fromkeys([*parts, *(key for key in recorded if key != WHOLE)])
    return tuple(key for key in keys if recorded.get(key) != parts.get(key))


def approve(data_dir: Path, config: ProjectConfig) -> None:
    """Approve the project's configuration, whole, as `config` read it (in the approvals
    of caretz's data dir)."""
    parts = part_digests(config)
    trust_store(data_dir).replace(config.root, {WHOLE: whole_digest(parts), **parts})


def revoke(settings: Settings, workspace: Path) -> bool:
    """Forget every approval of the project's (the whole's and the parts'); whether there
    was one."""
    root, data_dir = find_project_root(workspace), settings.data_dir
    forgot = [
        trust_store(data_dir).forget(root),
        hook_approvals.HookApprovals(data_dir).forget(root),
        mcp_approvals.Approvals(data_dir).forget(root),
    ]
    return any(forgot)


def approve_hooks(settings: Settings, workspace: Path) -> ProjectHooksSection:
    """`caretz hooks approve`: the project's `hooks` section approved on its own, as it is
    now. Raises ConfigError when it has none."""
    config = read_project(workspace)
    if config.hooks is None or not config.hooks.config:
        where = config.root / PROJECT_SETTINGS
        raise ConfigError(f"{where}: no hooks to approve")
    hook_approvals.HookApprovals(settings.data_dir).approve(config.root, config.hooks.data)
    return config.hooks


def approve_servers(settings: Settings, workspace: Path, names: list[str]) -> list[Configured]:
    """`caretz mcp approve`: the project's servers named (all of them for none) approved on
    their own, as they are now; returns those approved. Raises ConfigError for a name the
    project's `.mcp.json` does not have."""
    config = read_project(workspace)
    servers = {server.name: server for server in config.servers}
    unknown = [name for name in names if name not in servers]
    if unknown or not servers:
        have = ", ".join(servers) or "no servers"
        missing = f"no server named {unknown[0]!r}" if unknown else "nothing to approve"
        raise ConfigError(f"{config.root / MCP_FILE}: {missing} (it has {have})")
    chosen = [servers[name] for name in names] if names else list(servers.values())
    approvals = mcp_approvals.Approvals(settings.data_dir)
    approvals.approve(config.root, {server.name: server.entry for server in chosen})
    return chosen


def save_rules_keeping_approval(settings: Settings) -> Any:
    """What "yes, always" saves a rule with: into `.caretz/settings.json`, and when the
    project's configuration was approved (or brought nothing) and only its allow rules
    changed, approved again as it is now, so the user's own answer holds next time."""

    def save(root: Path, texts: tuple[str, ...]) -> None:
        try:
            before: ProjectTrust | None = decide(settings, read_project(root))
        except ConfigError:  # a file that cannot be read now: no approval is carried
            before = None
        rule_proposals.save_allow_rules(root, texts)
        if before is None or not before.approved:
            return
        try:
            after = read_project(root)
        except ConfigError:
            return
        if changed_parts(part_digests(before.config), part_digests(after)) in ((), ("allow",)):
            approve(settings.data_dir, after)

    return save
