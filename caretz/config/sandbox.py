"""The session's sandbox policy and environment filter, from the resolved settings.

caretz's own files are hidden from commands and never written by the file tools: the
settings file (and the platform's caretz config dir, where profiles.json lives by
default) and the data dir, where the session logs are.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from caretz.config.settings import Settings
from caretz.config_base import ConfigError
from caretz.sandbox.detect import SandboxCheck, SandboxUnavailable, check_sandbox
from caretz.sandbox.envfilter import EnvFilter
from caretz.sandbox.policy import PolicyError, SandboxPolicy, build_policy, home_from_env
from caretz.sandbox.runner import Sandbox, open_sandbox
from caretz.sandbox.runtime import SessionRuntime, sessions_parent


def caretz_paths(settings: Settings) -> list[Path]:
    from platformdirs import user_config_dir

    return [settings.config_path, Path(user_config_dir("caretz")), settings.data_dir]


def sandbox_policy(settings: Settings, cwd: Path, env: Mapping[str, str]) -> SandboxPolicy:
    """The policy for commands run from `cwd`; a root that is not a directory, or a `~user`
    path, is a ConfigError naming the setting."""
    section = settings.sandbox
    try:
        return build_policy(
            cwd=cwd,
            home=home_from_env(env),
            mode=settings.sandbox_mode,
            add_dirs=section.add_dirs,
            network=section.network,
            caretz_dirs=caretz_paths(settings),
            extra_hidden=section.hidden,
            extra_read_only=section.read_only,
        )
    except PolicyError as error:
        raise ConfigError(f"sandbox: {error}") from None


def shell_env_filter(settings: Settings) -> EnvFilter:
    """No API keys or secrets in a command's environment, the configured providers' key
    variables included whatever their names; `shellEnv` passes the names it lists."""
    keys = [entry.api_key_env for entry in settings.providers.values() if entry.api_key_env]
    return EnvFilter.create(secret_names=keys, allow=settings.shell_env)


def open_session_sandbox(
    settings: Settings,
    cwd: Path,
    env: Mapping[str, str],
    check: SandboxCheck | None = None,
    runtime: SessionRuntime | None = None,
) -> tuple[Sandbox, SandboxCheck]:
    """The session's sandbox, after checking for real which backend works here (`check`
    replaces that probe). Where the mode cannot be enforced (no bubblewrap and no
    Landlock, or not Linux) it is a ConfigError naming both ways out. `runtime` keeps
    the session's /tmp, network namespace and cwd (a sandbox rebuilt mid-session)."""
    policy = sandbox_policy(settings, cwd, env)
    if check is None:
        check = check_sandbox(policy.mode, policy.network)
    section = settings.sandbox
    sockets = [_socket_path(entry, policy) for entry in section.allow_unix_sockets]
    try:
        sandbox = open_sandbox(
            policy,
            check,
            shell_env_filter(settings),
            unix_sockets=sockets,
            ssh_agent=section.allow_ssh_agent,
            runtime=runtime or SessionRuntime(sessions_parent(settings.data_dir)),
        )
    except SandboxUnavailable as error:
        raise ConfigError(str(error)) from None
    return sandbox, check


def _socket_path(entry: str, policy: SandboxPolicy) -> Path:
    text = str(policy.home) + entry[1:] if entry == "~" or entry.startswith("~/") else entry
    path = Path(text)
    return path if path.is_absolute() else policy.cwd / path


def sandbox_fields(sandbox: Sandbox, check: SandboxCheck) -> dict[str, object]:
    """The session's `sandbox` field: what commands run in, and the fallback's notice."""
    policy = sandbox.policy
    return {
        "mode": policy.mode.value,
        "backend": sandbox.backend.value,
        "network": policy.network,
        "roots": [str(root) for root in policy.roots],
        "notice": check.notice,
    }
