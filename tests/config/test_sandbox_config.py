"""The sandbox settings: profile `sandbox` and `shellEnv`, CARETZ_SANDBOX, --sandbox, --add-dir,
and the session's sandbox built from them (or refused in one line where none works)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from caretz.config.sandbox import open_session_sandbox, sandbox_policy, shell_env_filter
from caretz.config.settings import Settings, resolve_settings, sandbox_mode_for
from caretz.config_base import ConfigError
from caretz.sandbox.detect import BwrapProbe, SandboxBackend, check_sandbox
from caretz.sandbox.policy import SandboxMode

MISSING = BwrapProbe(None, False, "not found on PATH")


def write_profile(**profile: object) -> None:
    Path(os.environ["CARETZ_CONFIG"]).write_text(json.dumps({"profiles": {"general": profile}}))


def settings(flags: dict | None = None, **env: str) -> Settings:
    return resolve_settings(flags or {}, {**os.environ, **env})


def test_defaults_are_workspace_write_without_network():
    resolved = settings()
    assert resolved.sandbox_mode is SandboxMode.WORKSPACE_WRITE
    assert resolved.sandbox.network is False and resolved.sandbox.add_dirs == ()
    assert resolved.shell_env == []


def test_a_flag_beats_the_variable_which_beats_the_profile(tmp_path):
    write_profile(sandbox={"mode": "read-only", "addDirs": ["~/lib"]}, shellEnv=["GH_TOKEN"])
    assert settings().sandbox_mode is SandboxMode.READ_ONLY
    assert settings(CARETZ_SANDBOX="off").sandbox_mode is SandboxMode.OFF
    flags = {"sandbox": "workspace-write", "add_dir": [str(tmp_path), "vendor"]}
    both = settings(flags, CARETZ_SANDBOX="off")
    assert both.sandbox_mode is SandboxMode.WORKSPACE_WRITE
    assert both.sandbox.add_dirs == ("~/lib", str(tmp_path), "vendor")
    assert both.shell_env == ["GH_TOKEN"]


def test_bad_values_are_one_line_naming_the_setting():
    with pytest.raises(ConfigError, match="^--sandbox 'open': Input should be 'workspace-write'"):
        settings({"sandbox": "open"})
    with pytest.raises(ConfigError, match="^CARETZ_SANDBOX='none': "):
        settings(CARETZ_SANDBOX="none")
    write_profile(sandbox={"mode": "workspace-write", "netwrok": True})
    with pytest.raises(ConfigError, match="netwrok"):
        settings()


def test_the_permission_mode_decides_the_sandbox_mode_where_it_must():
    assert sandbox_mode_for("read-only", "yolo") is SandboxMode.OFF
    assert sandbox_mode_for("workspace-write", "read-only") is SandboxMode.READ_ONLY
    for permission in ("auto", "ask", None):  # the sandbox's own setting decides
        assert sandbox_mode_for("read-only", permission) is SandboxMode.READ_ONLY
        assert sandbox_mode_for("off", permission) is SandboxMode.OFF


def test_the_policy_hides_caretz_own_files_and_adds_the_roots(tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    resolved = settings({"add_dir": [str(extra)]})
    policy = sandbox_policy(resolved, work, {"HOME": str(tmp_path)})
    assert policy.roots == (work.resolve(), extra.resolve())
    assert resolved.config_path.absolute() in policy.hidden
    assert resolved.data_dir.absolute() in policy.hidden
    assert set(policy.caretz_dirs) >= {resolved.config_path.absolute(), resolved.data_dir}
    with pytest.raises(ConfigError, match="^sandbox: sandbox root .*: not a directory$"):
        sandbox_policy(settings({"add_dir": [str(tmp_path / "nope")]}), work, os.environ)


def test_the_filter_drops_every_provider_key_and_passes_shell_env():
    Path(os.environ["CARETZ_CONFIG"]).write_text(
        json.dumps(
            {
                "profiles": {"general": {"shellEnv": ["GITHUB_TOKEN"]}},
                "providers": {
                    "corp": {
                        "protocol": "openai",
                        "baseUrl": "https://llm.corp/v1",
                        "apiKeyEnv": "CORP_LLM",
                    }
                },
            }
        )
    )
    env = {"CORP_LLM": "k1", "ANTHROPIC_API_KEY": "k2", "GITHUB_TOKEN": "k3", "PATH": "/bin"}
    assert shell_env_filter(settings()).apply(env) == {"GITHUB_TOKEN": "k3", "PATH": "/bin"}


def test_where_no_sandbox_works_the_session_does_not_start(tmp_path):
    nothing = check_sandbox(SandboxMode.WORKSPACE_WRITE, bwrap=MISSING, landlock_abi=0)
    with pytest.raises(ConfigError) as caught:
        open_session_sandbox(settings(), tmp_path, os.environ, nothing)
    message = str(caught.value)
    assert "\n" not in message
    assert "apt install bubblewrap" in message and "--sandbox off" in message
    mac = check_sandbox(SandboxMode.WORKSPACE_WRITE, platform="darwin")
    with pytest.raises(ConfigError, match="needs Linux .* this is darwin; run with --sandbox off"):
        open_session_sandbox(settings(), tmp_path, os.environ, mac)
    off = settings({"sandbox": "off"})
    sandbox, _ = open_session_sandbox(off, tmp_path, os.environ, mac)
    assert not sandbox.enforced and sandbox.backend is SandboxBackend.NONE


def test_landlock_is_the_fallback_and_says_so(tmp_path):
    fallback = check_sandbox(SandboxMode.WORKSPACE_WRITE, bwrap=MISSING)
    sandbox, check = open_session_sandbox(settings(), tmp_path, os.environ, fallback)
    assert sandbox.backend is SandboxBackend.LANDLOCK and sandbox.enforced
    assert check.notice is not None and "apt install bubblewrap" in check.notice


def test_sandbox_check_exits_1_where_nothing_works(capsys):
    from caretz.commands.sandbox import check_sandbox_command

    nothing = check_sandbox(SandboxMode.WORKSPACE_WRITE, bwrap=MISSING, landlock_abi=0)
    assert check_sandbox_command({}, "text", nothing) == 1
    shown = capsys.readouterr().out
    assert "commands run with: nothing: a sandboxed mode cannot start" in shown
    assert "error: no command sandbox here" in shown and "--sandbox off" in shown
    assert check_sandbox_command({}, "json", nothing) == 1
    assert json.loads(capsys.readouterr().out)["backend"] == "none"
    assert check_sandbox_command({}, "yaml") == 2
