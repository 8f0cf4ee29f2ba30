"""The interactive session's state and what slash commands do to it: switch the
model, profile, guard or permission mode, move to another session, compact, report costs.

What each of these does to the session is `caretz.app.session.AppSession`'s; this says how
it went. `Repl` (caretz.ui.repl) adds the prompt loop on top; slash commands only need this.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from caretz.agent.compaction import Reason
from caretz.agent.limits import usage_report
from caretz.agent.signals import Terminated
from caretz.config_base import ConfigError
from caretz.pricing import price_for
from caretz.session.store import SessionNotFound, SessionStore
from caretz.text import plural
from caretz.ui.goal_commands import GoalWork
from caretz.ui.live import LiveView, WrappingMarkdown
from caretz.ui.loops import LoopSchedule
from caretz.ui.permission_lines import YOLO_BANNER

if TYPE_CHECKING:
    from caretz.app.session import AppSession
    from caretz.config.overrides import Flags
    from caretz.goal.state import Goal
    from caretz.runtime.custom_commands import PreparedCommand
    from caretz.skills.files import Skill
    from caretz.slash_commands.files import Catalog

RECAP_LINES = 30  # lines of the last answer shown when a session is resumed


class SessionControl:
    """The running interactive session; slash commands act on it."""

    draft = ""  # text the next prompt starts with (a rewound turn's prompt)
    custom_catalog: tuple[float, Catalog] | None = None  # when the custom commands were read
    queued_command: PreparedCommand | None = None  # a custom command the prompt loop runs
    queued_skill: tuple[Skill, str] | None = None  # a skill and its arguments, to run
    queued_prompt: str | None = None  # a prompt the loop sends next (/plan PROMPT)
    queued_mcp_prompt: str | None = None  # `/mcp__server__prompt ARGS`, for Session.submit

    def __init__(
        self,
        session: AppSession,
        view: LiveView,
        console: Console,
        env: Mapping[str, str],
        flags: Flags | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.view = view
        self.console = console
        self.env = env
        self.flags = flags
        self.clock = clock
        self.running = True
        self.session = session
        self.queued: GoalWork | None = None  # what /goal asked for; the prompt loop runs it
        self.loops = LoopSchedule(clock)
        self.started_mode = session.settings.permission_mode  # kept in Shift+Tab's cycle

    @property
    def goal(self) -> Goal | None:
        """The session's goal (a resumed session's paused one comes back)."""
        return self.session.goal

    # -- compaction ----------------------------------------------------------------------
    def context_tokens(self) -> int:
        return self.session.context_tokens()

    def compact(self, reason: Reason = "manual") -> None:
        with self.console.status("compacting the conversation…", spinner="dots"):
            try:
                result = self.session.compact(reason=reason)
            except Terminated:
                raise
            except KeyboardInterrupt:
                self.info("compaction stopped; the conversation is unchanged")
                return
        if result is None:
            self.info("nothing to compact yet: the conversation is only the latest turns")
        elif not result.summarized and not result.trimmed:
            self.error(f"compaction failed: {result.summary_error}")

    # -- session changes (slash commands) ---------------------------------------------------
    def switch_model(self, ref: str) -> None:
        try:
            self.info(self.session.switch(model=ref))
        except ConfigError as error:
            self.error(f"{error} (still on {self.session.agent.config.model_ref})")

    def switch_profile(self, name: str) -> None:
        try:
            line = self.session.switch(profile=name)
        except ConfigError as error:
            self.error(f"{error} (still on profile {self.session.settings.profile_name})")
            return
        self.view.detailed = self.session.settings.output == "detailed"
        self.info(line)

    def set_guard_mode(self, mode: str) -> None:
        try:
            self.info(self.session.switch(guard_mode=mode))
        except ConfigError as error:
            self.error(f"{error} (the loop guard is unchanged)")

    def set_permission_mode(self, mode: str) -> None:
        try:
            line = self.session.switch(permission_mode=mode)
        except ConfigError as error:
            mode = self.session.settings.permission_mode
            self.error(f"{error} (permissions unchanged: {mode})")
            return
        self.info(line)
        self.yolo_banner()

    def yolo_banner(self) -> None:
        if self.session.settings.permission_mode == "yolo":
            self.console.print(f"[bold red]{escape(YOLO_BANNER)}[/]", highlight=False)

    def store(self) -> SessionStore:
        return SessionStore(self.session.settings.data_dir)

    def resume(self, session_id: str) -> None:
        try:
            path = self.store().events_path(session_id)
        except SessionNotFound as error:
            self.error(str(error))
            return
        if path.parent.name == self.session.id:
            self.info(f"already in session {self.session.id}")
            return
        if self.replace_session(path.parent.name):
            self.recap()

    def new_session(self) -> None:
        if self.replace_session(None):
            self.info("a new, empty conversation")

    def replace_session(self, resume: str | None) -> bool:
        """Leave this session for a new one (or a past one); the model, profile and
        guard mode in use carry over."""
        old = self.session
        try:
            self.session = old.reopen(resume)
        except (ConfigError, SessionNotFound) as error:
            self.error(str(error))
            return False
        self.info(f"left session {old.id} (reopen it with /resume {old.id})")
        self.info(f"session {self.session.id}")
        return True

    # -- reports -------------------------------------------------------------------------
    def show_cost(self) -> None:
        agent = self.session.agent
        totals = agent.conversation.totals
        report = usage_report(totals)  # every call, the loop guard's judge's too
        usage = report.usage
        lines = [
            f"tokens: {usage.input_tokens:,} in · {usage.output_tokens:,} out · "
            f"{usage.cache_read_tokens:,} cache read · {usage.cache_write_tokens:,} cache write",
            f"requests: {totals.requests} · tool calls: {totals.tool_calls}",
        ]
        if report.judge_calls:
            judge = report.judge_usage
            cost = _dollars(report.judge_cost_usd)
            lines.append(
                f"of which the loop guard's judge: {plural(report.judge_calls, 'call')} · "
                f"{judge.input_tokens + judge.cache_read_tokens:,} in · "
                f"{judge.output_tokens:,} out · {cost}"
            )
        if report.cost_usd is not None:
            lines.append(f"cost: {_dollars(report.cost_usd)}")
        else:
            lines.append('cost: unknown (a model without a price; add one under "prices")')
        if price_for(agent.config.model_ref, self.session.settings.prices) is None:
            lines.append(f"no price known for {agent.config.model_ref}")
        window = self.session.context_window
        lines.append(f"context: ~{self.context_tokens():,} of {window:,} tokens")
        for line in lines:
            self.info(line)

    def recap(self) -> None:
        conversation = self.session.agent.conversation
        self.info(f"resumed session {self.session.id}: {conversation.turns} turn(s) so far")
        if self.goal is not None and self.goal.status == "paused":
            self.info(f"paused goal: {self.goal.condition} (/goal resume carries on)")
        if conversation.last_request:
            self.console.print(f"[bold]>[/] {escape(conversation.last_request)}", highlight=False)
        if conversation.last_answer:
            lines = conversation.last_answer.strip().splitlines()
            shown = "\n".join(lines[-RECAP_LINES:])
            if len(lines) > RECAP_LINES:
                self.info(f"… (the last {RECAP_LINES} lines of the answer)")
            self.console.print(WrappingMarkdown(shown))

    def info(self, text: str) -> None:
        self.console.print(f"[dim]{escape(text)}[/]", highlight=False)

    def error(self, text: str) -> None:
        self.console.print(f"[red]{escape(text)}[/]", highlight=False)


def _dollars(cost: float | None) -> str:
    return "cost unknown" if cost is None else f"${cost:.4f}"
