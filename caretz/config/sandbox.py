"""The session's sandbox policy and environment filter, from the resolved settings.

caretz's own files are hidden from commands and never written by the file tools: the
settings file (and the platform's caretz config dir, where profiles.json lives by
default) and the data dir, where the session logs are.

caretz's own installation is read-only to commands where it lies inside a writable root
(a `.pth` planted in a project's venv would run at the next start), and the programs
caretz runs itself are resolved once, where no command can write (caretz/trusted.py).
"""

from __future__ import annotations

import dataclasses
import glob
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import platformdirs

from caretz import private_data
from caretz.config.settings import Settings
from caretz.config_base import ConfigError
from caretz.permissions.project import find_project_root
from caretz.sandbox.detect import SandboxBackend, SandboxCheck, SandboxUnavailable, check_sandbox
from caretz.sandbox.door import ProjectDoor
from caretz.sandbox.envfilter import EnvFilter
from caretz.sandbox.gitwatch import nested_control_paths
from caretz.sandbox.policy import (
    PolicyError,
    SandboxMode,
    SandboxPolicy,
    build_policy,
    home_from_env,
)
from caretz.sandbox.runner import Sandbox, open_sandbox
from caretz.sandbox.runtime import SessionRuntime, sessions_parent
from caretz.trusted import Programs, installation_inside, resolve_programs


def caretz_paths(settings: Settings) -> list[Path]:
    return [settings.config_path, Path(platformdirs.user_config_dir("caretz")), settings.data_dir]


def sandbox_policy(settings: Settings, cwd: Path, env: Mapping[str, str]) -> SandboxPolicy:
    """The policy for commands run from `cwd`; a root that is not a directory, or a `~user`
    path, is a ConfigError naming the setting."""
    section = settings.sandbox
    try:
        policy = build_policy(
            cwd=cwd,
            home=home_from_env(env),
            mode=settings.sandbox_mode,
            add_dirs=section.add_dirs,
            network=section.host_network,
            allowlist=section.allowlist(),
            caretz_dirs=caretz_paths(settings),
            extra_hidden=section.hidden,
            extra_read_only=section.read_only,
        )
    except PolicyError as error:
        raise ConfigError(f"sandbox: {error}") from None
    shown = private_data.installed_plugins(settings.data_dir)
    if os.path.isdir(shown):
        policy = dataclasses.replace(policy, shown=(Path(os.path.realpath(shown)),))
    return _with_read_only(policy, installation_inside(policy.roots))


def project_door(
    settings: Settings, workspace: Path, env: Mapping[str, str] | None = None
) -> ProjectDoor:
    """The door caretz reads the project's own files through (sandbox/door.py): the
    project's root and the session's roots, the sandbox's hidden paths (in every sandbox
    mode: a repository never makes caretz read a key, whatever the model may do)."""
    policy = sandbox_policy(settings, workspace, os.environ if env is None else env)
    return ProjectDoor.for_session(policy, find_project_root(workspace))


def session_door(sandbox: Sandbox, workspace: Path) -> ProjectDoor:
    """`project_door` for the sandbox a session opened (its file tools' checks shared)."""
    return ProjectDoor.for_session(sandbox.policy, find_project_root(workspace), sandbox.paths)


def _with_read_only(policy: SandboxPolicy, paths: list[Path]) -> SandboxPolicy:
    """`policy` with `paths` (literal paths, not globs) read-only as well."""
    if not paths:
        return policy
    escaped = [Path(glob.escape(str(path))) for path in paths]
    return dataclasses.replace(
        policy, read_only=tuple(dict.fromkeys([*policy.read_only, *escaped]))
    )


def session_programs(policy: SandboxPolicy, env: Mapping[str, str]) -> Programs:
    """bwrap, git and the launcher's interpreter, from PATH entries no command can write."""
    return resolve_programs(env.get("PATH", os.defpath), policy.roots)


