"""Opening a session in two steps.

`check` reads and validates everything a session needs (the permission rules, the hooks,
`.mcp.json`, the sandbox, the model's provider and key, the judge, the session to
resume): any problem is one ConfigError or SessionNotFound, and nothing has started: no
session folder, no server, no process left running. `build` then makes the session's
folder and log and every part with its log and collaborators given at construction,
starts the MCP servers last, and writes the session's start; nothing is patched after
it is made.

/clear and /resume open the next session of an interactive run with what it takes over
(`Carried`): the permissions, the hooks as read at the start, the running MCP servers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.agent.agent import Agent
from caretz.agent.parts import Conversation
from caretz.agent.prompts import project_instructions
from caretz.app import session_start
from caretz.checkpoints.project import project_root
from caretz.config.sandbox import open_session_sandbox, session_door
from caretz.guard.seam import NullGuard
from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import Usage
from caretz.runtime.git_watch import open_git_watch
from caretz.runtime.hooks import hook_files, open_hooks
from caretz.runtime.judge import SessionJudge, build_loop_guard
from caretz.runtime.mcp import configured_servers, start_servers
from caretz.runtime.network import wire_network
from caretz.runtime.permissions import PermissionRules, read_rules, session_permissions
from caretz.runtime.probes import StartProbes
from caretz.runtime.project_trust import (
    ProjectTrust,
    has_skills,
    project_trust,
)
from caretz.runtime.subagents import named_agents
from caretz.runtime.web import server_search
from caretz.runtime.wiring import (
    AgentWiring,
    SessionTools,
    install,
    open_checkpoints,
    session_provider,
    wire_agent,
)
from caretz.session.events import EventLog
from caretz.session.store import SessionStore, in_project, read_history
from caretz.tools.jobtable import JobTable

if TYPE_CHECKING:
    from caretz.hooks import session as hook_session
    from caretz.runtime import skills as runtime_skills
    from caretz.telemetry import settings as telemetry_settings
    from caretz.telemetry import sink as telemetry_sink
else:
    hook_session = lazy_module("caretz.hooks.session")  # the hooks' modules: only with hooks
    runtime_skills = lazy_module("caretz.runtime.skills")  # only where skill folders are
    # OpenTelemetry's SDK and exporter: only for a session that exports telemetry.
    telemetry_settings = lazy_module("caretz.telemetry.settings")
    telemetry_sink = lazy_module("caretz.telemetry.sink")

if TYPE_CHECKING:
    from caretz.app.session import View
    from caretz.config.settings import Settings
    from caretz.guard.guard import LoopGuard
    from caretz.hooks.matching import HookFile
    from caretz.mcp_client.plan import Configured
    from caretz.mcp_client.servers import McpServers
    from caretz.providers.base import Provider
    from caretz.runtime.skills import SessionSkills
    from caretz.sandbox.detect import SandboxCheck
    from caretz.sandbox.runner import Sandbox
    from caretz.telemetry.settings import TelemetryOptions
    from caretz.telemetry.sink import TelemetrySink
    from caretz.tools.asking import Asker
    from caretz.tools.permission import SessionPermissions


@lazy_dataclass(frozen=True, kw_only=True)
class OpenRequest:
    """What `AppSession.open` was asked for."""

    settings: Settings
    view: View
    env: Mapping[str, str]
    workspace: Path
    resume: str | None = None  # None | "latest" | a session ID
    asker: Asker | None = None  # None: nobody asks, so questions are denied
    mcp_servers: tuple[Configured, ...] = ()  # started besides the configured ones
    mcp_background: bool = False  # the servers start behind the prompt (the REPL's)
    trust_project: bool = False  # the client approved the project's configuration (the API's)


@lazy_dataclass(frozen=True, kw_only=True)
class Carried:
    """What the next session of an interactive run takes over from the one before."""

    permissions: SessionPermissions  # the rules as read at the start, those saved since
    hook_files: tuple[HookFile, ...]  # the hooks as read at the start
    mcp: McpServers | None  # the running servers (None: read and started again)
    end_previous: Callable[[], None]  # its SessionEnd hooks, once nothing can fail
    trust: ProjectTrust  # the project's configuration as read at the start
    skills: SessionSkills | None = None  # the skills as found at the start


@lazy_dataclass(frozen=True, kw_only=True)
class Place:
    """Where the session's log is: a new session's folder is made by `build`."""

    resumed: bool
    session_id: str
    events_path: Path | None  # None: a new session
    conversation: Conversation
    project: Path  # the folder its checkpoints cover, as its start records it
    other_project: str  # a session resumed by ID from another folder: that folder


@lazy_dataclass(frozen=True, kw_only=True)
class Checked:
    """Everything a session is built from, read and validated; nothing started."""

    request: OpenRequest
    trust: ProjectTrust  # the project's configuration, through its gate
    rules: PermissionRules | None  # None: the permissions are carried over
    hook_files: tuple[HookFile, ...]
    servers: tuple[Configured, ...]  # to start (none when they are carried over)
    judge: SessionJudge
    sandbox: Sandbox
    sandbox_check: SandboxCheck
    provider: Provider
    place: Place
    git_status: list[str] | None = None  # the prompt's git lines (runtime/probes.py)
    served_window: Callable[[], int | None] | None = None  # the model server's window
    instructions: tuple[tuple[Path, str], ...] = ()  # AGENTS.md / CLAUDE.md, as read
    notices: tuple[str, ...] = ()  # lines for the start: the instruction files left out
    skills: SessionSkills | None = None  # None: no skill folder anywhere
    telemetry: TelemetryOptions | None = None  # None: off (docs/telemetry.md)


@lazy_dataclass(frozen=True, kw_only=True)
class SessionParts:
    """A session as built: its log, its agent and what the agent's tools run with."""

    id: str
    events_path: Path
    log: EventLog
    agent: Agent
    settings: Settings
    judge: SessionJudge
    loop_guard: LoopGuard | None  # None until a mode other than off needs one
    tools: SessionTools
    sandbox_check: SandboxCheck
    mcp: McpServers | None
    trust: ProjectTrust  # what the session uses of its project's configuration
    resumed: bool = False  # a past session carried on
    telemetry: TelemetrySink | None = None  # one more listener on the log, when on


