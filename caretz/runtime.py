"""Wiring: settings in, a ready Agent (provider, tools, guard, session log) out.

Both the headless run and the interactive session build their agent here, so
the turn loop itself never reads config or environment.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from caretz.agent.compaction import AutoCompactor, CompactionPolicy
from caretz.agent.limits import RunTotals, UsageLimits
from caretz.agent.prompts import system_prompt
from caretz.agent.subagents import TaskTool
from caretz.agent.turn import Agent, TurnListener
from caretz.guard.model import JudgeResult, Verdict
from caretz.messages import Usage
from caretz.session.events import EventLog, read_events
from caretz.session.store import SessionStore, rebuild_history
from caretz.tools.base import ToolContext

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.guard.config import LoopGuardConfig
    from caretz.guard.guard import LoopGuard
    from caretz.guard.model import Judge
    from caretz.providers.base import Provider
    from caretz.providers.local import LocalServers
    from caretz.providers.resolve import ResolvedModel


class Output(TurnListener, Protocol):
    """A view of the run: streamed deltas plus every session event."""

    def on_event(self, event: dict[str, Any]) -> None: ...


@dataclass
class Session:
    id: str
    events_path: Path
    log: EventLog
    agent: Agent
    settings: Settings
    started: float = field(default_factory=time.monotonic)
    judge: SessionJudge | None = None
    workspace: Path = field(default_factory=Path.cwd)


def open_provider(
    model: ResolvedModel, env: Mapping[str, str], servers: LocalServers | None = None
) -> Provider:
    """A provider for `model`; a local model's server is started first (once per process).

    Raises ConfigError when the model cannot be reached that way (a missing key, a
    local model that cannot be loaded).
    """
    from caretz.config_base import ConfigError
    from caretz.providers.registry import create_provider
    from caretz.providers.resolve import api_key_for

    entry = model.entry
    if entry.local is not None:
        from caretz.providers.local import LocalServerError, shared_servers

        try:
            entry = (servers or shared_servers()).attach(entry, model.model_id)
        except LocalServerError as error:
            raise ConfigError(f"{model.ref}: {error}") from None
    return create_provider(entry, api_key_for(entry, env))


def build_judge(settings: Settings, session_model: ResolvedModel, env: Mapping[str, str]) -> Judge:
    """The configured judge model, or the session's own model when none is set."""
    from caretz.config.settings import resolve_judge_model
    from caretz.guard.judge import ModelJudge

    judge_model = resolve_judge_model(settings) or session_model
    reasoning = settings.loop_guard.judge.reasoning or "off"
    provider = open_provider(judge_model, env)
    return ModelJudge(provider, judge_model.model_id, judge_model.ref, reasoning)


class SessionJudge:
    """The loop guard's judge: the configured judge model, else the model the session runs now.

    Built on first use and rebuilt when the session's model changes (`follow`), so a
    guard switched on mid-session, or after a /model switch, always has a judge.
    A judge that cannot be built (a missing key) answers "not stuck" with the reason.
    """

    def __init__(self, settings: Settings, env: Mapping[str, str], session_model: ResolvedModel):
        self.settings = settings
        self.env = env
        self.session_model = session_model
        self._built: tuple[str, Judge] | None = None

    @property
    def model_ref(self) -> str:
        ref = self.settings.loop_guard.judge.model
        return ref if ref is not None else self.session_model.ref

    def follow(self, session_model: ResolvedModel) -> None:
        self.session_model = session_model

    def ensure(self) -> Judge:
        """The judge, built now if needed; raises ConfigError when it cannot be."""
        ref = self.model_ref
        if self._built is None or self._built[0] != ref:
            self._built = (ref, build_judge(self.settings, self.session_model, self.env))
        return self._built[1]

    def __call__(self, summary: str, timeout_s: float) -> JudgeResult:
        from caretz.config_base import ConfigError

        try:
            judge = self.ensure()
        except ConfigError as error:
            return JudgeResult(_not_stuck(), self.model_ref, 0.0, Usage(), f"error: {error}")
        return judge(summary, timeout_s)


def build_guard(
    settings: Settings, log: EventLog, env: Mapping[str, str], judge: SessionJudge | None = None
) -> LoopGuard | None:
    """The session's guard. With the guard on, its judge is checked at once (a missing
    key fails at start-up); with it off, the judge is built when it is switched on.

    Off and without disallowedTools there is nothing for a guard to do, so none is
    built (and none of its modules imported): `set_guard_mode` builds it when needed.
    """
    config = settings.loop_guard
    if config.mode == "off" and not config.detectors.disallowed_tools:
        return None
    return _make_guard(config, log, judge or SessionJudge(settings, env, settings.model))


def _make_guard(config: LoopGuardConfig, log: EventLog, judge: SessionJudge) -> LoopGuard:
    from caretz.guard.guard import LoopGuard

    if config.mode != "off":
        judge.ensure()
    return LoopGuard(config, judge, log.emit)


def _not_stuck() -> Verdict:
    from caretz.guard.judge import not_stuck

    return not_stuck()


def check_budget_is_priceable(settings: Settings) -> None:
    from caretz.config_base import ConfigError
    from caretz.pricing import price_for

    if settings.max_budget_usd is None:
        return
    if price_for(settings.model.ref, settings.prices) is None:
        raise ConfigError(
            f"--max-budget-usd needs a price for {settings.model.ref!r}: add one under "
            f'"prices" in {settings.config_path}'
        )