def probe_sandbox(
    policy: SandboxPolicy, env: Mapping[str, str], programs: Programs | None = None
) -> SandboxCheck:
    """Which backend works here for `policy`, tried for real, and what it enforces."""
    programs = programs or session_programs(policy, env)
    return check_sandbox(policy.mode, policy.network, programs=programs, allowlist=policy.allowlist)


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
    programs = check.programs if check is not None and check.programs else None
    programs = programs or session_programs(policy, env)
    if check is None:
        check = probe_sandbox(policy, env, programs)
    elif check.programs is None:
        check = dataclasses.replace(check, programs=programs)
    _refuse_unprotected(policy, check, programs)
    if policy.enforced and check.backend is SandboxBackend.BWRAP:
        policy = _with_read_only(
            policy, nested_control_paths(policy.writable_roots, programs.git.path)
        )
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
    nsenter = programs.nsenter.path if sandbox.nsenter_path else None
    trusted: dict[str, Any] = {
        "python": programs.python.path,
        "nsenter_path": nsenter,
        "git_path": programs.git.path,
        "bash_path": programs.bash.path or "",
    }
    return dataclasses.replace(sandbox, **trusted), check


def _socket_path(entry: str, policy: SandboxPolicy) -> Path:
    text = str(policy.home) + entry[1:] if entry == "~" or entry.startswith("~/") else entry
    path = Path(text)
    return path if path.is_absolute() else policy.cwd / path


def _refuse_unprotected(policy: SandboxPolicy, check: SandboxCheck, programs: Programs) -> None:
    """Landlock cannot make a path inside a writable root read-only: with caretz installed
    there, a command could change what caretz runs unconfined. And without a trusted
    interpreter the launcher (Landlock, the sandbox off, MCP servers) has nothing to run."""
    problem = installation_problem(policy, check)
    if problem:
        raise ConfigError(problem)
    if programs.python.path is None:
        raise ConfigError(f"no interpreter for caretz's launcher: {programs.python.notice()}")


def installation_problem(policy: SandboxPolicy, check: SandboxCheck) -> str | None:
    """Why a session cannot start: caretz installed inside a writable root, under Landlock."""
    inside = installation_inside(policy.writable_roots)
    if not (inside and policy.enforced and check.backend is SandboxBackend.LANDLOCK):
        return None
    return (
        f"caretz is installed inside a writable root ({inside[0]}) and the Landlock "
        "fallback cannot keep it read-only for commands: install bubblewrap, install "
        "caretz outside the project (pipx, uv tool), or run with --sandbox off"
    )


def installation_notice(policy: SandboxPolicy) -> str | None:
    """One line when caretz runs from inside the workspace or an --add-dir root."""
    inside = installation_inside(policy.roots)
    if not inside:
        return None
    places = ", ".join(str(path) for path in inside[:3])
    if policy.mode is SandboxMode.OFF:
        return f"caretz is installed inside the project ({places}); with the sandbox off a command can change it"
    return (
        f"caretz is installed inside the project ({places}): it is read-only to commands "
        "and file tools, so installing packages into that environment fails in the sandbox"
    )


def sandbox_fields(
    sandbox: Sandbox, check: SandboxCheck, notices: Sequence[str] = ()
) -> dict[str, object]:
    """The session's `sandbox` field: what commands run in, the fallback's notice, and the
    start's notices (`notices`: more of them, such as the project files left out)."""
    policy = sandbox.policy
    return {
        "mode": policy.mode.value,
        "backend": sandbox.backend.value,
        "network": policy.network,
        **_allowed_hosts(sandbox),
        "roots": [str(root) for root in policy.roots],
        "notice": check.notice,
        "notices": [*start_notices(sandbox, check), *notices],
    }


def _allowed_hosts(sandbox: Sandbox) -> dict[str, list[str]]:
    allowlist = sandbox.policy.allowlist
    if allowlist is None or not sandbox.enforced:
        return {}
    return {"allowed_hosts": list(allowlist.entries)}


def start_notices(sandbox: Sandbox, check: SandboxCheck) -> list[str]:
    """The one-line notices of the session's start: programs passed over on PATH, and
    caretz installed inside the project."""
    programs = check.programs
    lines: list[str] = []
    if programs is not None:
        # A bwrap refused outside is the Landlock fallback's notice; with the sandbox off
        # bwrap is never run.
        bwrap = programs.bwrap.notice() if programs.bwrap.path and sandbox.enforced else None
        found = (bwrap, programs.git.notice(), programs.python.notice())
        lines = [line for line in found if line]
    installed = installation_notice(sandbox.policy)
    return [*lines, installed] if installed else lines