ON = ("1", "true")  # CARETZ_ENABLE_TELEMETRY's values that turn telemetry on


# -- step 1: check ---------------------------------------------------------------------------


def check(
    request: OpenRequest, carried: Carried | None = None, probes: StartProbes | None = None
) -> Checked:
    """Raises ConfigError or SessionNotFound; starts nothing but bubblewrap's check and git
    status (`probes`, when the caller started them sooner), which run while the rest is read."""
    settings, workspace, env = request.settings, request.workspace, request.env
    probes = probes or StartProbes(settings, workspace, env)
    trust, rules, files, servers = project_parts(request, carried)
    sandbox, sandbox_check = open_session_sandbox(settings, workspace, env, probes.sandbox_check())
    instructions, refused = project_instructions(workspace, session_door(sandbox, workspace))
    skills = carried.skills if carried is not None else find_skills(settings, workspace, trust, env)
    provider = session_provider(settings, env, provider_search(settings, rules, carried))
    served_window = probes.ask_served_window(provider)  # while the rest is checked and built
    place = find_place(settings, request.resume, workspace)
    judge = SessionJudge(settings, env, settings.model, place.conversation.totals)
    if settings.values.guard_mode != "off":
        judge.ensure()  # a judge model without its key fails now
    return Checked(
        request=request,
        trust=trust,
        rules=rules,
        hook_files=files,
        servers=servers,
        judge=judge,
        sandbox=sandbox,
        sandbox_check=sandbox_check,
        provider=provider,
        place=place,
        git_status=probes.git_status(),
        served_window=served_window,
        instructions=tuple(instructions),
        notices=(*refused, *(skills.warnings if skills is not None and carried is None else ())),
        skills=skills,
        telemetry=telemetry_options(settings, env),
    )


