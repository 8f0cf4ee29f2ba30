"""A session's installed plugins (caretz/plugins/): each enabled one's parts, read where
it is installed, for the loaders that already read the project's and the user's.

Commands, agents and skills join their catalogs under the plugin's name
(`/plugin-name:review`, `plugin-name:reviewer`, `plugin-name:lint`), read through a door
whose one root is the plugin's folder. Hooks and MCP servers are parts of the project's
configuration as the project's gate reads it (runtime/project_trust.py): they run only
once approved, like a project's own (`caretz trust`, the interactive question, `caretz
mcp approve`), and a hook that asks to leave the sandbox is refused as a project's is.
A plugin caretz cannot read is a ConfigError naming the file.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.agent_files.folders import AgentFolder
from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.plugins import manifest as plugin_manifest
from caretz.plugins.store import PluginStore
from caretz.private_data import installed_plugins
from caretz.sandbox.door import ProjectDoor
from caretz.skills.files import SkillFolder
from caretz.slash_commands.files import CommandFolder

if TYPE_CHECKING:
    from caretz.hooks.config import HooksConfig
    from caretz.mcp_client.plan import Configured

if TYPE_CHECKING:
    import pydantic

    from caretz.config import errors as config_errors
    from caretz.config import mcp_servers as mcp_server_config
    from caretz.hooks import config as hook_config
else:
    # The schemas: only with a plugin that has hooks or servers.
    pydantic = lazy_module("pydantic")
    config_errors = lazy_module("caretz.config.errors")
    hook_config = lazy_module("caretz.hooks.config")
    mcp_server_config = lazy_module("caretz.config.mcp_servers")

LABEL = "plugin"


@dataclass(frozen=True)
class PluginHooks:
    source: str  # `plugin NAME: hooks/hooks.json`, as a hook's messages name it
    data: Any  # as written (the plugin's folder in place of ${CLAUDE_PLUGIN_ROOT})
    config: HooksConfig


@dataclass(frozen=True, kw_only=True)
class PluginParts:
    """An enabled plugin, as installed now."""

    name: str
    root: Path
    manifest: plugin_manifest.Manifest
    hooks: tuple[PluginHooks, ...] = ()
    servers: tuple[Configured, ...] = ()

    @property
    def door(self) -> ProjectDoor:
        return ProjectDoor((Path(os.path.realpath(self.root)),))

    def hooks_data(self) -> list[Any]:
        """What approving the plugin's hooks approves."""
        return [{"source": hooks.source, "hooks": hooks.data} for hooks in self.hooks]


def enabled_plugins(data_dir: Path) -> tuple[PluginParts, ...]:
    """The enabled plugins' parts (none installed: nothing read); ConfigError for one
    caretz cannot read."""
    if not os.path.isdir(installed_plugins(data_dir)):
        return ()
    store = PluginStore(data_dir)
    try:
        return tuple(read_plugin(store.root(plugin.name)) for plugin in store.enabled())
    except plugin_manifest.PluginError as error:
        raise ConfigError(str(error)) from None


def read_plugin(root: Path) -> PluginParts:
    """The plugin installed at `root`; raises PluginError naming the file."""
    found = plugin_manifest.read_manifest(root)
    hooks = tuple(_hooks(root, found, entry) for entry in found.hooks)
    servers = [server for entry in found.servers for server in _servers(root, found, entry)]
    return PluginParts(
        name=found.name,
        root=root,
        manifest=found,
        hooks=tuple(h for h in hooks if h),
        servers=tuple(servers),
    )


def _written(root: Path, entry: Any, default: str) -> tuple[str, Any] | None:
    """(where, data) of a part the manifest names (a path, or an object written inline)."""
    if not isinstance(entry, str):
        return plugin_manifest.MANIFEST, entry
    try:
        return entry, plugin_manifest.read_json(root, entry)
    except FileNotFoundError:
        if entry == default:
            return None  # no such part
        missing = f"{root / entry}: no such file (plugin.json names it)"
        raise plugin_manifest.PluginError(missing) from None


def _hooks(root: Path, found: plugin_manifest.Manifest, entry: Any) -> PluginHooks | None:
    written = _written(root, entry, plugin_manifest.DEFAULT_HOOKS)
    if written is None:
        return None
    where, data = written
    data = plugin_manifest.with_root(data, root)
    section = with_root_variable(data.get("hooks") if isinstance(data, dict) else None, root)
    schema = hook_config.ProjectHooks
    try:
        context = {hook_config.PROJECT_CONTEXT: True}  # no plugin hook leaves the sandbox
        config = schema.model_validate({"hooks": section or {}}, context=context).hooks
    except pydantic.ValidationError as error:
        problem = config_errors.describe_validation_error(schema, error)
        raise plugin_manifest.PluginError(f"{root / where}: {problem}") from None
    return PluginHooks(f"plugin {found.name}: {where}", section, config)


def with_root_variable(section: Any, root: Path) -> Any:
    """A hooks section whose commands see `CLAUDE_PLUGIN_ROOT` in their environment, as
    a plugin's scripts expect (shown so wherever the command is shown for approval)."""
    if not isinstance(section, dict):
        return section
    export = f"export CLAUDE_PLUGIN_ROOT={shlex.quote(str(root))}; "
    for groups in section.values():
        for group in groups if isinstance(groups, list) else []:
            hooks = group.get("hooks") if isinstance(group, dict) else None
            for hook in hooks if isinstance(hooks, list) else []:
                if isinstance(hook, dict) and isinstance(hook.get("command"), str):
                    hook["command"] = export + hook["command"]
    return section


def _servers(root: Path, found: plugin_manifest.Manifest, entry: Any) -> list[Configured]:
    written = _written(root, entry, plugin_manifest.DEFAULT_SERVERS)
    if written is None:
        return []
    where, data = written
    data = plugin_manifest.with_root(data, root)
    if isinstance(data, dict) and "mcpServers" not in data and where == plugin_manifest.MANIFEST:
        data = {"mcpServers": data}  # plugin.json's `mcpServers` is the table itself
    try:
        servers = mcp_server_config.servers_of(data, root / where, f"plugin {found.name}")
    except ConfigError as error:
        raise plugin_manifest.PluginError(str(error)) from None
    prefix = f"plugin:{found.name}:"
    return [dataclasses.replace(server, name=prefix + server.name) for server in servers]


def command_folders(plugins: tuple[PluginParts, ...]) -> list[CommandFolder]:
    return [
        CommandFolder(plugin.root / path, LABEL, plugin.door, plugin.name)
        for plugin in plugins
        for path in plugin.manifest.commands
    ]


def agent_folders(plugins: tuple[PluginParts, ...]) -> list[AgentFolder]:
    return [
        AgentFolder(
            path=plugin.root / path,
            suffix=".md",
            scope=LABEL,
            door=plugin.door,
            namespace=plugin.name,
        )
        for plugin in plugins
        for path in plugin.manifest.agents
    ]


def skill_folders(plugins: tuple[PluginParts, ...]) -> list[SkillFolder]:
    return [
        SkillFolder(plugin.root / path, LABEL, plugin.door, plugin.name)
        for plugin in plugins
        for path in plugin.manifest.skills
    ]


def folders(plugins: tuple[PluginParts, ...], kind: str) -> list[Any]:
    """The plugins' `commands`, `agents` or `skills` folders, for their loaders."""
    if kind == "commands":
        return list(command_folders(plugins))
    if kind == "agents":
        return list(agent_folders(plugins))
    return list(skill_folders(plugins))
