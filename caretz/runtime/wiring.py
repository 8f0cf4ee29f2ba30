"""Wiring an agent: settings and a session's parts in, the agent's config and collaborators
out.

Opening a session (caretz/app/assembly.py) and the /model, /profile and /permissions
switches (caretz/app/switching.py) build the agent here, so the turn loop itself never
reads config or environment. Everything arrives whole: the provider and the guard are
built by the caller (the provider while a session is checked, before anything starts),
the tool registry with every check it runs, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.agent.checkpointing import TurnCheckpoints
from caretz.agent.compaction import CompactionPolicy
from caretz.agent.limits import UsageLimits
from caretz.agent.named import NamedAgents
from caretz.agent.parts import AgentConfig, AgentParts, TurnListener
from caretz.agent.prompts import system_prompt, with_web_lines
from caretz.agent.subagents import TaskTool
from caretz.config.settings import resolve_judge_model
from caretz.config_base import ConfigError
from caretz.lazy_dataclass import lazy_dataclass
from caretz.pricing import cost_usd, price_for
from caretz.providers.model_limits import images_refusal
from caretz.runtime.environment import session_environment
from caretz.runtime.hooks import tool_hooks
from caretz.runtime.judge import SessionJudge
from caretz.runtime.models import (
    context_window,
    open_provider,
    request_limits,
    served_context_window,
)
from caretz.runtime.permissions import build_tools, commands_sandboxed
from caretz.runtime.web import web_setup
from caretz.session.events import EventLog
from caretz.tools.base import ToolContext
from caretz.tools.jobtable import JobTable
from caretz.tools.plan_exit import ExitPlanModeTool
from caretz.tools.policy import SkillGrants
from caretz.tools.result_cap import cap_chars
from caretz.web.cache import FetchCache

if TYPE_CHECKING:
    from caretz.agent.agent import Agent
    from caretz.config.settings import Settings
    from caretz.guard.seam import Guard
    from caretz.hooks.session import SessionHooks
    from caretz.mcp_client.servers import McpServers
    from caretz.providers.base import Provider
    from caretz.runtime.git_watch import GitWatchHook
    from caretz.runtime.skills import SessionSkills
    from caretz.sandbox.runner import Sandbox
    from caretz.tools.base import Tool
    from caretz.tools.permission import SessionPermissions
    from caretz.tools.registry import ToolRegistry
    from caretz.trusted import Programs


@lazy_dataclass(frozen=True, kw_only=True)
class SessionTools:
    """What a session's tools run with and the checks around each call: the user's hooks
    (before the permission check, after each call), the git watch (after each call,
    first), the checkpoints (after the permission check)."""

    workspace: Path
    permissions: SessionPermissions
    sandbox: Sandbox | None = None
    jobs: JobTable = field(default_factory=JobTable)
    hooks: SessionHooks | None = None
    git_watch: GitWatchHook | None = None
    checkpoints: TurnCheckpoints | None = None
    web_cache: FetchCache = field(default_factory=FetchCache)  # web_fetch's pages, by URL
    # The project's AGENTS.md / CLAUDE.md as read through its door when the session
    # opened: a switch rebuilds the prompt with them, it does not read the files again.
    instructions: tuple[tuple[Path, str], ...] = ()
    skills: SessionSkills | None = None  # as found when the session opened (None: none)


@lazy_dataclass(frozen=True, kw_only=True)
class AgentWiring:
    """Everything an agent is built from, but its provider and guard."""

    settings: Settings
    env: Mapping[str, str]
    log: EventLog
    listener: TurnListener
    judge: SessionJudge
    tools: SessionTools
    git_status: Sequence[str] | None = None  # the prompt's git lines (None: asked now)
    # The provider's server's context window, being asked (None: asked now).
    served_window: Callable[[], int | None] | None = None


def check_budget_is_priceable(settings: Settings) -> None:
    """A budget counts every model call, the loop guard's judge's too: each needs a price."""
    if settings.max_budget_usd is None:
        return
    models = [settings.model.ref]
    if settings.values.guard_mode != "off":
        judge = resolve_judge_model(settings)
        models += [judge.ref] if judge is not None else []
    for ref in models:
        if price_for(ref, settings.prices) is None:
            raise ConfigError(
                f"--max-budget-usd needs a price for {ref!r}: add one under "
                f'"prices" in {settings.config_path}'
            )


def session_provider(
    settings: Settings, env: Mapping[str, str], server_search: int | None = None
) -> Provider:
    """The session's model's provider (`server_search`: how many of the provider's own
    web searches a request may make; None: not offered); raises ConfigError (no price for
    a budget, a missing key) before anything is sent."""
    check_budget_is_priceable(settings)
    return open_provider(settings.model, env, request_limits(settings), server_search=server_search)


def wire_agent(
    wiring: AgentWiring, provider: Provider, guard: Guard, system: str | None = None
) -> tuple[AgentConfig, AgentParts]:
    """An agent's config and collaborators; `system` keeps a prompt already read, its web
    lines made to fit these settings (None reads it, with AGENTS.md, now)."""
    settings, tools = wiring.settings, wiring.tools
    web = web_setup(settings, wiring.env, tools.permissions, tools.web_cache)
    environment = session_environment(
        settings, tools.sandbox, tools.permissions, wiring.git_status, web
    )
    compaction = CompactionPolicy(
        context_window=context_window(settings.context_window, served_window(wiring, provider)),
        reserved_output=settings.max_tokens,
    )
    if system is None:
        system = system_prompt(
            tools.workspace, settings.system_prompt, environment, tools.instructions
        )
        if tools.skills is not None:  # the skills' catalog, in ~2% of the window
            catalog = tools.skills.catalog(compaction.context_window)
            system = f"{system}\n{catalog}\n" if catalog else system
    else:
        system = with_web_lines(system, environment)
    parts = AgentParts(
        provider=provider,
        tools=session_registry(settings, tools, (*web.tools, *plan_tools(wiring))),
        tool_ctx=tool_context(settings, tools, compaction),
        log=wiring.log,
        guard=guard,
        price=lambda ref, usage: cost_usd(ref, usage, settings.prices),
        listener=wiring.listener,
        compaction=compaction,
        hooks=tools.hooks,
    )
    return agent_config(settings, system), parts


def plan_tools(wiring: AgentWiring) -> list[Tool]:
    """`exit_plan_mode`, which keeps its plans in the session's folder (offered only in
    plan mode: the registry withholds it in the others)."""
    path = wiring.log.path
    return [ExitPlanModeTool(wiring.tools.permissions, path.parent)] if path is not None else []


def served_window(wiring: AgentWiring, provider: Provider) -> int | None:
    asked = wiring.served_window
    return asked() if asked is not None else served_context_window(provider)


def agent_config(settings: Settings, system: str) -> AgentConfig:
    return AgentConfig(
        model_id=settings.model.model_id,
        model_ref=settings.model.ref,
        system=system,
        reasoning=settings.reasoning,
        max_tokens=settings.max_tokens,
        limits=UsageLimits(settings.max_tool_calls, settings.max_budget_usd),
        text_loop=settings.values.text_loop,
    )


def session_registry(
    settings: Settings, tools: SessionTools, extra_tools: Sequence[Tool] = ()
) -> ToolRegistry:
    """The built-in tools (and `extra_tools`: the web tools) under every check, in order:
    the hooks' PreToolUse, the permission check, the checkpoints; after each call the git
    watch, then PostToolUse, then the checkpoints' note of what the call wrote."""
    first_checks, after_call = tool_hooks(tools.hooks)
    if tools.git_watch is not None:
        after_call = (tools.git_watch, *after_call)
    if tools.checkpoints is not None:  # what each call wrote, for the turn's end
        hooks = tools.hooks
        after_call = (*after_call, tools.checkpoints.follow_calls(lambda: not hooks))
    checkpoints = (tools.checkpoints.before_call,) if tools.checkpoints is not None else ()
    return build_tools(
        tools.permissions,
        checkpoints,
        first_checks,
        after_call,
        mode=settings.permission_mode,
        sandboxed=commands_sandboxed(settings),
        extra_tools=extra_tools,
    )


