"""Wiring: settings in, a ready Agent (provider, tools, guard, session log) out.

Both the headless run and the interactive session build their agent here, so
the turn loop itself never reads config or environment. `wire_agent` turns
settings into the agent's config and collaborators; starting a session and the
interactive session's /model, /profile and /loop-guard switches all go through
it, and a switch builds everything first, so an error changes nothing.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from caretz.agent.agent import Agent
from caretz.agent.compaction import CompactionPolicy
from caretz.agent.limits import UsageLimits
from caretz.agent.parts import AgentConfig, AgentParts, Conversation, TurnListener
from caretz.agent.prompts import system_prompt
from caretz.agent.subagents import TaskTool
from caretz.guard.model import JudgeResult
from caretz.guard.seam import Guard, NullGuard
from caretz.session.events import EventLog, read_events
from caretz.session.store import SessionStore, rebuild_history
from caretz.tools.base import ToolContext
from caretz.tools.jobtable import JobTable

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.guard.config import LoopGuardConfig
    from caretz.guard.judge import ModelJudge
    from caretz.guard.model import Judge, Mode
    from caretz.messages import ModelRequest, ModelResponse, Reasoning
    from caretz.providers.base import Provider
    from caretz.providers.local import LocalServers
    from caretz.providers.resolve import ResolvedModel
    from caretz.sandbox.detect import SandboxCheck
    from caretz.sandbox.runner import Sandbox
    from caretz.tools.registry import ToolRegistry


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
    # What the sandbox is (its mode, backend and roots) and what the check found.
    sandbox: Sandbox | None = None
    sandbox_check: SandboxCheck | None = None
    jobs: JobTable = field(default_factory=JobTable)

    def close(self) -> None:
        """End the session: stop its background jobs, then close its log."""
        stopped = self.jobs.stop_all()
        if stopped:
            self.log.emit("Jobs.Stopped", jobs=[job.id for job in stopped])
        self.log.close()


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


def model_judge(
    provider: Provider,
    model_id: str,
    model_ref: str,
    reasoning: Reasoning = "off",
    clock: Callable[[], float] = time.monotonic,
) -> ModelJudge:
    """A judge that asks `provider`'s model; a timed-out request is closed at its next event."""
    from caretz.guard.judge import ModelJudge
    from caretz.providers.base import collect

    def complete(request: ModelRequest, cancelled: threading.Event) -> ModelResponse:
        return collect(provider.stream(request), cancelled)

    return ModelJudge(complete, model_id, model_ref, reasoning, clock)


def build_judge(settings: Settings, session_model: ResolvedModel, env: Mapping[str, str]) -> Judge:
    """The configured judge model, or the session's own model when none is set."""
    from caretz.config.settings import resolve_judge_model

    judge_model = resolve_judge_model(settings) or session_model
    reasoning = settings.loop_guard.judge.reasoning or "off"
    provider = open_provider(judge_model, env)
    return model_judge(provider, judge_model.model_id, judge_model.ref, reasoning)


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
            return JudgeResult.no_verdict(self.model_ref, 0.0, f"error: {error}")
        return judge(summary, timeout_s)


def build_guard(config: LoopGuardConfig, log: EventLog, judge: SessionJudge) -> Guard:
    """The session's guard. Off, there is none (and none of its modules is imported);
    on, its judge is checked at once, so a missing key fails before anything starts."""
    if config.mode == "off":
        return NullGuard()
    from caretz.guard.guard import LoopGuard

    judge.ensure()
    return LoopGuard(config, judge, log.emit)


def build_tools(settings: Settings, log: EventLog) -> ToolRegistry:
    """The built-in tools, under the user's disallowedTools rules (in every guard mode)."""
    from caretz.tools.policy import DisallowedTools
    from caretz.tools.registry import ToolRegistry, default_tools

    rules = settings.loop_guard.detectors.disallowed_tools
    checks = [DisallowedTools(rules, log.emit)] if rules else []
    return ToolRegistry(default_tools(), before_call=checks)


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


def _open_session(store: SessionStore, resume: str | None) -> tuple[str, Path, Conversation]:
    """A new session folder, or the one to resume with its conversation rebuilt."""
    if resume is None:
        session_id, events_path = store.create()
        return session_id, events_path, Conversation()
    events_path = store.events_path(store.latest() if resume == "latest" else resume)
    history = rebuild_history(list(read_events(events_path)))
    conversation = Conversation(
        history.conversation, history.turns, history.last_request, history.last_answer
    )
    return events_path.parent.name, events_path, conversation


