"""Wiring: settings in, a ready Agent (provider, tools, guard, session log) out.

Both the headless run and the interactive session build their agent here, so
the turn loop itself never reads config or environment. `wire_agent` turns
settings into the agent's config and collaborators; starting a session and the
interactive session's /model, /profile and /loop-guard switches all go through
it, and a switch builds everything first, so an error changes nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from caretz.agent.agent import Agent
from caretz.agent.compaction import CompactionPolicy
from caretz.agent.limits import UsageLimits
from caretz.agent.parts import AgentConfig, AgentParts, Conversation, TurnListener
from caretz.agent.prompts import system_prompt
from caretz.agent.subagents import TaskTool
from caretz.checkpoints.project import project_root
from caretz.guard.seam import Guard
from caretz.messages import Usage
from caretz.providers.model_limits import images_refusal
from caretz.runtime.hooks import open_hooks
from caretz.runtime.judge import SessionJudge, build_guard
from caretz.runtime.models import context_window, open_provider, served_context_window
from caretz.session.events import EventLog
from caretz.session.records.base import Record
from caretz.session.records.session import JobsStopped, SessionResumed, SessionStarted
from caretz.session.store import SessionStore, in_project, read_history
from caretz.tools.base import ToolContext
from caretz.tools.jobtable import JobTable
from caretz.web.cache import FetchCache

if TYPE_CHECKING:
    from caretz.agent.checkpointing import TurnCheckpoints
    from caretz.config.settings import Settings
    from caretz.hooks.matching import HookFile
    from caretz.hooks.session import SessionHooks
    from caretz.mcp_client.servers import McpServers
    from caretz.runtime.git_watch import GitWatchHook
    from caretz.sandbox.detect import SandboxCheck
    from caretz.sandbox.runner import Sandbox
    from caretz.tools.asking import Asker
    from caretz.tools.permission import SessionPermissions
    from caretz.tools.registry import BeforeCall
    from caretz.trusted import Programs


class Output(TurnListener, Protocol):
    """A view of the run: streamed deltas plus every session event."""

    def on_event(self, event: Record) -> None: ...


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
    permissions: SessionPermissions | None = None
    checkpoints: TurnCheckpoints | None = None  # None: switched off in the profile
    # What the sandbox is (its mode, backend and roots) and what the check found.
    sandbox: Sandbox | None = None
    sandbox_check: SandboxCheck | None = None
    jobs: JobTable = field(default_factory=JobTable)
    hooks: SessionHooks | None = None  # None: no hooks configured
    mcp: McpServers | None = None  # None: no MCP server is configured
    git_watch: GitWatchHook | None = None  # None: no writable root to watch
    web_cache: FetchCache = field(default_factory=FetchCache)  # web_fetch's pages, by URL

    def close(self, reason: str = "other") -> None:
        """End the session: its SessionEnd hooks, then stop its background jobs and MCP
        servers, settle a turn left open, and close the log (even when Ctrl-C ends the
        hooks)."""
        try:
            self.end_hooks(reason)
        finally:
            self.release()

    def release(self) -> None:
        stopped = self.jobs.stop_all()
        if stopped:
            self.log.emit(JobsStopped(jobs=[job.id for job in stopped]))
        if self.git_watch is not None:
            self.git_watch.close()
        if self.mcp is not None:
            self.mcp.close()
        if self.checkpoints is not None:
            self.checkpoints.close()
        if self.sandbox is not None:
            self.sandbox.close()  # its /tmp and network namespace, once no job runs
        self.log.close()

    def end_hooks(self, reason: str) -> None:
        """SessionEnd hooks (once), with why the session ends: `clear`, `resume`,
        `prompt_input_exit` (/exit, Ctrl-D) or `other`."""
        if self.hooks is not None:
            self.hooks.session_ended(reason)


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


def _open_session(
    store: SessionStore, resume: str | None, project: Path
) -> tuple[str, Path, Conversation, str]:
    """A new session folder, or the one to resume with its conversation rebuilt; and
    the folder a resumed session named by ID ran in when it is not of `project`."""
    if resume is None:
        session_id, events_path = store.create()
        return session_id, events_path, Conversation(), ""
    events_path = store.events_path(store.latest(project) if resume == "latest" else resume)
    recorded = store.project_of(events_path.parent.name)
    other = "" if in_project(recorded, project) else recorded[0] or recorded[1]
    history = read_history(events_path)
    conversation = Conversation(
        history.conversation, history.turns, history.last_request, history.last_answer
    )
    return events_path.parent.name, events_path, conversation, other


def wire_agent(
    settings: Settings,
    env: Mapping[str, str],
    *,
    log: EventLog,
    listener: TurnListener,
    workspace: Path,
    judge: SessionJudge,
    permissions: SessionPermissions,
    guard: Guard | None = None,
    system: str | None = None,
    checks: Sequence[BeforeCall] = (),
    sandbox: Sandbox | None = None,
    jobs: JobTable | None = None,
    hooks: SessionHooks | None = None,
    git_watch: GitWatchHook | None = None,
    web_cache: FetchCache | None = None,
) -> tuple[AgentConfig, AgentParts]:
    """An agent's config and collaborators for `settings`. `guard` keeps a guard
    already running (None builds one from the settings); `system` keeps a prompt
    already read (None reads it, with AGENTS.md, now); `sandbox` and `jobs` are the
    session's, which its tools run commands in; `checks` (the checkpoints) run after
    the permission check; `hooks` (the user's) before it, after each call and around
    the main agent's turns; `git_watch` after each call, before the user's hooks;
    `web_cache` is the session's fetched pages.

    Raises ConfigError (no price for a budget, a missing key, a judge that cannot
    be built) before anything is built.
    """
    from caretz.pricing import cost_usd
    from caretz.runtime.environment import session_environment
    from caretz.runtime.hooks import tool_hooks
    from caretz.runtime.permissions import build_tools, commands_sandboxed
    from caretz.runtime.web import web_setup

    check_budget_is_priceable(settings)
    web = web_setup(settings, env, permissions, web_cache or FetchCache())
    provider = open_provider(
        settings.model,
        env,
        idle_timeout_s=settings.profile.stream_idle_timeout_s,
        max_retries=settings.profile.max_retries,
        server_search=web.server_search,
    )
    if guard is None:
        guard = build_guard(settings.loop_guard, log, judge)
    config = AgentConfig(
        model_id=settings.model.model_id,
        model_ref=settings.model.ref,
        system=system
        if system is not None
        else system_prompt(
            workspace,
            settings.profile.system_prompt,
            session_environment(settings, sandbox, permissions, web),
        ),
        reasoning=settings.reasoning,
        max_tokens=settings.max_tokens,
        limits=UsageLimits(settings.max_tool_calls, settings.max_budget_usd),
    )
    first_checks, after_call = tool_hooks(hooks)
    if git_watch is not None:
        after_call = (git_watch, *after_call)
    parts = AgentParts(
        provider=provider,
        tools=build_tools(
            permissions,
            checks,
            first_checks,
            after_call,
            mode=settings.permission_mode,
            sandboxed=commands_sandboxed(settings),
            extra_tools=web.tools,
        ),
        tool_ctx=ToolContext(
            workspace,
            bash_timeout_s=settings.bash_timeout_s,
            rules=permissions.rules,
            sandbox=sandbox,
            jobs=jobs if jobs is not None else JobTable(),
            no_images=images_refusal(settings.model.ref),
        ),
        log=log,
        guard=guard,
        price=lambda ref, usage: cost_usd(ref, usage, settings.prices),
        listener=listener,
        compaction=CompactionPolicy(
            context_window=context_window(settings.context_window, served_context_window(provider)),
            reserved_output=settings.max_tokens,
        ),
        hooks=hooks,
    )
    return config, parts


def install(
    agent: Agent, config: AgentConfig, parts: AgentParts, mcp: McpServers | None = None
) -> None:
    """Give `agent` its new config and collaborators (and the MCP servers' tools); its
    conversation carries on."""
    parts.tools.add(TaskTool(agent))
    if mcp is not None:
        mcp.add_tools(parts.tools)
    agent.config, agent.parts = config, parts


def start_session(
    settings: Settings,
    listener: Output,
    env: Mapping[str, str] | None = None,
    resume: str | None = None,
    workspace: Path | None = None,
    asker: Asker | None = None,
    permissions: SessionPermissions | None = None,
    hook_files: Sequence[HookFile] | None = None,
    mcp: McpServers | None = None,
    before_start: Callable[[], None] | None = None,
) -> Session:
    """Open (or resume) a session folder and build its agent.

    Everything that can fail on settings (the sandbox, a model, a key, the judge, a
    permission rule, a hook, a `.mcp.json`) is built before the session folder is made;
    the log writes once it exists. The MCP servers start last, once nothing else can fail.
    `asker` puts permission questions to the user (None: nobody can answer);
    `permissions`, `hook_files` and `mcp` carry an interactive session's permissions,
    hooks and servers over to the next one (/clear, /resume); `before_start` runs once
    nothing can fail any more, before the new session's hooks (the old one's SessionEnd).
    """
    from caretz import __version__
    from caretz.config.sandbox import open_session_sandbox, sandbox_fields
    from caretz.runtime.git_watch import open_git_watch
    from caretz.runtime.mcp import configured_servers, start_servers
    from caretz.runtime.network import wire_network

    env = os.environ if env is None else env
    workspace = workspace or Path.cwd()
    log = EventLog(None)
    if permissions is None:
        from caretz.runtime.permissions import load_permissions

        permissions = load_permissions(settings, workspace, asker)
    permissions.emit = log.emit
    hooks = open_hooks(settings, workspace, permissions, hook_files)
    if hooks is not None:
        hooks.emit = log.emit
    servers = configured_servers(settings, workspace) if mcp is None else []
    judge = SessionJudge(settings, env, settings.model)
    sandbox, check = open_session_sandbox(settings, workspace, env)
    git_watch = open_git_watch(sandbox, check, settings.data_dir)
    if git_watch is not None:
        git_watch.emit = log.emit
    wire_network(sandbox, log.emit, permissions.asker)
    jobs, web_cache = JobTable(), FetchCache()
    checkpoints = open_checkpoints(settings, workspace, check.programs)
    checks = checkpoint_checks(checkpoints)
    config, parts = wire_agent(
        settings,
        env,
        log=log,
        listener=listener,
        workspace=workspace,
        judge=judge,
        permissions=permissions,
        checks=checks,
        sandbox=sandbox,
        jobs=jobs,
        hooks=hooks,
        git_watch=git_watch,
        web_cache=web_cache,
    )
    project = project_root(workspace)
    session_id, events_path, conversation, other_project = _open_session(
        SessionStore(settings.data_dir), resume, project
    )
    started_here = mcp is None
    if mcp is None:
        mcp = start_servers(settings, servers, workspace, env)
    if before_start is not None:
        before_start()
    log.path = events_path
    log.subscribe(listener.on_event)
    agent = Agent(config, parts, conversation)
    if parts.price(config.model_ref, Usage()) is None:  # unknown from the start, as a turn says
        conversation.totals.price_unknown()
    install(agent, config, parts, mcp)
    opened = SessionResumed if resume is not None else SessionStarted
    log.emit(
        opened(
            session_id=session_id,
            model=settings.model.ref,
            profile=settings.profile_name,
            cwd=str(workspace),
            project=str(project),
            other_project=other_project or None,
            version=__version__,
            loop_guard=settings.loop_guard.mode,
            permission_mode=permissions.mode,
            sandbox=sandbox_fields(sandbox, check),
        )
    )
    if checkpoints is not None:
        checkpoints.attach(session_id, log)
    if mcp is not None:
        mcp.emit = log.emit
        if started_here:
            mcp.report()
    if hooks is not None:
        hooks.attach(session_id, events_path, workspace)
        log.subscribe(hooks.on_event)
        if hook_files is None:  # read now, not carried over from the session before
            hooks.announce_skipped()
        source = (
            "resume" if resume is not None else "clear" if hook_files is not None else "startup"
        )
        hooks.session_started(source, settings.model.ref)
    return Session(
        session_id,
        events_path,
        log,
        agent,
        settings,
        judge=judge,
        workspace=workspace,
        permissions=permissions,
        checkpoints=checkpoints,
        sandbox=sandbox,
        sandbox_check=check,
        jobs=jobs,
        hooks=hooks,
        mcp=mcp,
        git_watch=git_watch,
        web_cache=web_cache,
    )


def open_checkpoints(
    settings: Settings, workspace: Path, programs: Programs | None = None
) -> TurnCheckpoints | None:
    """The session's checkpoints (None when the profile switches them off); without
    git (or with none caretz may run, see `programs`) they are off, and say so once the
    session's log is open."""
    config = settings.profile.checkpoints
    if not config.enabled:
        return None
    from caretz.agent.checkpointing import TurnCheckpoints

    git = programs.git if programs is not None else None
    return TurnCheckpoints.opened(settings.data_dir, workspace, config.max_file_size_bytes, git=git)


def checkpoint_checks(checkpoints: TurnCheckpoints | None) -> tuple[BeforeCall, ...]:
    return (checkpoints.before_call,) if checkpoints is not None else ()
