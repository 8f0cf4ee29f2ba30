"""Wiring a session's hooks: the profile's `hooks` and the project's `.caretz/settings.json`
`hooks` (read by the project's gate, runtime/project_trust.py, and run only as it says),
once when the session starts (a malformed entry is a ConfigError naming the file and the
key), and the tool registry's checks that run them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass
from caretz.permissions.project import PROJECT_SETTINGS

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.hooks.config import HooksConfig
    from caretz.hooks.matching import HookFile
    from caretz.hooks.session import HookSession, SessionHooks
    from caretz.runtime.project_trust import ProjectTrust
    from caretz.sandbox.runner import Sandbox
    from caretz.session.events import Emit
    from caretz.tools.permission import SessionPermissions
    from caretz.tools.policy import BeforeCall
    from caretz.tools.registry import AfterCall

if TYPE_CHECKING:
    import pydantic

    from caretz.config import errors as config_errors
    from caretz.config import sandbox as sandbox_config
    from caretz.hooks import config as hook_config
    from caretz.hooks import matching as hook_matching
    from caretz.hooks import runner as hook_runner
    from caretz.hooks import session as hook_session
    from caretz.hooks import tool_hooks as hook_tool_checks
else:
    # The hooks' modules and their pydantic schema: only with a file that has hooks.
    hook_matching = lazy_module("caretz.hooks.matching")
    hook_config = lazy_module("caretz.hooks.config")  # the schema: with a project section to read
    pydantic = lazy_module("pydantic")  # only with a project section to validate
    config_errors = lazy_module("caretz.config.errors")  # pydantic's: only to describe a bad entry
    # What running hooks needs (the sandbox's settings for their environment, the runner):
    # only with hooks to run, never for `caretz hooks list`.
    sandbox_config = lazy_module("caretz.config.sandbox")
    hook_runner = lazy_module("caretz.hooks.runner")  # only with hooks to run
    hook_session = lazy_module("caretz.hooks.session")  # only with hooks to run
    hook_tool_checks = lazy_module("caretz.hooks.tool_hooks")  # only with hooks to run

PROJECT_KEY = "hooks"
PROJECT_SOURCE = f".caretz/settings.json: {PROJECT_KEY}"


@lazy_dataclass(frozen=True)
class ProjectHooksSection:
    """The `hooks` of a project's `.caretz/settings.json`: as written, and read."""

    root: Path
    data: Any  # as written: what an approval holds for
    config: HooksConfig


def hook_files(settings: Settings, trust: ProjectTrust) -> list[HookFile]:
    """The hooks of the profile, then of the project (marked whether they may run, as the
    project's trust says); a file without hooks is left out."""
    files = []
    if settings.values.hooks:
        where = f"{settings.config_path.name}: profiles.{settings.profile_name}.hooks"
        files.append(hook_matching.HookFile(settings.profile.hooks, where))
    section = trust.config.hooks
    if section is not None and section.config:
        approved = trust.hooks_approved
        files.append(hook_matching.HookFile(section.config, PROJECT_SOURCE, approved=approved))
    return files


def project_hooks_section(root: Path, data: Any) -> ProjectHooksSection:
    """The project's `hooks` section, as written in its settings file (read by the
    project's gate, runtime/project_trust.py), checked; raises ConfigError for a bad entry."""
    schema = hook_config.ProjectHooks
    try:
        context = {hook_config.PROJECT_CONTEXT: True}  # no project hook leaves the sandbox
        config = schema.model_validate({PROJECT_KEY: data}, context=context).hooks
    except pydantic.ValidationError as error:
        problem = config_errors.describe_validation_error(schema, error)
        raise ConfigError(f"{root / PROJECT_SETTINGS}: {problem}") from None
    return ProjectHooksSection(root, data, config)


def open_hooks(
    settings: Settings,
    files: Sequence[HookFile],
    permissions: SessionPermissions,
    session: HookSession,
    emit: Emit,
    sandbox: Sandbox,
) -> SessionHooks | None:
    """The session's hooks (None when no file has any), for `session`, into its log; they
    run in the session's `sandbox`."""
    if not files:
        return None
    variables = sandbox_config.shell_env_filter(settings).apply(os.environ)
    where = hook_runner.HookEnvironment(permissions.project_root, variables, sandbox)
    return hook_session.SessionHooks(
        files, where, session=session, emit=emit, permission_mode=lambda: permissions.mode
    )


def tool_hooks(hooks: SessionHooks | None) -> tuple[tuple[BeforeCall, ...], tuple[AfterCall, ...]]:
    """The registry's PreToolUse check (before the permission check) and PostToolUse hook."""
    if hooks is None:
        return (), ()
    pre = hook_tool_checks.PreToolUseCheck(hooks)
    return (pre,), (hook_tool_checks.PostToolUseHook(hooks, pre),)
