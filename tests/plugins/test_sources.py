"""A plugin's files and sources on their own: what plugin.json may name, the copy made
through the door, and the clone that runs nothing the repository or git's config brings."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from caretz.plugins.manifest import PluginError, read_manifest, with_root
from caretz.plugins.sources import clone
from caretz.plugins.store import PluginStore, copy_tree
from tests.checkpoints.helpers import git


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_plugin_json_paths_stay_inside_the_plugin_and_its_name_is_kebab_case(tmp_path):
    manifest = write(tmp_path / "p" / ".claude-plugin" / "plugin.json", "")
    for written, problem in [
        ('{"name": "ok", "commands": "../elsewhere"}', "must be a path inside the plugin"),
        ('{"name": "ok", "agents": ["/etc"]}', "must be a path inside the plugin"),
        ('{"name": "Not Kebab"}', "is no plugin name"),
        ('["a list"]', "must hold a JSON object"),
    ]:
        manifest.write_text(written)
        with pytest.raises(PluginError) as refused:
            read_manifest(tmp_path / "p")
        assert str(refused.value).startswith(f"{manifest}: ") and problem in str(refused.value)

    manifest.write_text('{"name": "ok", "commands": ["./extra"], "hooks": "./more.json"}')
    found = read_manifest(tmp_path / "p")
    assert found.commands == ("commands", "extra")
    assert found.hooks == ("hooks/hooks.json", "more.json")


def test_the_plugin_root_variable_becomes_the_installed_folder_in_every_string():
    data = {"a": ["${CLAUDE_PLUGIN_ROOT}/x.sh", 3], "b": {"c": "${CLAUDE_PLUGIN_ROOT}"}}
    assert with_root(data, Path("/p")) == {"a": ["/p/x.sh", 3], "b": {"c": "/p"}}


def test_a_copy_refuses_a_file_that_leads_out_of_the_plugin_and_leaves_git_out(tmp_path):
    source = tmp_path / "plugin"
    write(source / "commands" / "a.md", "A")
    write(source / ".git" / "config", "[core]")
    secret = write(tmp_path / "secret.txt", "key")

    assert copy_tree(source, tmp_path / "copy") == 1
    assert not (tmp_path / "copy" / ".git").exists()

    os.symlink(secret, source / "commands" / "leak.md")
    with pytest.raises(PluginError) as refused:
        copy_tree(source, tmp_path / "again")
    assert str(source / "commands" / "leak.md") in str(refused.value)
    assert not (tmp_path / "again" / "commands" / "leak.md").exists()


def test_a_clone_runs_no_hook_and_takes_no_protocol_but_file_https_and_ssh(tmp_path):
    repo = write(tmp_path / "repo" / "README.md", "plugin").parent
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "x")
    hooks = tmp_path / "hooks"
    marker = tmp_path / "hook-ran"
    write(hooks / "post-checkout", f"#!/bin/sh\ntouch {marker}\n").chmod(0o755)
    config = write(tmp_path / "gitconfig", f"[core]\n\thooksPath = {hooks}\n")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": str(config)}
    subprocess.run(["git", "clone", "-q", str(repo), str(tmp_path / "plain")], env=env, check=True)
    assert marker.exists()  # the user's global hooks run on a plain clone
    marker.unlink()
    store = PluginStore(tmp_path / "data")

    cloned = clone(store, f"file://{repo}", env)

    assert (cloned / "README.md").read_text() == "plugin"
    assert not marker.exists()
    for url in ("ext::sh -c touch% /tmp/x", "http://example.com/p.git", str(repo)):
        with pytest.raises(PluginError, match="not a git URL caretz clones"):
            clone(store, url, env)
