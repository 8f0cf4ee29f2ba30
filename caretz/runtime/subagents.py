"""A session's named subagents: the gate's catalog of agent files, and how a model an
agent file names is opened (Claude Code's aliases `sonnet`, `opus`, `haiku`; a bare model
ID on the session's provider; `provider/model`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.agent.named import Isolation, NamedAgents, SubagentModel
from caretz.config.sandbox import open_session_sandbox
from caretz.config_base import ConfigError
from caretz.permissions.project import find_project_root
from caretz.pricing import price_for
from caretz.providers.registry import KNOWN_MODELS
from caretz.providers.resolve import CUSTOM_PROVIDER, api_key_for
from caretz.runtime.models import open_provider, request_limits, resolve_model_switch
from caretz.runtime.project_trust import agent_catalog

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.providers.resolve import ResolvedModel
    from caretz.sandbox.detect import SandboxCheck

CLAUDE_ALIASES = ("opus", "sonnet", "haiku")


def named_agents(
    settings: Settings,
    workspace: Path,
    env: Mapping[str, str],
    sandbox_check: SandboxCheck | None = None,
) -> NamedAgents:
    """The agents the session's task tool offers, read now through the gate;
    `sandbox_check`: the session's, for the sandbox of an agent in a worktree."""
    catalog = agent_catalog(settings, workspace, Path.home())

    def open_model(written: str) -> SubagentModel:
        return subagent_model(settings, written, env)

    def isolate(name: str, sandboxed: bool) -> Isolation:
        return worktree_for(settings, workspace, env, sandbox_check if sandboxed else None, name)

    root = find_project_root(workspace)
    return NamedAgents(catalog.agents, open_model, root, isolate)


def worktree_for(
    settings: Settings,
    workspace: Path,
    env: Mapping[str, str],
    sandbox_check: SandboxCheck | None,
    agent: str,
) -> Isolation:
    """A new caretz worktree for the agent (`.caretz/worktrees/agent-NAME-XXXXXX`, from
    HEAD), in a sandbox of its own when `sandbox_check` (the session's) is given; its
    `finish` removes it when the agent changed nothing, else says where the changes are.
    Raises ConfigError."""
    # Only for an agent in a worktree (git's worktree commands, off every run's path).
    from caretz.worktrees import manage as worktrees
    from caretz.worktrees.git import WorktreeError  # with it: what its commands raise

    try:
        repo = worktrees.open_repository(workspace, env)
        name = worktrees.check_name(f"agent-{_slug(agent)}-{os.urandom(3).hex()}")
        tree = worktrees.enter(repo, name)
    except WorktreeError as error:
        raise ConfigError(f"isolation: worktree: {error}") from None
    sandbox = None
    if sandbox_check is not None:
        try:
            sandbox, _ = open_session_sandbox(settings, tree.path, env, sandbox_check)
        except ConfigError:
            worktrees.remove(repo, name, force=True)  # new and unused: nothing is lost
            raise

    def finish() -> str:
        if sandbox is not None:
            sandbox.close()
        try:
            if worktrees.changes(repo, tree):
                return f"Its changes are in the worktree {tree.path}, on branch {tree.branch}."
            worktrees.remove(repo, name)
        except WorktreeError as error:
            return f"Its worktree {tree.path} is kept: {error}"
        return "It changed no file; its worktree is removed."

    return Isolation(tree.path, sandbox, finish)


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in name)[:40] or "agent"


def subagent_model(settings: Settings, written: str, env: Mapping[str, str]) -> SubagentModel:
    """The model an agent file names, opened; raises ConfigError naming what to fix."""
    resolved = _resolved(settings, written, env)
    provider = open_provider(resolved, env, request_limits(settings))
    return SubagentModel(resolved.model_id, resolved.ref, provider)


def resolved_model(settings: Settings, written: str, env: Mapping[str, str]) -> str:
    """The model ref an agent file's `model` means here, checked as far as can be without
    opening it (its provider, its key, its price under a budget); raises ConfigError."""
    resolved = _resolved(settings, written, env)
    if resolved.entry.local is None:
        api_key_for(resolved.entry, env)
    return resolved.ref


def _resolved(settings: Settings, written: str, env: Mapping[str, str]) -> ResolvedModel:
    resolved = resolve_model_switch(settings, model_ref(settings, written), env)
    if settings.max_budget_usd is not None and price_for(resolved.ref, settings.prices) is None:
        raise ConfigError(
            f"--max-budget-usd needs a price for {resolved.ref!r}: add one under "
            f'"prices" in {settings.config_path}'
        )
    return resolved


def model_ref(settings: Settings, written: str) -> str:
    """`sonnet` → the newest Claude Sonnet caretz knows; a bare ID → on the session's
    provider (on an ad hoc endpoint it stays bare); `provider/model` as it is."""
    lowered = written.strip().lower()
    if lowered in CLAUDE_ALIASES:
        model = next(m for m in KNOWN_MODELS["anthropic"] if lowered in m)
        return f"anthropic/{model}"
    provider = settings.model.entry.name
    if "/" in written or provider == CUSTOM_PROVIDER:
        return written.strip()
    return f"{provider}/{written.strip()}"
