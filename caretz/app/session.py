"""The application layer: one `AppSession` that every front end drives.

The REPL, `caretz -p`, `caretz acp`, the Python API and stream-json are views over it:
they turn input into the calls below and render what comes out (streamed deltas and
session events through their `View`, an `Outcome` when a piece of work ends). What a
session does (a turn with the guard's automatic resumes, a custom command on its model
and with its allowed tools, a goal's turns, compaction, switching the model, profile,
guard or permission mode, rewinding, cancelling) is written once, here.

Work runs synchronously in the caller's thread; `cancel` ends it from any thread the
way Ctrl-C does (caretz/app/cancel.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from caretz.agent.outcomes import Outcome as Outcome  # acp/sessions.py makes one through it
from caretz.agent.parts import TurnListener
from caretz.agent.signals import Terminated
from caretz.app.cancel import Canceller
from caretz.app.commands import find_command
from caretz.app.goals import goal_driver, logged_goal, new_goal
from caretz.app.outcome import interrupted_outcome, usage_outcome
from caretz.app.pending_runs import PendingRuns
from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.messages import Image
from caretz.providers.base import abort
from caretz.runtime.probes import StartProbes
from caretz.session.records.session import JobsStopped

if TYPE_CHECKING:
    from caretz.agent import driver as turn_driver
    from caretz.agent import goal_driver as goal_driving
    from caretz.app import (
        assembly,
        command_run,
        mcp_approval,
        mcp_mentions,
        rewinding,
        shell_mode,
        skill_run,
        switching,
    )
    from caretz.app import mentions as at_mentions
    from caretz.runtime import attachments
else:
    assembly = lazy_module("caretz.app.assembly")  # once the start probes run (see `open`)
    turn_driver = lazy_module("caretz.agent.driver")  # the turn loop: after the probes start too
    goal_driving = lazy_module("caretz.agent.goal_driver")  # the goal's modules: only with a goal
    switching = lazy_module("caretz.app.switching")  # only when a switch is asked for
    rewinding = lazy_module("caretz.app.rewinding")  # only to rewind
    command_run = lazy_module("caretz.app.command_run")  # only with a custom command
    skill_run = lazy_module("caretz.app.skill_run")  # only with skills
    shell_mode = lazy_module("caretz.app.shell_mode")  # the shell mode: at the first `!command`
    at_mentions = lazy_module("caretz.app.mentions")  # `@path` mentions: the REPL's
    attachments = lazy_module("caretz.runtime.attachments")  # images to read: loaded then
    mcp_approval = lazy_module("caretz.app.mcp_approval")  # `/mcp approve`: interactive only
    mcp_mentions = lazy_module("caretz.app.mcp_mentions")  # `@server:uri`, `/mcp__s__p`: then

if TYPE_CHECKING:
    from caretz.agent.compaction import Compaction, Reason
    from caretz.agent.goal_driver import GoalDriver
    from caretz.agent.limits import RunTotals
    from caretz.agent.rewind import Rewound, SessionRewind
    from caretz.app.assembly import SessionParts
    from caretz.app.mentions import Attached
    from caretz.app.shell_mode import ShellRun
    from caretz.checkpoints import Checkpoint
    from caretz.checkpoints.events import Scope
    from caretz.config.overrides import Flags
    from caretz.config.settings import Settings
    from caretz.goal.state import Goal
    from caretz.mcp_client.model import ServerStatus
    from caretz.mcp_client.plan import Configured
    from caretz.runtime.custom_commands import PreparedCommand
    from caretz.session.records.base import Record
    from caretz.skills.files import Skill
    from caretz.tools.asking import Asker


class View(TurnListener, Protocol):
    """What a front end gives the session: streamed deltas (`on_text`, `on_thinking`,
    `on_retry`, `on_response_start`) and every session event."""

    def on_event(self, event: Record) -> None: ...


SWITCHES = ("model", "profile", "guard_mode", "permission_mode")


class AppSession:
    """A running session: its parts (agent, log, permissions, hooks, checkpoints,
    sandbox, MCP servers) and what front ends ask of it."""

    def __init__(
        self, parts: SessionParts, view: View, env: Mapping[str, str], flags: Flags | None = None
    ):
        tools = parts.tools
        self.id, self.events_path, self.log = parts.id, parts.events_path, parts.log
        self.agent, self.settings, self.judge = parts.agent, parts.settings, parts.judge
        self.loop_guard = parts.loop_guard  # None until a guard mode needs one
        self.workspace, self.permissions, self.jobs = tools.workspace, tools.permissions, tools.jobs
        self.hooks, self.git_watch = tools.hooks, tools.git_watch
        self.checkpoints = tools.checkpoints
        self.sandbox, self.sandbox_check = tools.sandbox, parts.sandbox_check
        self.instructions = tools.instructions  # AGENTS.md / CLAUDE.md, read at the start
        self.skills = tools.skills  # the skills found at the start (None: none)
        self.mcp = parts.mcp
        self.trust = parts.trust  # what the session uses of its project's configuration
        self.telemetry = parts.telemetry  # None: off
        self.view = view
        self.env = env
        self.flags = flags
        # A resumed session's paused goal; a new session's log holds none to read.
        self.goal: Goal | None = logged_goal(self.events_path) if parts.resumed else None
        # `!command`s run since the last turn (a resumed session's are in its log).
        self.shell_runs = PendingRuns.logged(self.events_path) if parts.resumed else PendingRuns()
        self._canceller = Canceller()
        self._closed = False
        self._images_attached = False  # --image files go with the session's first prompt
        # An approved plan switches the session as /permissions does (tools/plan_exit.py).
        self.permissions.switch_mode = lambda mode: switching.set_permission_mode(self, mode)

    # -- opening and closing -----------------------------------------------------------
    @classmethod
    def open(
        cls,
        settings: Settings,
        view: View,
        *,
        env: Mapping[str, str] | None = None,
        workspace: Path | None = None,
        resume: str | None = None,
        asker: Asker | None = None,
        mcp_servers: Sequence[Configured] = (),
        flags: Flags | None = None,
        mcp_background: bool = False,
        trust_project: bool = False,
    ) -> AppSession:
        """Open a new session (or resume one: "latest" or an ID). Everything that can be
        wrong (the profile, model, keys, judge, rules, hooks, `.mcp.json`, sandbox) is a
        ConfigError or SessionNotFound before anything starts. `asker` answers permission
        questions (None: nobody asks, so they are denied); `mcp_servers` are started
        besides the configured ones; `flags` are re-applied by a profile switch.
        `mcp_background`: open without waiting for the MCP servers, whose tools join when
        they are ready (`collect_servers`); a call of one still starting waits for it.
        `trust_project`: the caller approved the project's configuration as it is now, for
        this session (nothing is stored); else it is used only as the user approved it."""
        env = os.environ if env is None else env
        workspace = workspace or Path.cwd()
        # Started first, so bubblewrap and git run while the session's modules load.
        probes = StartProbes(settings, workspace, env)
        request = assembly.OpenRequest(
            settings=settings, view=view, env=env, workspace=workspace, resume=resume, asker=asker, mcp_servers=tuple(mcp_servers), mcp_background=mcp_background,
            trust_project=trust_project,
        )  # fmt: skip
        return cls(assembly.build(assembly.check(request, probes=probes)), view, env, flags)

    def reopen(self, resume: str | None = None) -> AppSession:
        """A new, empty session (`resume` None: /clear) or a past one (/resume ID) in
        place of this one, which is closed once the new one could open. The model,
        profile and guard mode in use, the project's rules and hooks as read at the
        start and the MCP servers carry over. Raises ConfigError or SessionNotFound,
        and this session carries on."""
        reason = "clear" if resume is None else "resume"
        carried = assembly.Carried(
            permissions=self.permissions,  # the project's rules as read at the start
            hook_files=self.hooks.files if self.hooks is not None else (),  # and its hooks
            mcp=self.mcp,  # the MCP servers keep running
            end_previous=lambda: self.end_hooks(reason),
            trust=self.trust,  # and what of the project's configuration it uses
            skills=self.skills,  # and the skills found at the start
        )
        request = assembly.OpenRequest(
            settings=self.settings,
            view=self.view,
            env=self.env,
            workspace=self.workspace,
            resume=resume,
        )
        parts = assembly.build(assembly.check(request, carried), carried)
        self.mcp = None  # the new session has them now
        self.close(reason)
        return AppSession(parts, self.view, self.env, self.flags)

    def close(self, reason: str = "other") -> None:
        """SessionEnd hooks (`reason`: clear, resume, prompt_input_exit, other), then the
        background jobs, MCP servers, git watch, checkpoints, sandbox and log; once (even
        when Ctrl-C ends the hooks)."""
        if self._closed:
            return
        self._closed = True
        try:
            self.end_hooks(reason)
        finally:
            self._release()

    def end_hooks(self, reason: str) -> None:
        """SessionEnd hooks (once), with why the session ends."""
        if self.hooks is not None:
            self.hooks.session_ended(reason)

    def _release(self) -> None:
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
        if self.telemetry is not None:
            self.telemetry.close()  # what is left sent, within its time

    def servers_settled(self) -> bool:
        """Whether an MCP server started in the background has finished starting."""
        return self.mcp is not None and self.mcp.has_settled()

    def collect_servers(self) -> list[str]:
        """Take in the MCP servers that finished starting in the background: their tools
        join the session, their events are written (in this thread). Their names."""
        return self.mcp.collect() if self.mcp is not None else []

    def approve_servers(self, names: Sequence[str]) -> list[ServerStatus]:
        """`/mcp approve`: approve the project's `.mcp.json` servers named (all for none)
        and start those waiting for it; their tools join the session now. Raises
        ConfigError for a name the project's `.mcp.json` does not have."""
        return mcp_approval.approve_and_start(self, list(names))

    # -- work ----------------------------------------------------------------------------
    def submit(self, prompt: str, *, commands_looked_up: bool = False) -> Outcome:
        """A `/name args` skill or custom command, or one turn plus the loop guard's
        automatic resumes. A `/name` that is neither is a usage error; nothing is sent.
        `commands_looked_up`: the caller found no custom command in `prompt` already."""
        if prompt.strip().startswith("/mcp__"):  # a server's prompt (app/mcp_mentions.py)
            return mcp_mentions.run_prompt_command(self, prompt)
        skill = skill_run.skill_for(self.skills, prompt) if self.skills is not None else None
        if skill is not None:
            return self.run_skill(*skill)
        if commands_looked_up:
            return self.turn(prompt)
        try:
            command = find_command(self.settings, self.workspace, prompt, self.env)
        except ConfigError as error:
            return usage_outcome(str(error))
        if command is not None:
            return self.run_command(command)
        return self.turn(prompt)

    def turn(
        self, prompt: str, images: Sequence[Image] | None = None, typed: str | None = None
    ) -> Outcome:
        """One turn on `prompt` as written (never a command), with `images` (None: those it
        attaches) and the MCP resources `typed`'s (None: the prompt's) `@server:uri` name,
        plus the guard's automatic resumes; the `!command`s run since the last turn go
        first. An image that cannot be sent is a usage error; nothing is sent then."""
        try:
            images = self.attached_images(prompt) if images is None else images
            if "://" in (mentions := prompt if typed is None else typed) and "@" in mentions:
                prompt, more = mcp_mentions.attach_resources(self, prompt, typed)
                images = [*images, *more]
        except ConfigError as error:
            return usage_outcome(str(error))
        sent = self.shell_runs.prompt(prompt)
        turns = turn_driver.run_with_auto_resume
        return self._work(lambda: turns(self.agent, sent, images))

    def attached_images(self, mentions: str) -> list[Image]:
        """The images `mentions`' `@shot.png` and (first prompt only) --image attach;
        raises ConfigError naming one that cannot be sent."""
        paths = () if self._images_attached else self.settings.images
        if not paths and "@" not in mentions:
            self._images_attached = True
            return []
        images = attachments.prompt_images(self.agent.parts.tool_ctx, mentions, paths)
        self._images_attached = True
        return images

    def attach(self, text: str) -> Attached:
        """A typed message's `@path` files and folders attached (caretz/app/mentions.py)."""
        return at_mentions.attach_mentions(text, self.agent.parts.tool_ctx)

    def run_shell(self, command: str, on_output: Callable[[str], None]) -> ShellRun:
        """`!command`: run it as the user (in the sandbox, unasked), `on_output` called in
        this thread as its output arrives; the next turn's prompt carries it. Ctrl-C or
        `cancel` ends it (the run says so); raises OSError when it cannot start."""
        with self._canceller.running():
            run = shell_mode.run_shell(command, self.agent.parts.tool_ctx, on_output, self.log.emit)
        self.shell_runs.add(run)
        return run

    def run_command(self, prepared: PreparedCommand) -> Outcome:
        """A prepared custom command: its `!` commands and `@` files, then its turn, on
        its model and with its allowed tools; the session's after."""
        return self._work(lambda: command_run.run_command(self, prepared))

    def run_skill(self, skill: Skill, arguments: str = "") -> Outcome:
        """A skill run by name: its instructions as the turn's prompt, its allowed tools
        granted for the turn (caretz/app/skill_run.py)."""
        return self._work(lambda: skill_run.run_skill(self, skill, arguments))

    def start_goal(self, condition: str, prompt: str | None = None) -> Outcome:
        """Set a goal and work until the evaluator finds it met (or it ends or pauses);
        `prompt` starts the work (default: the condition)."""
        try:
            driver = self._goal_driver(new_goal(self.settings, condition, prompt))
        except ConfigError as error:
            return usage_outcome(f"{error} (the goal was not started)")
        self.goal = driver.goal
        return self._work(lambda: driver.start(driver.goal.prompt))

    def resume_goal(self, prompt: str | None = None) -> Outcome:
        """Carry the paused goal on, with `prompt` or an automated message."""
        goal = self.goal
        if goal is None or goal.status != "paused":
            return usage_outcome("no paused goal to resume: /goal CONDITION sets one")
        try:
            driver = self._goal_driver(goal)
        except ConfigError as error:
            return usage_outcome(f"{error} (the goal was not resumed)")
        return self._work(lambda: driver.resume(prompt))

    def pause_goal(self, why: str) -> None:
        if self.goal is not None:
            goal_driving.pause_goal(self.log, self.goal, why)

    def clear_goal(self) -> None:
        if self.goal is not None:
            goal_driving.end_goal(self.log, self.goal, "cleared", 0, "goal cleared")
        self.goal = None

    def compact(self, reason: Reason = "manual") -> Compaction | None:
        """Compact the conversation now (None: nothing to compact yet)."""
        agent = self.agent
        policy = agent.parts.compaction
        if policy is None:
            return None
        tokens = self.context_tokens()
        with self._canceller.running():  # a cancel raises KeyboardInterrupt here
            return agent.compact(policy, tokens_before=tokens, reason=reason)

    def cancel(self) -> None:
        """From any thread: end the running work as Ctrl-C does (its command's group ended,
        open calls answered, `Turn.Ended` written, outcome "interrupted"; a compaction
        raises KeyboardInterrupt); nothing when idle."""
        self._canceller.cancel(wake=lambda: abort(self.agent.parts.provider))

    busy = property(lambda self: self._canceller.busy)

    # -- switches ------------------------------------------------------------------------
    def switch(
        self,
        *,
        model: str | None = None,
        profile: str | None = None,
        guard_mode: str | None = None,
        permission_mode: str | None = None,
    ) -> str:
        """Switch one thing: the model, profile, guard mode or permission mode, all built
        first (a ConfigError changes nothing); one line saying what changed."""
        given = [value is not None for value in (model, profile, guard_mode, permission_mode)]
        if sum(given) != 1:
            raise ValueError(f"switch one of {', '.join(SWITCHES)} at a time")
        if model is not None:
            return switching.model_line(self, model)
        if profile is not None:
            return switching.profile_line(self, profile)
        if guard_mode is not None:
            return switching.guard_line(self, guard_mode)
        assert permission_mode is not None
        return switching.permissions_line(self, permission_mode)

    # -- checkpoints -------------------------------------------------------------------
    def rewinder(self) -> SessionRewind:
        """The session's checkpoints; raises CheckpointsOff (a ConfigError) when it takes none."""
        return rewinding.rewinder(self)

    def rewind(
        self, target: Checkpoint, scope: Scope = "both", *, allowed: Sequence[str] = ()
    ) -> Rewound:
        """Files, conversation or both back to `target`; files changed outside caretz since
        are overwritten only where `allowed` names them (else RestoreConflict)."""
        return rewinding.rewind(self, target, scope, allowed)

    # -- what it has used ------------------------------------------------------------------
    @property
    def totals(self) -> RunTotals:
        """usage, cost_usd (None: unknown), requests, tool_calls."""
        return self.agent.conversation.totals

    @property
    def permission_denials(self) -> list[dict[str, str]]:
        return self.permissions.denials if self.permissions is not None else []

    @property
    def context_window(self) -> int:
        """The window the conversation is kept within (the agent's compaction policy)."""
        policy = self.agent.parts.compaction
        return policy.context_window if policy is not None else self.settings.context_window

    def context_tokens(self) -> int:
        """The conversation's size now, by the agent's own meter."""
        agent = self.agent
        return agent.conversation.context.estimate(agent.config.system, agent.conversation.messages)

    # -- inside ----------------------------------------------------------------------------
    def _work(self, work: Callable[[], Outcome]) -> Outcome:
        """Run `work` in this thread, cancellable (compaction, when due, is the agent's,
        before each request)."""
        grants = self.agent.parts.tool_ctx.skill_grants
        try:
            with self._canceller.running():
                return work()
        except Terminated as ended:
            return interrupted_outcome(ended)
        except KeyboardInterrupt as stop:
            return interrupted_outcome(stop)
        finally:
            if grants is not None:  # the skills' grants end with the work
                grants.clear()

    def _goal_driver(self, goal: Goal) -> GoalDriver:
        return goal_driver(self.agent, self.settings, self.env, goal)


def start_session(
    settings: Settings,
    view: View,
    env: Mapping[str, str] | None = None,
    resume: str | None = None,
    workspace: Path | None = None,
    asker: Asker | None = None,
) -> AppSession:
    """`AppSession.open` with positional arguments, as tests and embedding code call it."""
    return AppSession.open(settings, view, env=env, resume=resume, workspace=workspace, asker=asker)