def project_parts(
    request: OpenRequest, carried: Carried | None
) -> tuple[ProjectTrust, PermissionRules | None, tuple[HookFile, ...], tuple[Configured, ...]]:
    """What the session uses of its project: its trust, rules, hook files and the MCP
    servers to start (a session opened by /clear or /resume carries them over)."""
    settings = request.settings
    if carried is not None:
        wanted = carried.mcp is None
        servers = (*configured_servers(settings, carried.trust), *request.mcp_servers)
        return carried.trust, None, carried.hook_files, servers if wanted else ()
    trust = project_trust(settings, request.workspace, request.trust_project)
    servers = (*configured_servers(settings, trust), *request.mcp_servers)
    return trust, read_rules(settings, trust), tuple(hook_files(settings, trust)), servers


def telemetry_options(settings: Settings, env: Mapping[str, str]) -> TelemetryOptions | None:
    """Telemetry's options when the user's profile or CARETZ_ENABLE_TELEMETRY turns it on
    (never a project's files: the gate hands none of them here); raises ConfigError."""
    wanted = settings.values.telemetry
    if not (wanted.enabled or env.get("CARETZ_ENABLE_TELEMETRY", "").strip().lower() in ON):
        return None
    return telemetry_settings.telemetry_options(
        wanted.log_user_prompts, wanted.log_tool_details, env
    )


def find_skills(
    settings: Settings, workspace: Path, trust: ProjectTrust, env: Mapping[str, str]
) -> SessionSkills | None:
    """The session's skills (None: no skill folder anywhere, and nothing is loaded)."""
    home = Path(env.get("HOME") or Path.home())
    if not has_skills(workspace, home, settings.data_dir):
        return None
    return runtime_skills.session_skills(settings, workspace, trust, home)


def provider_search(
    settings: Settings, rules: PermissionRules | None, carried: Carried | None
) -> int | None:
    """How many of the provider's own web searches a request may make (None: not offered),
    by the rules as read (or carried over): a WebSearch deny or ask rule leaves it out."""
    if carried is not None:
        return server_search(settings, carried.permissions.rules)
    assert rules is not None
    return server_search(settings, rules.ruleset())


def find_place(settings: Settings, resume: str | None, workspace: Path) -> Place:
    """A new session, or the one to resume with its conversation rebuilt; raises
    SessionNotFound, or ConfigError for a data folder that is a file."""
    store = SessionStore(settings.data_dir)
    project = project_root(workspace)
    if resume is None:
        return Place(
            resumed=False,
            session_id="",
            events_path=None,
            conversation=Conversation(),
            project=project,
            other_project="",
        )
    events_path = store.events_path(store.latest(project) if resume == "latest" else resume)
    session_id = events_path.parent.name
    recorded = store.project_of(session_id)
    other = "" if in_project(recorded, project) else recorded[0] or recorded[1]
    history = read_history(events_path)
    conversation = Conversation(
        messages=history.conversation,
        turns=history.turns,
        last_request=history.last_request,
        last_answer=history.last_answer,
    )
    return Place(
        resumed=True,
        session_id=session_id,
        events_path=events_path,
        conversation=conversation,
        project=project,
        other_project=other,
    )


# -- step 2: build -----------------------------------------------------------------------------


