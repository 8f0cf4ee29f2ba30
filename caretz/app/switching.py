"""Changing a live session: its model, its profile, its loop guard's mode, its permission
mode (`AppSession.switch`, the interactive session's /model, /profile, /loop-guard and
/permissions, a custom command's model for its turn).

Each builds everything first (the provider, the judge, the guard, the sandbox, the
agent's config and tools) and installs it only then, so a ConfigError changes nothing.
The conversation, the totals, the session log, the project's rules and the background
jobs carry on. Each returns the one line that says what changed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

from caretz.config.sandbox import open_session_sandbox
from caretz.config.settings import resolve_settings
from caretz.config_base import ConfigError
from caretz.guard.seam import NullGuard
from caretz.runtime.judge import SessionJudge, build_loop_guard
from caretz.runtime.models import resolve_model_switch
from caretz.runtime.permissions import follow_settings, profile_rules, with_permission_mode
from caretz.runtime.subagents import named_agents
from caretz.runtime.web import server_search
from caretz.runtime.wiring import AgentWiring, SessionTools, install, session_provider, wire_agent
from caretz.session.records.session import SessionChanged

if TYPE_CHECKING:
    from caretz.app.session import AppSession
    from caretz.config.settings import Settings
    from caretz.guard.guard import LoopGuard
    from caretz.guard.seam import Guard
    from caretz.sandbox.runner import Sandbox

GUARD_MODES = ("off", "shadow", "active")


def switch_model(session: AppSession, ref: str, env: Mapping[str, str] | None = None) -> str:
    """Run the rest of the session on another model; returns its ref. The guard and the
    system prompt carry on (its web lines follow the model's provider, as the provider's
    own search does); the judge follows the model (unless one is configured)."""
    env = session.env if env is None else env
    model = resolve_model_switch(session.settings, ref, env)
    settings = dataclasses.replace(session.settings, model=model)
    rewire(session, settings, session.judge, keep_prompt=True)
    session.judge.follow(model)
    session.agent.conversation.context.forget()
    emit_changed(session, "model")
    return model.ref


def apply_settings(
    session: AppSession, settings: Settings, env: Mapping[str, str] | None = None
) -> None:
    """Another profile's settings: model, guard (built anew), limits, prompt, sandbox."""
    env = session.env if env is None else env
    judge = SessionJudge(settings, env, settings.model, session.agent.conversation.totals)
    guard = new_guard(session, settings, judge)
    rewire(session, settings, judge, guard=guard, new_sandbox=True)
    session.judge, session.loop_guard = judge, guard
    session.agent.conversation.context.forget()
    emit_changed(session, "profile")


def set_guard_mode(session: AppSession, mode: str) -> None:
    """Off, shadow or active; a guard is built the first time one is needed, and kept
    when switched off, so what it carries across turns stays. Raises ConfigError (an
    unknown mode, the judge's key missing) before anything changes."""
    if mode not in GUARD_MODES:
        raise ConfigError(f"unknown loop-guard mode {mode!r}: use off, shadow or active")
    config = session.settings.loop_guard.model_copy(update={"mode": mode})
    settings = session.settings.with_profile(loop_guard=config)
    guard = session.loop_guard
    if guard is None:
        guard = new_guard(session, settings, session.judge)
    elif mode != "off":
        session.judge.ensure()
    if guard is not None:
        guard.mode = config.mode
        session.agent.parts = dataclasses.replace(session.agent.parts, guard=guard)
    session.settings, session.loop_guard = settings, guard
    emit_changed(session, "loop_guard")


def set_permission_mode(
    session: AppSession, mode: str, env: Mapping[str, str] | None = None
) -> None:
    """Auto, ask, read-only, plan or yolo: the tools and the system prompt (which tells the mode
    and the sandbox) are rebuilt for it; the guard, the rules and the conversation carry on."""
    settings = with_permission_mode(session.settings, mode)
    rewire(session, settings, session.judge, new_sandbox=True)  # read-only and yolo change it
    emit_changed(session, "permission_mode")


