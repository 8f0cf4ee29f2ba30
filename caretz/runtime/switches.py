"""Changing a live session: the interactive session's /model, /profile, /loop-guard
and /permissions. Each builds everything it needs first, so an error changes nothing.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from caretz.guard.seam import Guard, NullGuard
from caretz.runtime.judge import SessionJudge, build_guard
from caretz.runtime.session import (
    Session,
    checkpoint_checks,
    install,
    wire_agent,
)
from caretz.session.records.session import SessionChanged

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.guard.model import Mode
    from caretz.providers.resolve import ResolvedModel


def resolve_model_switch(settings: Settings, ref: str, env: Mapping[str, str]) -> ResolvedModel:
    """`ref` as the session would resolve it; a bare ID stays on the session's ad hoc endpoint."""
    from caretz.providers.resolve import CUSTOM_PROVIDER, resolve_model

    base_url = None
    if "/" not in ref:
        current = settings.model.entry
        base_url = (
            current.base_url if current.name == CUSTOM_PROVIDER else settings.profile.base_url
        )
    return resolve_model(ref, settings.providers, base_url, env, config_file=settings.config_path)


def switch_model(session: Session, ref: str, env: Mapping[str, str] | None = None) -> str:
    """Run the rest of the session on another model; the conversation carries over.

    Raises ConfigError (an unknown provider, a missing key, no price for a budget)
    before anything changes. Returns the new model's ref.
    """
    env = os.environ if env is None else env
    model = resolve_model_switch(session.settings, ref, env)
    settings = dataclasses.replace(session.settings, model=model)
    agent = session.agent
    judge = session.judge or SessionJudge(settings, env, model)
    _rewire(session, settings, env, judge, agent.parts.guard, system=agent.config.system)
    judge.follow(model)
    session.judge = judge
    _emit_changed(session, "model")
    return model.ref


def apply_settings(
    session: Session, settings: Settings, env: Mapping[str, str] | None = None
) -> None:
    """Re-wire a live session to new settings (another profile): model, guard, limits, prompt.

    Everything that can fail is built first, so on a ConfigError nothing has changed.
    The conversation, the totals and the session log carry over.
    """
    env = os.environ if env is None else env
    judge = SessionJudge(settings, env, settings.model)
    # The profile's sandbox settings apply from now on; running jobs keep theirs.
    _rewire(session, settings, env, judge, new_sandbox=True)
    session.judge = judge
    _emit_changed(session, "profile")


def set_guard_mode(session: Session, mode: str) -> None:
    """Switch the loop guard off, to shadow or to active; its judge is built if needed.

    A guard, once built, is kept when switched off, so what it carries across turns
    stays. Raises ConfigError (the judge model's key is missing) before anything changes.
    """
    from caretz.config_base import ConfigError

    if mode not in ("off", "shadow", "active"):
        raise ConfigError(f"unknown loop-guard mode {mode!r}: use off, shadow or active")
    config = session.settings.loop_guard.model_copy(update={"mode": mode})
    judge = session.judge or SessionJudge(session.settings, os.environ, session.settings.model)
    agent = session.agent
    if isinstance(agent.parts.guard, NullGuard):
        guard = build_guard(config, session.log, judge)
        agent.parts = dataclasses.replace(agent.parts, guard=guard)
    else:
        _switch_mode(agent.parts.guard, config.mode, judge)
    session.settings = session.settings.with_profile(loop_guard=config)
    session.judge = judge
    _emit_changed(session, "loop_guard")


def set_permission_mode(session: Session, mode: str, env: Mapping[str, str] | None = None) -> None:
    """Switch to auto, ask, read-only or yolo: the tools and the system prompt (which tells
    the mode and the sandbox) are rebuilt for the mode; the guard, the rules and the
    conversation carry on. Raises ConfigError first."""
    from caretz.runtime.permissions import with_permission_mode

    env = os.environ if env is None else env
    settings, agent = with_permission_mode(session.settings, mode), session.agent
    judge = session.judge or SessionJudge(settings, env, settings.model)
    _rewire(
        session,
        settings,
        env,
        judge,
        agent.parts.guard,
        new_sandbox=True,  # read-only and yolo change the sandbox too
    )
    _emit_changed(session, "permission_mode")


def _switch_mode(guard: Guard, mode: Mode, judge: SessionJudge) -> None:
    from caretz.guard.guard import LoopGuard

    assert isinstance(guard, LoopGuard)  # the only guard other than NullGuard
    if mode != "off":
        judge.ensure()
    guard.mode = mode


def _rewire(
    session: Session,
    settings: Settings,
    env: Mapping[str, str],
    judge: SessionJudge,
    guard: Guard | None = None,
    system: str | None = None,
    new_sandbox: bool = False,
) -> None:
    from caretz.config.sandbox import open_session_sandbox
    from caretz.runtime.permissions import follow_settings, profile_rules

    agent, permissions = session.agent, session.permissions
    assert permissions is not None  # every session has them from its start
    rules = profile_rules(settings)
    sandbox, check = session.sandbox, session.sandbox_check
    if new_sandbox:
        runtime = sandbox.runtime if sandbox is not None else None  # /tmp, namespace, cwd
        sandbox, check = open_session_sandbox(settings, session.workspace, env, runtime=runtime)
    config, parts = wire_agent(
        settings,
        env,
        log=session.log,
        listener=agent.parts.listener,
        workspace=session.workspace,
        judge=judge,
        permissions=permissions,
        guard=guard,
        system=system,
        checks=checkpoint_checks(session.checkpoints),
        sandbox=sandbox,
        jobs=session.jobs,
        hooks=session.hooks,
        git_watch=session.git_watch,
        web_cache=session.web_cache,
    )
    parts = follow_settings(permissions, settings, rules, parts)
    install(agent, config, parts, session.mcp)
    session.settings = settings
    session.sandbox, session.sandbox_check = sandbox, check


def _emit_changed(session: Session, change: str) -> None:
    session.log.emit(
        SessionChanged(
            change=change,
            model=session.agent.config.model_ref,
            profile=session.settings.profile_name,
            loop_guard=session.agent.parts.guard.mode,
            permission_mode=session.settings.permission_mode,
        )
    )