def build(checked: Checked, carried: Carried | None = None) -> SessionParts:
    """The session, its start in its log; ConfigError only for a folder it cannot make."""
    request, place = checked.request, checked.place
    session_id, events_path = place.session_id, place.events_path
    if events_path is None:
        session_id, events_path = SessionStore(request.settings.data_dir).create()
    log = EventLog(events_path)
    tools = session_tools(checked, carried, session_id, log)
    loop_guard = guard_for(request.settings, log, checked.judge)
    wiring = agent_wiring(checked, log, tools)
    config, agent_parts = wire_agent(wiring, checked.provider, loop_guard or NullGuard())
    mcp = carried.mcp if carried is not None else None
    if mcp is None:  # last: nothing else can fail now
        mcp = start_mcp(checked, log)
    if carried is not None:
        carried.end_previous()
    telemetry = open_telemetry(checked, log)  # before the start is written: it opens the trace
    log.subscribe(request.view.on_event)
    agent = Agent(config, agent_parts, place.conversation)
    if agent_parts.price(config.model_ref, Usage()) is None:  # unknown, as a turn says
        place.conversation.totals.price_unknown()
    named = named_agents(request.settings, request.workspace, request.env, checked.sandbox_check)
    install(agent, config, agent_parts, mcp, named, checked.skills)
    parts = SessionParts(
        id=session_id,
        events_path=events_path,
        log=log,
        agent=agent,
        settings=request.settings,
        judge=checked.judge,
        loop_guard=loop_guard,
        tools=tools,
        sandbox_check=checked.sandbox_check,
        mcp=mcp,
        trust=checked.trust,
        resumed=place.resumed,
        telemetry=telemetry,
    )
    session_start.start(parts, checked, carried)
    return parts


def open_telemetry(checked: Checked, log: EventLog) -> TelemetrySink | None:
    """The exporter, one more listener on the session's log (None: telemetry is off)."""
    if checked.telemetry is None:
        return None
    telemetry = telemetry_sink.open_sink(checked.telemetry, checked.request.settings.prices)
    log.subscribe(telemetry.on_event)
    return telemetry


def agent_wiring(checked: Checked, log: EventLog, tools: SessionTools) -> AgentWiring:
    request = checked.request
    return AgentWiring(
        settings=request.settings,
        env=request.env,
        log=log,
        listener=request.view,
        judge=checked.judge,
        tools=tools,
        git_status=checked.git_status,
        served_window=checked.served_window,
    )


def start_mcp(checked: Checked, log: EventLog) -> McpServers | None:
    """The session's MCP servers started (in the background for `mcp_background`)."""
    request = checked.request
    return start_servers(
        request.settings,
        list(checked.servers),
        request.workspace,
        checked.trust,
        request.env,
        log.emit,
        background=request.mcp_background,
    )


def session_tools(
    checked: Checked, carried: Carried | None, session_id: str, log: EventLog
) -> SessionTools:
    """The session's permissions, hooks, git watch and checkpoints, each into its log."""
    request = checked.request
    settings, workspace = request.settings, request.workspace
    if carried is not None:
        permissions = carried.permissions.carried_over(log.emit)
    else:
        assert checked.rules is not None  # read by `check` unless carried over
        permissions = session_permissions(settings, checked.rules, request.asker, log.emit)
    assert log.path is not None
    sandbox, sandbox_check = checked.sandbox, checked.sandbox_check
    hooks = None
    if checked.hook_files:
        where = hook_session.HookSession(session_id, log.path, workspace)
        hooks = open_hooks(settings, checked.hook_files, permissions, where, log.emit, sandbox)
    git_watch = open_git_watch(sandbox, sandbox_check, settings.data_dir, log.emit)
    wire_network(sandbox, log.emit, permissions.asker)  # the proxy's refusals, into the log
    programs = sandbox_check.programs
    checkpoints = open_checkpoints(settings, workspace, programs, session_id, log)
    return SessionTools(
        workspace=workspace,
        permissions=permissions,
        sandbox=sandbox,
        jobs=JobTable(),
        hooks=hooks,
        git_watch=git_watch,
        checkpoints=checkpoints,
        instructions=checked.instructions,
        skills=checked.skills,
    )


def guard_for(settings: Settings, log: EventLog, judge: SessionJudge) -> LoopGuard | None:
    """The loop guard; none with its mode off (the agent runs on NullGuard, and the
    loopGuard section is not read: without a profile file, not even built)."""
    if settings.values.guard_mode == "off":
        return None
    return build_loop_guard(settings.loop_guard, log.emit, judge)
