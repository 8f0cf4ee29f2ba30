"""Where a plugin comes from: a folder, a git repository, or `name@marketplace`.

A git source is cloned by the trusted git (worktrees/git.py: the first `git` on PATH no
sandboxed command could have written, no inherited `GIT_*` that points it elsewhere)
into a private folder of caretz's data dir, with no hooks (an empty template and
`core.hooksPath=/dev/null`), no submodules, and only the file, https and ssh protocols
(no `ext::` helper, no plain http); then it is copied like any folder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from caretz import private_data
from caretz.plugins.manifest import PluginError, below, read_json, read_manifest
from caretz.plugins.store import MARKETPLACES, Installed, Marketplace, PluginStore
from caretz.sandbox.beneath import remove_tree
from caretz.worktrees.git import RepoGit, WorktreeError

MARKETPLACE_FILE = ".claude-plugin/marketplace.json"
GIT_URL = re.compile(r"^(https://|ssh://|file://|git@[^:/]+:)")
GITHUB_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
CLONE_OPTIONS = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "protocol.allow=never",
    "-c", "protocol.file.allow=always",
    "-c", "protocol.https.allow=always",
    "-c", "protocol.ssh.allow=always",
    "-c", "core.fsmonitor=false",
)  # fmt: skip


def is_git_url(text: str) -> bool:
    return bool(GIT_URL.match(text))


def clone(store: PluginStore, url: str, env: Mapping[str, str], into: Path | None = None) -> Path:
    """A fresh clone of `url` (its default branch, no history) in a new private folder
    (or `into`); PluginError with git's last line when it fails."""
    if not is_git_url(url):
        raise PluginError(f"{url}: not a git URL caretz clones (https://, ssh://, git@, file://)")
    work = into or store.work_folder()
    try:
        git = RepoGit.find(work, env)
        argv = [*CLONE_OPTIONS, "clone", "--quiet", "--depth", "1", "--template="]
        git.run(work, *argv, "--no-recurse-submodules", "--", url, str(work / "repo"))
    except WorktreeError as error:
        remove_tree(work)
        raise PluginError(f"{url}: git clone failed: {error}") from None
    return work / "repo"


def install(
    store: PluginStore,
    spec: str,
    env: Mapping[str, str],
    cwd: Path,
    check: Callable[[Path], object] = read_manifest,
) -> Installed:
    """`caretz plugin install SPEC`: a folder, a git URL, or `name@marketplace`; `check`
    reads the plugin as a session would (PluginError) before anything is copied."""
    work: Path | None = None
    marketplace = ""
    try:
        if is_git_url(spec):
            folder = clone(store, spec, env)
            work = folder.parent
        elif "@" in spec and not os.path.exists(cwd / spec):
            name, _, marketplace = spec.rpartition("@")
            folder, work = marketplace_plugin(store, name, marketplace, env)
        else:
            folder = Path(os.path.abspath(cwd / spec))
            if not folder.is_dir():
                raise PluginError(f"{spec}: no such folder, git URL or name@marketplace")
        check(folder)
        manifest = read_manifest(folder)
        plugin = Installed(
            name=manifest.name, source=spec, version=manifest.version, marketplace=marketplace
        )
        store.add(plugin, folder)
        return plugin
    finally:
        if work is not None:
            remove_tree(work)


def marketplace_plugin(
    store: PluginStore, name: str, market: str, env: Mapping[str, str]
) -> tuple[Path, Path | None]:
    """The folder of plugin `name` in the marketplace `market`, and a clone to remove
    afterwards (None: a folder of the marketplace's own)."""
    known = store.marketplace(market)
    if known is None:
        have = ", ".join(m.name for m in store.marketplaces()) or "none"
        raise PluginError(
            f"no marketplace named {market!r} (known: {have}): add it with "
            "caretz plugin marketplace add PATH|GIT_URL"
        )
    root = Path(known.path)
    where = root / MARKETPLACE_FILE
    listed = marketplace_entries(root)
    entry = next((e for e in listed if isinstance(e, dict) and e.get("name") == name), None)
    if entry is None:
        have = ", ".join(str(e.get("name")) for e in listed if isinstance(e, dict))
        raise PluginError(f"{where}: no plugin named {name!r} (it has {have or 'none'})")
    source = entry.get("source")
    if isinstance(source, str) and not is_git_url(source):
        base = _plugin_root(read_json(root, MARKETPLACE_FILE))
        relative = below(str(Path(base) / source), where, f"plugins[{name}].source")
        real, top = os.path.realpath(root / relative), os.path.realpath(root)
        if not real.startswith(top.rstrip(os.sep) + os.sep):
            raise PluginError(f"{where}: plugin {name!r}: {source!r} leads out of the marketplace")
        return root / relative, None
    url = _git_source(source, where, name)
    folder = clone(store, url, env)
    return folder, folder.parent


def _plugin_root(data: Any) -> str:
    metadata = data.get("metadata") if isinstance(data, dict) else None
    base = metadata.get("pluginRoot") if isinstance(metadata, dict) else None
    return base if isinstance(base, str) else "."


def _git_source(source: Any, where: Path, name: str) -> str:
    if isinstance(source, str):
        return source
    if isinstance(source, dict) and source.get("source") == "github":
        repo = source.get("repo")
        if isinstance(repo, str) and GITHUB_REPO.match(repo):
            return f"https://github.com/{repo}.git"
    if isinstance(source, dict) and source.get("source") in ("url", "git"):
        url = source.get("url")
        if isinstance(url, str):
            return url
    raise PluginError(f"{where}: plugin {name!r}: a source caretz cannot install ({source!r})")


def marketplace_entries(root: Path) -> list[Any]:
    where = root / MARKETPLACE_FILE
    try:
        data = read_json(root, MARKETPLACE_FILE)
    except FileNotFoundError:
        raise PluginError(f"{where}: no marketplace file here") from None
    plugins = data.get("plugins") if isinstance(data, dict) else None
    if not isinstance(plugins, list):
        raise PluginError(f"{where}: the file must hold an object with a `plugins` list")
    return plugins


def add_marketplace(
    store: PluginStore, spec: str, env: Mapping[str, str], cwd: Path
) -> Marketplace:
    """`caretz plugin marketplace add SPEC`: a folder (read where it is) or a git
    repository (`owner/repo` for GitHub's), cloned into caretz's data dir."""
    url = f"https://github.com/{spec}.git" if _is_github(spec, cwd) else spec
    if is_git_url(url):
        folder = clone(store, url, env)
        try:
            name = _marketplace_name(folder)
            target = store.folder / MARKETPLACES / name
            if os.path.lexists(target):
                remove_tree(target)
            private_data.make_dir(target.parent)
            private_data.move_folder(folder, target)
        finally:
            remove_tree(folder.parent)
        found = Marketplace(name, spec, str(target))
    else:
        folder = Path(os.path.abspath(cwd / spec))
        if not folder.is_dir():
            raise PluginError(f"{spec}: no such folder or git URL")
        found = Marketplace(_marketplace_name(folder), spec, str(folder))
    store.add_marketplace(found)
    return found


def _is_github(spec: str, cwd: Path) -> bool:
    return bool(GITHUB_REPO.match(spec)) and not os.path.exists(cwd / spec)


def _marketplace_name(root: Path) -> str:
    marketplace_entries(root)  # a marketplace file with its list, or PluginError
    data = read_json(root, MARKETPLACE_FILE)
    name = data.get("name")
    if not isinstance(name, str) or not name.strip() or "@" in name or "/" in name:
        raise PluginError(f"{root / MARKETPLACE_FILE}: name must name the marketplace")
    return name
