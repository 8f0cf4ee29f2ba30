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

from caretz.agent.limits import RunTotals, UsageLimits
from caretz.agent.prompts import system_prompt
from caretz.agent.turn import Agent, TurnListener
from caretz.session.events import EventLog, read_events
from caretz.session.store import SessionStore, rebuild_history
from caretz.tools.base import ToolContext

if TYPE_CHECKING:
    from caretz.config import ResolvedModel, Settings
    from caretz.guard.guard import LoopGuard
    from caretz.guard.model import Judge
    from caretz.providers.base import Provider


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


def open_provider(model: ResolvedModel, env: Mapping[str, str]) -> Provider:
    from caretz.config import api_key_for
    from caretz.providers.registry import create_provider

    return create_provider(model.entry, api_key_for(model.entry, env))


def build_judge(settings: Settings, session_model: ResolvedModel, env: Mapping[str, str]) -> Judge:
    """The configured judge model, or the session's own model when none is set."""
    from caretz.config import resolve_judge_model
    from caretz.guard.judge import ModelJudge

    judge_model = resolve_judge_model(settings) or session_model
    reasoning = settings.loop_guard.judge.reasoning or "off"
    provider = open_provider(judge_model, env)
    return ModelJudge(provider, judge_model.model_id, judge_model.ref, reasoning)


def build_guard(settings: Settings, log: EventLog, env: Mapping[str, str]) -> LoopGuard:
    from caretz.guard.guard import LoopGuard

    config = settings.loop_guard
    judge = build_judge(settings, settings.model, env) if config.mode != "off" else _no_judge()
    return LoopGuard(config, judge, log.emit)


def _no_judge() -> Judge:
    from caretz.guard.judge import NoJudge

    return NoJudge()


def check_budget_is_priceable(settings: Settings) -> None:
    from caretz.config import ConfigError
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
    guard = build_guard(settings, log, env)
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
    return Session(session_id, events_path, log, agent, settings)


def _tools():
    from caretz.tools.registry import ToolRegistry, default_tools

    return ToolRegistry(default_tools())