def tool_context(
    settings: Settings, tools: SessionTools, compaction: CompactionPolicy
) -> ToolContext:
    """The session's tool context; its results' cap is the one for an empty conversation
    (a turn narrows it to what is left at each call: agent/result_room.py)."""
    return ToolContext(
        workspace=tools.workspace,
        output_limit_chars=cap_chars(compaction.trigger_tokens),
        bash_timeout_s=settings.bash_timeout_s,
        rules=tools.permissions.rules,
        sandbox=tools.sandbox,
        jobs=tools.jobs,
        no_images=images_refusal(settings.model.ref),
        skill_grants=SkillGrants() if tools.skills is not None else None,
    )


def install(
    agent: Agent,
    config: AgentConfig,
    parts: AgentParts,
    mcp: McpServers | None = None,
    named: NamedAgents | None = None,
    skills: SessionSkills | None = None,
) -> None:
    """Give `agent` its new config and collaborators (and the MCP servers' tools, the
    named subagents its task tool offers, the `skill` tool); its conversation carries on."""
    parts.tools.add(TaskTool(agent, named))
    skill_tool = skills.tool(lambda: agent.conversation.messages) if skills else None
    if skill_tool is not None:
        parts.tools.add(skill_tool)
    if mcp is not None:
        mcp.add_tools(parts.tools)
    agent.config, agent.parts = config, parts


def open_checkpoints(
    settings: Settings, workspace: Path, programs: Programs | None, session: str, log: EventLog
) -> TurnCheckpoints | None:
    """The session's checkpoints, following its log (None when the profile switches them
    off); without git (or with none caretz may run, see `programs`) they are off, and
    say so once the session's start is in its log (`announce`)."""
    if not settings.values.checkpoints:
        return None
    git = programs.git if programs is not None else None
    return TurnCheckpoints.opened(
        settings.data_dir,
        workspace,
        settings.values.checkpoint_size_cap,
        git=git,
        session=session,
        log=log,
    )