def new_guard(session: AppSession, settings: Settings, judge: SessionJudge) -> LoopGuard | None:
    """A loop guard for `settings`, none with its mode off; raises ConfigError first."""
    if settings.loop_guard.mode == "off":
        return None
    return build_loop_guard(settings.loop_guard, session.log.emit, judge)


def rewire(
    session: AppSession,
    settings: Settings,
    judge: SessionJudge,
    *,
    guard: LoopGuard | None | bool = True,
    keep_prompt: bool = False,
    new_sandbox: bool = False,
) -> None:
    """Build the agent for `settings`, then install it. `guard`: True keeps the running
    one, else the guard to run (None: off); the profile's sandbox settings apply from now
    on with `new_sandbox` (running jobs keep theirs)."""
    sandbox, sandbox_check = session.sandbox, session.sandbox_check
    if new_sandbox:
        runtime = sandbox.runtime if sandbox is not None else None  # /tmp, namespace, cwd
        sandbox, sandbox_check = open_session_sandbox(
            settings, session.workspace, session.env, runtime=runtime
        )
    rules = profile_rules(settings)
    running: Guard = session.agent.parts.guard if guard is True else (guard or NullGuard())
    wiring = AgentWiring(
        settings=settings,
        env=session.env,
        log=session.log,
        listener=session.view,
        judge=judge,
        tools=session_tools(session, sandbox),
    )
    system = session.agent.config.system if keep_prompt else None
    # The provider's own web search as the new rules have it (a WebSearch deny holds too).
    new_rules = session.permissions.rules_with_profile(rules)
    provider = session_provider(settings, session.env, server_search(settings, new_rules))
    config, parts = wire_agent(wiring, provider, running, system)
    parts = follow_settings(session.permissions, settings, rules, parts)  # nothing fails now
    named = named_agents(settings, session.workspace, session.env, sandbox_check)
    install(session.agent, config, parts, session.mcp, named, session.skills)
    session.settings = settings
    session.sandbox, session.sandbox_check = sandbox, sandbox_check
    if session.hooks is not None and sandbox is not None:
        session.hooks.use_sandbox(sandbox)  # hooks run in the session's sandbox, as it is now


def session_tools(session: AppSession, sandbox: Sandbox | None) -> SessionTools:
    return SessionTools(
        workspace=session.workspace,
        permissions=session.permissions,
        sandbox=sandbox,
        jobs=session.jobs,
        hooks=session.hooks,
        git_watch=session.git_watch,
        checkpoints=session.checkpoints,
        instructions=session.instructions,
        skills=session.skills,
    )


def emit_changed(session: AppSession, change: str) -> None:
    session.log.emit(
        SessionChanged(
            change=change,
            model=session.agent.config.model_ref,
            profile=session.settings.profile_name,
            loop_guard=session.agent.parts.guard.mode,
            permission_mode=session.settings.permission_mode,
        )
    )


# -- the lines `AppSession.switch` returns ---------------------------------------------------


def model_line(session: AppSession, ref: str) -> str:
    return f"model: {switch_model(session, ref)}; the conversation carries on"


def profile_line(session: AppSession, name: str) -> str:
    path = session.settings.config_path
    base = session.flags or {"config": path if path.is_file() else None}
    settings = resolve_settings({**base, "profile": name}, session.env)
    apply_settings(session, settings)
    mode = session.agent.parts.guard.mode
    return f"profile: {name} · model {settings.model.ref} · loop guard {mode}"


def guard_line(session: AppSession, mode: str) -> str:
    set_guard_mode(session, mode)
    judge = session.judge
    by = f", judged by {judge.model_ref}" if mode != "off" else ""
    return f"loop guard: {mode}{by}"


def permissions_line(session: AppSession, mode: str) -> str:
    set_permission_mode(session, mode)
    return f"permissions: {session.settings.permission_mode}"