def wire_agent(
    settings: Settings,
    env: Mapping[str, str],
    *,
    log: EventLog,
    listener: TurnListener,
    workspace: Path,
    judge: SessionJudge,
    guard: Guard | None = None,
    system: str | None = None,
    sandbox: Sandbox | None = None,
    jobs: JobTable | None = None,
) -> tuple[AgentConfig, AgentParts]:
    """An agent's config and collaborators for `settings`. `guard` keeps a guard
    already running (None builds one from the settings); `system` keeps a prompt
    already read (None reads it, with AGENTS.md, now); `sandbox` and `jobs` are the
    session's, which its tools run commands in.

    Raises ConfigError (no price for a budget, a missing key, a judge that cannot
    be built) before anything is built.
    """
    from caretz.pricing import cost_usd

    check_budget_is_priceable(settings)
    provider = open_provider(settings.model, env)
    if guard is None:
        guard = build_guard(settings.loop_guard, log, judge)
    config = AgentConfig(
        model_id=settings.model.model_id,
        model_ref=settings.model.ref,
        system=system
        if system is not None
        else system_prompt(workspace, settings.profile.system_prompt),
        reasoning=settings.reasoning,
        max_tokens=settings.max_tokens,
        limits=UsageLimits(settings.max_tool_calls, settings.max_budget_usd),
    )
    parts = AgentParts(
        provider=provider,
        tools=build_tools(settings, log),
        tool_ctx=ToolContext(
            workspace=workspace,
            bash_timeout_s=settings.bash_timeout_s,
            sandbox=sandbox,
            jobs=jobs if jobs is not None else JobTable(),
        ),
        log=log,
        guard=guard,
        price=lambda ref, usage: cost_usd(ref, usage, settings.prices),
        listener=listener,
        compaction=CompactionPolicy(context_window=settings.context_window),
    )
    return config, parts


def _install(agent: Agent, config: AgentConfig, parts: AgentParts) -> None:
    """Give `agent` its new config and collaborators; its conversation carries on."""
    parts.tools.add(TaskTool(agent))
    agent.config, agent.parts = config, parts


def start_session(
    settings: Settings,
    listener: Output,
    env: Mapping[str, str] | None = None,
    resume: str | None = None,
    workspace: Path | None = None,
) -> Session:
    """Open (or resume) a session folder and build its agent.

    Everything that can fail on settings (the sandbox, a model, a key, the judge) is
    built before the session folder is made; the log writes once it exists.
    """
    from caretz import __version__
    from caretz.config.sandbox import open_session_sandbox, sandbox_fields

    env = os.environ if env is None else env
    workspace = workspace or Path.cwd()
    log = EventLog(None)
    judge = SessionJudge(settings, env, settings.model)
    sandbox, check = open_session_sandbox(settings, workspace, env)
    jobs = JobTable()
    config, parts = wire_agent(
        settings,
        env,
        log=log,
        listener=listener,
        workspace=workspace,
        judge=judge,
        sandbox=sandbox,
        jobs=jobs,
    )
    session_id, events_path, conversation = _open_session(SessionStore(settings.data_dir), resume)
    log.path = events_path
    log.subscribe(listener.on_event)
    agent = Agent(config, parts, conversation)
    _install(agent, config, parts)
    log.emit(
        "Session.Resumed" if resume is not None else "Session.Started",
        session_id=session_id,
        model=settings.model.ref,
        profile=settings.profile_name,
        cwd=str(workspace),
        version=__version__,
        loop_guard=settings.loop_guard.mode,
        sandbox=sandbox_fields(sandbox, check),
    )
    session = Session(session_id, events_path, log, agent, settings, judge=judge)
    session.workspace, session.jobs = workspace, jobs
    session.sandbox, session.sandbox_check = sandbox, check
    return session


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
    from caretz.config.sandbox import open_session_sandbox

    env = os.environ if env is None else env
    judge = SessionJudge(settings, env, settings.model)
    # The profile's sandbox settings apply from now on; running jobs keep theirs.
    sandbox, check = open_session_sandbox(settings, session.workspace, env)
    _rewire(session, settings, env, judge, sandbox=sandbox)
    session.judge = judge
    session.sandbox, session.sandbox_check = sandbox, check
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
    sandbox: Sandbox | None = None,
) -> None:
    agent = session.agent
    config, parts = wire_agent(
        settings,
        env,
        log=session.log,
        listener=agent.parts.listener,
        workspace=session.workspace,
        judge=judge,
        guard=guard,
        system=system,
        sandbox=sandbox or session.sandbox,
        jobs=session.jobs,
    )
    _install(agent, config, parts)
    session.settings = settings


def _emit_changed(session: Session, change: str) -> None:
    session.log.emit(
        "Session.Changed",
        change=change,
        model=session.agent.config.model_ref,
        profile=session.settings.profile_name,
        loop_guard=session.agent.parts.guard.mode,
    )
