"""`caretz plugin`: install, list, enable, disable and remove Claude Code plugins, and the
marketplaces `name@marketplace` installs from (docs/plugins.md)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.commands.loading import with_settings
from caretz.config_base import ConfigError
from caretz.plugins import sources
from caretz.plugins.manifest import PluginError
from caretz.plugins.store import PluginStore
from caretz.runtime.plugins import read_plugin
from caretz.usage_error import fail

if TYPE_CHECKING:
    from caretz.config.overrides import Flags
    from caretz.config.settings import Settings


def plugin_command(overrides: Flags, work: Callable[[PluginStore], int]) -> int:
    """`work` on the installed plugins of the settings' data dir; a plugin or a source
    caretz cannot use is one line, exit 2."""

    def run(settings: Settings) -> int:
        try:
            return work(PluginStore(settings.data_dir))
        except (PluginError, ConfigError) as error:
            return fail(str(error))

    return with_settings(overrides, run)


def install(store: PluginStore, spec: str) -> int:
    plugin = sources.install(store, spec, os.environ, Path.cwd(), check=read_plugin)
    parts = read_plugin(store.root(plugin.name))
    version = f" {plugin.version}" if plugin.version else ""
    sys.stdout.write(f"installed {plugin.name}{version} from {spec}\n")
    if parts.hooks or parts.servers:
        sys.stdout.write(
            "its hooks and MCP servers ask before they first run: see them with caretz trust --show\n"
        )
    return 0


def listed(store: PluginStore, output: str) -> int:
    if output not in ("text", "json"):
        return fail(f"--output {output!r}: use text or json")
    rows = [_row(store, plugin.name) for plugin in store.installed()]
    if output == "json":
        sys.stdout.write(json.dumps({"plugins": rows}, indent=2) + "\n")
        return 0
    if not rows:
        sys.stdout.write("no plugins installed (caretz plugin install PATH|GIT_URL|NAME@MARKET)\n")
    for row in rows:
        state = "enabled" if row["enabled"] else "disabled"
        version = f" {row['version']}" if row["version"] else ""
        sys.stdout.write(f"{row['name']}{version} ({state}) from {row['source']}\n")
        if row["description"]:
            sys.stdout.write(f"  {row['description']}\n")
        brings = ", ".join(f"{count} {kind}" for kind, count in row["parts"].items() if count)
        sys.stdout.write(f"  {brings or 'nothing caretz reads'}\n")
    return 0


def _row(store: PluginStore, name: str) -> dict[str, Any]:
    plugin = store.get(name)
    assert plugin is not None
    parts = read_plugin(store.root(name))
    folders = {"commands": parts.manifest.commands, "agents": parts.manifest.agents}
    counts = {
        kind: sum(len(parts.door.list_files(parts.root / path, ".md")) for path in paths)
        for kind, paths in folders.items()
    }
    skills = sum(
        len(parts.door.list_files(parts.root / path, "SKILL.md")) for path in parts.manifest.skills
    )
    hooks = sum(len(h.data or {}) for h in parts.hooks)
    counts.update({"skills": skills, "hook events": hooks, "MCP servers": len(parts.servers)})
    return {
        "name": name,
        "version": plugin.version,
        "description": parts.manifest.description,
        "source": plugin.source,
        "marketplace": plugin.marketplace,
        "enabled": plugin.enabled,
        "path": str(store.root(name)),
        "parts": counts,
    }


def remove(store: PluginStore, name: str) -> int:
    if not store.remove(name):
        return fail(f"no plugin named {name!r} is installed (caretz plugin list)")
    sys.stdout.write(f"removed {name}\n")
    return 0


def enable(store: PluginStore, name: str, enabled: bool) -> int:
    if not store.set_enabled(name, enabled):
        return fail(f"no plugin named {name!r} is installed (caretz plugin list)")
    sys.stdout.write(f"{'enabled' if enabled else 'disabled'} {name}\n")
    return 0


def marketplace_add(store: PluginStore, spec: str) -> int:
    found = sources.add_marketplace(store, spec, os.environ, Path.cwd())
    count = len(sources.marketplace_entries(Path(found.path)))
    sys.stdout.write(f"added marketplace {found.name} ({count} plugins) from {spec}\n")
    return 0


def marketplace_list(store: PluginStore) -> int:
    found = store.marketplaces()
    if not found:
        sys.stdout.write("no marketplaces (caretz plugin marketplace add PATH|GIT_URL)\n")
    for marketplace in found:
        sys.stdout.write(f"{marketplace.name} from {marketplace.source}\n")
        for entry in sources.marketplace_entries(Path(marketplace.path)):
            if isinstance(entry, dict):
                about = entry.get("description") or ""
                sys.stdout.write(f"  {entry.get('name')}@{marketplace.name}  {about}\n")
    return 0


def marketplace_remove(store: PluginStore, name: str) -> int:
    if not store.remove_marketplace(name):
        return fail(f"no marketplace named {name!r} (caretz plugin marketplace list)")
    sys.stdout.write(f"removed marketplace {name}\n")
    return 0
