"""The interactive session's state and what slash commands do to it: switch the
model, profile, guard or permission mode, move to another session, compact, report costs.

`Repl` (caretz.ui.repl) adds the prompt loop on top; slash commands only need this.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from caretz.agent.compaction import (
    CompactionPolicy,
    ContextMeter,
    Reason,
    needs_compaction,
)
from caretz.agent.signals import Terminated
from caretz.ui.goal_commands import GoalWork, session_goal
from caretz.ui.live import LiveView, WrappingMarkdown
from caretz.ui.loops import LoopSchedule

if TYPE_CHECKING:
    from caretz.config.overrides import Flags
    from caretz.runtime.custom_commands import PreparedCommand
    from caretz.runtime.session import Session
    from caretz.session.store import SessionStore
    from caretz.slash_commands.files import Catalog

RECAP_LINES = 30  # lines of the last answer shown when a session is resumed


class SessionControl:
    """The running interactive session; slash commands act on it."""

    draft = ""  # text the next prompt starts with (a rewound turn's prompt)
    custom_catalog: tuple[float, Catalog] | None = None  # when the custom commands were read
    queued_command: PreparedCommand | None = None  # a custom command the prompt loop runs

    def __init__(
        self,
        session: Session,
        view: LiveView,
        console: Console,
        env: Mapping[str, str],
        overrides: Flags | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.view = view
        self.console = console
        self.env = env
        self.overrides = overrides
        self.clock = clock
        self.running = True
        self.session = session
        self.goal = session_goal(session)  # a resumed session's paused goal comes back
        self.queued: GoalWork | None = None  # what /goal asked for; the prompt loop runs it
        self.loops = LoopSchedule(clock)

    # -- compaction ----------------------------------------------------------------------
    def policy(self) -> CompactionPolicy:
        policy = self.session.agent.parts.compaction  # the window the session works to
        return policy or CompactionPolicy(context_window=self.session.settings.context_window)

    def context_tokens(self) -> int:
        agent = self.session.agent
        return self.meter.estimate(agent.config.system, agent.conversation.messages)

    def auto_compact(self) -> None:
        tokens = self.context_tokens()
        if needs_compaction(tokens, self.policy()):
            self.compact(reason="auto", tokens=tokens)

    def compact(self, reason: Reason = "manual", tokens: int | None = None) -> None:
        tokens = self.context_tokens() if tokens is None else tokens
        with self.console.status("compacting the conversation…", spinner="dots"):
            try:
                result = self.session.agent.compact(
                    self.policy(), tokens_before=tokens, reason=reason
                )
            except Terminated:
                raise
            except KeyboardInterrupt:
                self.info("compaction stopped; the conversation is unchanged")
                return
        if result is None:
            self.info("nothing to compact yet: the conversation is only the latest turns")
        elif not result.summarized and not result.trimmed:
            self.error(f"compaction failed: {result.summary_error}")

    @property
    def meter(self) -> ContextMeter:
        """The agent's own meter: the turn loop measures every response into it."""
        return self.session.agent.conversation.context

    # -- session changes (slash commands) ---------------------------------------------------
    def switch_model(self, ref: str) -> None:
        from caretz.config_base import ConfigError
        from caretz.runtime.switches import switch_model

        try:
            model = switch_model(self.session, ref, self.env)
        except ConfigError as error:
            self.error(f"{error} (still on {self.session.agent.config.model_ref})")
            return
        self.meter.forget()
        self.info(f"model: {model}; the conversation carries on")

    def switch_profile(self, name: str) -> None:
        from caretz.config.settings import resolve_settings
        from caretz.config_base import ConfigError
        from caretz.runtime.switches import apply_settings

        path = self.session.settings.config_path
        base = self.overrides or {"config": path if path.is_file() else None}
        try:
            settings = resolve_settings({**base, "profile": name}, self.env)
            apply_settings(self.session, settings, self.env)
        except ConfigError as error:
            self.error(f"{error} (still on profile {self.session.settings.profile_name})")
            return
        self.view.detailed = settings.output == "detailed"
        self.meter.forget()
        mode = self.session.agent.parts.guard.mode
        self.info(f"profile: {name} · model {settings.model.ref} · loop guard {mode}")

    def set_guard_mode(self, mode: str) -> None:
        from caretz.config_base import ConfigError
        from caretz.runtime.switches import set_guard_mode

        try:
            set_guard_mode(self.session, mode)
        except ConfigError as error:
            self.error(f"{error} (the loop guard is unchanged)")
            return
        judge = self.session.judge
        by = f", judged by {judge.model_ref}" if judge is not None and mode != "off" else ""
        self.info(f"loop guard: {mode}{by}")

    def set_permission_mode(self, mode: str) -> None:
        from caretz.config_base import ConfigError
        from caretz.runtime.switches import set_permission_mode

        try:
            set_permission_mode(self.session, mode, self.env)
        except ConfigError as error:
            mode = self.session.settings.permission_mode
            self.error(f"{error} (permissions unchanged: {mode})")
            return
        self.info(f"permissions: {self.session.settings.permission_mode}")
        self.yolo_banner()

    def yolo_banner(self) -> None:
        from caretz.ui.permission_lines import YOLO_BANNER

        if self.session.settings.permission_mode == "yolo":
            self.console.print(f"[bold red]{escape(YOLO_BANNER)}[/]", highlight=False)

    def store(self) -> SessionStore:
        from caretz.session.store import SessionStore

        return SessionStore(self.session.settings.data_dir)

    def resume(self, session_id: str) -> None:
        from caretz.session.store import SessionNotFound

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
        from caretz.config_base import ConfigError
        from caretz.runtime.session import start_session
        from caretz.session.store import SessionNotFound

        old = self.session
        reason = "clear" if resume is None else "resume"
        try:
            session = start_session(
                old.settings,
                self.view,
                self.env,
                resume=resume,
                workspace=old.workspace,
                permissions=old.permissions,  # the project's rules as read at the start
                hook_files=old.hooks.files if old.hooks is not None else (),  # and its hooks
                mcp=old.mcp,  # the MCP servers keep running
                before_start=lambda: old.end_hooks(reason),
            )
        except (ConfigError, SessionNotFound) as error:
            self.error(str(error))
            return False
        old.mcp = None  # the new session has them now
        old.close(reason)
        self.info(f"left session {old.id} (reopen it with /resume {old.id})")
        self.session = session
        self.goal = session_goal(session)
        self.meter.forget()
        self.info(f"session {session.id}")
        return True

    # -- reports -------------------------------------------------------------------------
    def show_cost(self) -> None:
        from caretz.pricing import price_for

        agent = self.session.agent
        totals = agent.conversation.totals
        usage = totals.usage
        lines = [
            f"tokens: {usage.input_tokens:,} in · {usage.output_tokens:,} out · "
            f"{usage.cache_read_tokens:,} cache read · {usage.cache_write_tokens:,} cache write",
            f"requests: {totals.requests} · tool calls: {totals.tool_calls}",
        ]
        if totals.cost_usd is not None:
            lines.append(f"cost: ${totals.cost_usd:.4f}")
        else:
            lines.append('cost: unknown (a model without a price; add one under "prices")')
        if price_for(agent.config.model_ref, self.session.settings.prices) is None:
            lines.append(f"no price known for {agent.config.model_ref}")
        window = self.policy().context_window
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