def start_session(
    settings: Settings,
    listener: Output,
    env: Mapping[str, str] | None = None,
    resume: str | None = None,
    workspace: Path | None = None,
) -> Session:
    """Open (or resume) a session folder and build its agent."""
    from caretz import __version__
    from caretz.pricing import cost_usd

    env = os.environ if env is None else env
    workspace = workspace or Path.cwd()
    check_budget_is_priceable(settings)
    provider = open_provider(settings.model, env)
    store = SessionStore(settings.data_dir)
    if resume is not None:
        session_id = store.latest() if resume == "latest" else resume
        events_path = store.events_path(session_id)
        session_id = events_path.parent.name
        history = rebuild_history(list(read_events(events_path)))
    else:
        session_id, events_path = store.create()
        history = None
    log = EventLog(events_path)
    log.subscribe(listener.on_event)
    judge = SessionJudge(settings, env, settings.model)
    guard = build_guard(settings, log, env, judge)
    agent = Agent(
        provider=provider,
        model_id=settings.model.model_id,
        model_ref=settings.model.ref,
        tools=_tools(),
        tool_ctx=ToolContext(workspace=workspace, bash_timeout_s=settings.bash_timeout_s),
        log=log,
        system=system_prompt(workspace, settings.profile.system_prompt),
        guard=guard,
        limits=UsageLimits(settings.max_tool_calls, settings.max_budget_usd),
        totals=RunTotals(),
        reasoning=settings.reasoning,
        max_tokens=settings.max_tokens,
        price=lambda ref, usage: cost_usd(ref, usage, settings.prices),
        listener=listener,
    )
    agent.tools.add(TaskTool(agent))
    agent.before_request = AutoCompactor(CompactionPolicy(context_window=settings.context_window))
    if history is not None:
        agent.conversation = history.conversation
        agent.turns = history.turns
        agent.last_request, agent.last_answer = history.last_request, history.last_answer
    log.emit(
        "Session.Resumed" if history is not None else "Session.Started",
        session_id=session_id,
        model=settings.model.ref,
        profile=settings.profile_name,
        cwd=str(workspace),
        version=__version__,
        loop_guard=settings.loop_guard.mode,
    )
    return Session(session_id, events_path, log, agent, settings, judge=judge, workspace=workspace)


def _tools():
    from caretz.tools.registry import ToolRegistry, default_tools

    return ToolRegistry(default_tools())


# -- changing a live session (the interactive session's /model, /profile, /loop-guard) -----


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
    import dataclasses

    env = os.environ if env is None else env
    model = resolve_model_switch(session.settings, ref, env)
    settings = dataclasses.replace(session.settings, model=model)
    check_budget_is_priceable(settings)
    provider = open_provider(model, env)
    agent = session.agent
    agent.provider, agent.model_id, agent.model_ref = provider, model.model_id, model.ref
    session.settings = settings
    if session.judge is not None:
        session.judge.follow(model)
    _emit_changed(session, "model")
    return model.ref


def apply_settings(
    session: Session, settings: Settings, env: Mapping[str, str] | None = None
) -> None:
    """Re-wire a live session to new settings (another profile): model, guard, limits, prompt.

    Everything that can fail is built first, so on a ConfigError nothing has changed.
    The conversation, the totals and the session log carry over.
    """
    from caretz.pricing import cost_usd

    env = os.environ if env is None else env
    check_budget_is_priceable(settings)
    provider = open_provider(settings.model, env)
    judge = SessionJudge(settings, env, settings.model)
    guard = build_guard(settings, session.log, env, judge)
    agent = session.agent
    agent.provider, agent.model_id, agent.model_ref = (
        provider,
        settings.model.model_id,
        settings.model.ref,
    )
    agent.guard = guard
    agent.before_request = AutoCompactor(CompactionPolicy(context_window=settings.context_window))
    agent.limits = UsageLimits(settings.max_tool_calls, settings.max_budget_usd)
    agent.reasoning, agent.max_tokens = settings.reasoning, settings.max_tokens
    agent.price = lambda ref, usage: cost_usd(ref, usage, settings.prices)
    agent.tool_ctx.bash_timeout_s = settings.bash_timeout_s
    agent.system = system_prompt(session.workspace, settings.profile.system_prompt)
    session.settings, session.judge = settings, judge
    _emit_changed(session, "profile")


def set_guard_mode(session: Session, mode: str) -> None:
    """Switch the loop guard off, to shadow or to active; its judge is built if needed.

    Raises ConfigError (the judge model's key is missing) before anything changes.
    """
    from caretz.config_base import ConfigError

    if mode not in ("off", "shadow", "active"):
        raise ConfigError(f"unknown loop-guard mode {mode!r}: use off, shadow or active")
    config = session.settings.loop_guard.model_copy(update={"mode": mode})
    judge = session.judge = session.judge or SessionJudge(
        session.settings, os.environ, session.settings.model
    )
    guard = session.agent.guard
    if guard is None:
        guard = session.agent.guard = _make_guard(config, session.log, judge)
    elif mode != "off":
        judge.ensure()
    guard.mode = mode  # type: ignore[assignment]
    session.settings = session.settings.with_profile(loop_guard=config)
    _emit_changed(session, "loop_guard")


def _emit_changed(session: Session, change: str) -> None:
    guard = session.agent.guard
    session.log.emit(
        "Session.Changed",
        change=change,
        model=session.agent.model_ref,
        profile=session.settings.profile_name,
        loop_guard=guard.mode if guard is not None else "off",
    )
