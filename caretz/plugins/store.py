"""Installed plugins and known marketplaces, in caretz's data dir.

`<data dir>/plugins/`: `state.json` (each plugin's source, version, marketplace and
whether it is enabled, Claude Code's `enabledPlugins`; each marketplace's source),
`installed/<name>/` (a copy of the plugin made at install: later changes to its source
change nothing until it is installed again) and `marketplaces/<name>/` (a marketplace
cloned from git). The data dir is caretz's own, so neither a project nor a sandboxed
command can change what a plugin runs; a session's sandbox shows `installed/` read-only,
so a hook can run the scripts its plugin brings.

A copy is made through the door: every file listed below the source folder without
following a symlink and read with `read_beneath` (a symlink, a FIFO, a hard link or a
file over the limit is refused, naming it), `.git` left out, executables kept executable.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from caretz import private_data
from caretz.plugins.manifest import PluginError
from caretz.sandbox.beneath import remove_tree
from caretz.sandbox.door import ProjectDoor, read_beneath, read_beneath_stat

FOLDER = "plugins"
STATE = "state.json"
MARKETPLACES = "marketplaces"
MAX_FILE_BYTES = 16 << 20
LEFT_OUT = frozenset({".git"})


@dataclass(frozen=True, kw_only=True)
class Installed:
    name: str
    source: str  # as the user named it: a path, a git URL, name@marketplace
    version: str = ""
    marketplace: str = ""
    enabled: bool = True


@dataclass(frozen=True)
class Marketplace:
    name: str
    source: str  # a path or a git URL, as the user named it
    path: str  # the folder holding `.claude-plugin/marketplace.json`


class PluginStore:
    """The plugins of the data dir `data_dir`."""

    def __init__(self, data_dir: Path):
        self.folder = data_dir / FOLDER

    def root(self, name: str) -> Path:
        return private_data.installed_plugins(self.folder.parent) / name

    def installed(self) -> list[Installed]:
        entries = self._state().get("plugins", {})
        return [Installed(**_fields(Installed, entry)) for entry in entries.values()]

    def get(self, name: str) -> Installed | None:
        return next((plugin for plugin in self.installed() if plugin.name == name), None)

    def enabled(self) -> list[Installed]:
        return [plugin for plugin in self.installed() if plugin.enabled]

    def add(self, plugin: Installed, source: Path) -> Path:
        """A copy of the plugin folder `source` installed as `plugin` (one installed
        before under its name replaced); returns where it is."""
        work = private_data.make_new_dir(self.folder / f".new-{os.urandom(6).hex()}")
        try:
            copy_tree(source, work)
            target = self.root(plugin.name)
            private_data.make_dir(target.parent)
            if os.path.lexists(target):
                remove_tree(target)
            private_data.move_folder(work, target)
        finally:
            remove_tree(work)
        self._record("plugins", plugin.name, asdict(plugin))
        return target

    def remove(self, name: str) -> bool:
        if self.get(name) is None:
            return False
        remove_tree(self.root(name))
        self._record("plugins", name, None)
        return True

    def set_enabled(self, name: str, enabled: bool) -> bool:
        plugin = self.get(name)
        if plugin is None:
            return False
        self._record("plugins", name, {**asdict(plugin), "enabled": enabled})
        return True

    def marketplaces(self) -> list[Marketplace]:
        entries = self._state().get("marketplaces", {})
        return [Marketplace(**_fields(Marketplace, entry)) for entry in entries.values()]

    def marketplace(self, name: str) -> Marketplace | None:
        return next((m for m in self.marketplaces() if m.name == name), None)

    def add_marketplace(self, marketplace: Marketplace) -> None:
        self._record("marketplaces", marketplace.name, asdict(marketplace))

    def remove_marketplace(self, name: str) -> bool:
        if self.marketplace(name) is None:
            return False
        remove_tree(self.folder / MARKETPLACES / name)  # a cloned one's copy
        self._record("marketplaces", name, None)
        return True

    def work_folder(self) -> Path:
        """A new private folder to clone into (the caller removes it)."""
        return private_data.make_new_dir(self.folder / f".clone-{os.urandom(6).hex()}")

    def _state(self) -> dict[str, Any]:
        try:
            data = json.loads(read_beneath(self.folder, STATE, MAX_FILE_BYTES))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            raise PluginError(f"{self.folder / STATE}: cannot be read ({error})") from None
        return data if isinstance(data, dict) else {}

    def _record(self, kind: str, name: str, entry: dict[str, Any] | None) -> None:
        state = self._state()
        table = state.setdefault(kind, {})
        if entry is None:
            table.pop(name, None)
        else:
            table[name] = entry
        private_data.write_file(self.folder / STATE, json.dumps(state, indent=2) + "\n")


def _fields(kind: type, entry: Any) -> dict[str, Any]:
    names = kind.__dataclass_fields__  # type: ignore[attr-defined]
    return {key: value for key, value in dict(entry).items() if key in names}


def copy_tree(source: Path, target: Path) -> int:
    """Every file below `source` (but `.git`) copied below `target` through the door;
    returns how many. Raises PluginError naming a file the door refuses."""
    door = ProjectDoor((Path(os.path.realpath(source)),))
    try:
        listed = door.list_files(source, "")
    except OSError as error:
        raise PluginError(f"{source}: cannot be listed ({error})") from None
    count = 0
    for path in listed:
        relative = path.relative_to(source)
        if LEFT_OUT & set(relative.parts):
            continue
        try:
            data, info = read_beneath_stat(source, relative.as_posix(), MAX_FILE_BYTES)
        except OSError as error:
            raise PluginError(
                f"{path}: not copied ({error}); the plugin is not installed"
            ) from None
        private_data.write_file(target / relative, data, executable=bool(info.st_mode & 0o100))
        count += 1
    return count
