"""The sandbox check and git status a session's start runs early give the answers the
session would have found itself, and a bad setting still fails where it always did."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from caretz.agent.prompts import git_lines, system_prompt
from caretz.config.sandbox import sandbox_policy, session_programs
from caretz.config.settings import resolve_settings
from caretz.config_base import ConfigError
from caretz.runtime.probes import StartProbes
from caretz.sandbox.detect import check_sandbox
from tests.checkpoints.helpers import GIT_ENV, require_git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git = require_git()
    folder = tmp_path / "project"
    folder.mkdir()
    env = {**os.environ, **GIT_ENV}
    subprocess.run([git, "init", "-q", "-b", "main"], cwd=folder, check=True, env=env)
    (folder / "changed.txt").write_text("new\n")
    return folder


def settings_for(tmp_path: Path, **flags: object):
    env = {"ANTHROPIC_API_KEY": "k", "CARETZ_CONFIG": str(tmp_path / "profiles.json")}
    return resolve_settings({"model": "anthropic/claude-test", **flags}, env)


def test_the_probes_answer_as_the_session_would_have(repo: Path, tmp_path: Path):
    settings = settings_for(tmp_path)
    probes = StartProbes(settings, repo, os.environ)

    policy = sandbox_policy(settings, repo, os.environ)
    programs = session_programs(policy, os.environ)
    assert programs.git.path is not None
    assert probes.git_status() == git_lines(repo, programs.git.path)
    assert probes.git_status() == ["- git: main; 1 changed: ?? changed.txt"]
    assert probes.sandbox_check() == check_sandbox(policy.mode, policy.network, programs=programs)


def test_the_prompt_with_the_probed_status_is_the_prompt_without(repo: Path, tmp_path: Path):
    from caretz.agent.prompts import SessionEnvironment

    git = session_programs(sandbox_policy(settings_for(tmp_path), repo, os.environ), os.environ)
    probed = StartProbes(settings_for(tmp_path), repo, os.environ).git_status()
    asked = SessionEnvironment(git=git.git.path)
    given = SessionEnvironment(git=git.git.path, git_status=probed)
    assert system_prompt(repo, None, given) == system_prompt(repo, None, asked)
    assert "1 changed: ?? changed.txt" in system_prompt(repo, None, given)


def test_a_bad_setting_fails_when_the_sandbox_is_asked_for(tmp_path: Path):
    settings = settings_for(tmp_path, add_dir=[str(tmp_path / "missing")])
    probes = StartProbes(settings, tmp_path, os.environ)  # starting raises nothing

    with pytest.raises(ConfigError, match="sandbox: "):
        probes.sandbox_check()


def test_a_local_servers_context_window_is_asked_while_the_rest_starts(tmp_path: Path):
    from caretz.providers.anthropic import AnthropicProvider
    from caretz.providers.registry import BUILTIN_PROVIDERS
    from tests.modelserver import ModelServer

    with ModelServer() as server:
        server.props = {"default_generation_settings": {"n_ctx": 8192}}
        provider = AnthropicProvider(BUILTIN_PROVIDERS["anthropic"], "k", base_url=server.url)
        window = StartProbes(settings_for(tmp_path), tmp_path, os.environ).ask_served_window(
            provider
        )
        assert window() == 8192
