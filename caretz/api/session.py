"""`caretz.Session`: caretz for programs, over the application session the CLI drives too.

    with caretz.Session(cwd="repo", loop_guard="active") as session:
        result = session.run("make the tests pass")
        for event in session.stream("now add a changelog entry"):
            ...

Settings resolve as the CLI's do (keywords as flags, then CARETZ_*, then the profile);
a bad one is one `ConfigError` line and nothing has started. docs/python-api.md.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.agent.limits import RunTotals, usage_report
from caretz.api.relay import Relay
from caretz.api.result import PermissionDenial, RunResult
from caretz.config_base import ConfigError
from caretz.lazy import lazy_module

if TYPE_CHECKING:
    from caretz.api import options as api_options
    from caretz.api import permission as api_permission
    from caretz.api import streaming
    from caretz.app import session as app_session
    from caretz.session import store as session_store
    from caretz.tools import permission as tools_permission
else:
    # `from caretz import Session` loads none of these: the app when a session opens, the
    # settings from keywords when one is made (-p brings its own), streaming with stream().
    app_session = lazy_module("caretz.app.session")
    session_store = lazy_module("caretz.session.store")
    tools_permission = lazy_module("caretz.tools.permission")
    api_options = lazy_module("caretz.api.options")
    streaming = lazy_module("caretz.api.streaming")
    api_permission = lazy_module("caretz.api.permission")

if TYPE_CHECKING:
    from caretz.agent.outcomes import Outcome
    from caretz.api.events import Event
    from caretz.api.permission import PermissionCallback
    from caretz.app.session import AppSession, View
    from caretz.config.settings import Settings
    from caretz.runtime.custom_commands import PreparedCommand
    from caretz.tools.asking import Asker


@dataclass(frozen=True, kw_only=True)
class Work:
    """What a run does, as data: a prompt; a new goal's `condition` (`prompt` starts its
    work); or the paused goal carried on (`resume_goal`). `looked_up`: the custom command
    `prompt` names was found already (`command`, None for none), so it is not looked up
    again (`caretz -p` finds it before the session opens)."""

    prompt: str | None = None
    condition: str | None = None
    resume_goal: bool = False
    looked_up: bool = False
    command: PreparedCommand | None = None


@dataclass(frozen=True)
class _Reading:
    """The session's running totals as a run starts: its result is what came after."""

    totals: RunTotals  # a copy
    denials: int
    verdicts: int
    started: float


class Session:
    """A caretz session in `cwd` (default: the current folder): one conversation, one log
    (events.jsonl, which `caretz --resume ID` and `caretz -c` carry on), one run at a time.

    `on_permission(question)` answers what a person would be asked (True allows once, False
    refuses, see caretz.api.permission); without it nothing that would ask runs, as in
    `caretz -p`. `resume`: "latest" (this folder's latest session) or a session ID. `env`:
    the environment settings and API keys are read from (default: os.environ).
    `trust_project`: use the project's configuration (its allow rules, hooks, MCP servers,
    command files with shell lines) as it is now, for this session, approved or not; by
    default only as the user approved it (`caretz trust`), as in `caretz -p`.
    """

    def __init__(
        self,
        cwd: str | os.PathLike[str] | None = None,
        *,
        model: str | None = None,
        profile: str | None = None,
        loop_guard: str | None = None,
        permission_mode: str | None = None,
        on_permission: PermissionCallback | None = None,
        resume: str | None = None,
        env: Mapping[str, str] | None = None,
        config: str | os.PathLike[str] | None = None,
        base_url: str | None = None,
        reasoning: str | None = None,
        max_tool_calls: int | None = None,
        max_budget_usd: float | None = None,
        sandbox: str | None = None,
        allowed_tools: Sequence[str] | str | None = None,
        disallowed_tools: Sequence[str] | str | None = None,
        trust_project: bool = False,
    ):
        chosen = api_options.Options(
            model=model,
            profile=profile,
            loop_guard=loop_guard,
            permission_mode=permission_mode,
            config=config,
            base_url=base_url,
            reasoning=reasoning,
            max_tool_calls=max_tool_calls,
            max_budget_usd=max_budget_usd,
            sandbox=sandbox,
            allowed_tools=allowed_tools,
            disallowed_tools=disallowed_tools,
        )
        settings = api_options.resolve(chosen, env)
        asker = api_permission.CallbackAsker(on_permission) if on_permission is not None else None
        self._open(settings, None, env, cwd, resume, asker, trust_project)

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        view: View | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        resume: str | None = None,
        asker: Asker | None = None,
        mcp_background: bool = False,
    ) -> Session:
        """A session on settings already resolved, with a view of its own that sees every
        delta and event as well (caretz's CLI: `-p` and stream-json). `mcp_background`:
        open without waiting for the MCP servers; each one's tools join at the first
        request after it is ready."""
        session = cls.__new__(cls)
        session._open(settings, view, env, cwd, resume, asker, mcp_background=mcp_background)
        return session

    def _open(
        self,
        settings: Settings,
        view: View | None,
        env: Mapping[str, str] | None,
        cwd: str | os.PathLike[str] | None,
        resume: str | None,
        asker: Asker | None,
        trust_project: bool = False,
        mcp_background: bool = False,
    ) -> None:
        self._relay = Relay(view)
        self._asker = asker
        self._busy = threading.Lock()
        self._closed = False
        self.worker: threading.Thread | None = None  # a stream()'s, while it runs
        workspace = Path(cwd).absolute() if cwd is not None else None
        try:
            self.app: AppSession = app_session.AppSession.open(
                settings,
                self._relay,
                env=env,
                workspace=workspace,
                resume=resume,
                asker=asker,
                trust_project=trust_project,
                mcp_background=mcp_background,
            )
        except (
            session_store.SessionNotFound
        ) as error:  # bad input like any other: one ConfigError line
            raise ConfigError(str(error)) from None

    # -- what the session is ----------------------------------------------------------
    @property
    def id(self) -> str:
        return self.app.id

    @property
    def events_path(self) -> Path:
        """The session's log, one JSON event a line."""
        return self.app.events_path

    @property
    def workspace(self) -> Path:
        return self.app.workspace

    # -- runs -----------------------------------------------------------------------------
    def run(self, prompt: str) -> RunResult:
        """Send `prompt` and wait for the work to end (the turn and the loop guard's
        automatic resumes; a "/name" custom command runs as that command). Ctrl-C ends it as
        in the CLI: the result's status is "interrupted" (exit code 130)."""
        return self.run_work(Work(prompt=prompt))

    def stream(self, prompt: str) -> Iterator[Event]:
        """Send `prompt` and yield what happens as it happens (caretz.api.events), ending
        with `Finished(result)`. The work runs in a background thread: leaving the loop
        early, closing the iterator or Ctrl-C while waiting cancels it and waits for it."""
        return streaming.stream_work(self, Work(prompt=prompt))

    def run_work(self, work: Work) -> RunResult:
        """Do `work` in the application session (one run at a time) and read its result;
        an error of the `on_permission` callback is raised once the work has ended."""
        with self.claimed():
            return self.measured(work)

    def measured(self, work: Work) -> RunResult:
        """`work`'s result, what it used read from the session's totals (the caller holds
        the claim)."""
        before = self._reading()
        app = self.app
        if work.condition is not None:
            outcome = app.start_goal(work.condition, work.prompt)
        elif work.resume_goal:
            outcome = app.resume_goal(work.prompt)
        elif work.command is not None:
            outcome = app.run_command(work.command)
        else:
            assert work.prompt is not None
            outcome = app.submit(work.prompt, commands_looked_up=work.looked_up)
        result = self._result(outcome, before)
        self._raise_callback_error()
        return result

    def cancel(self) -> None:
        """End the running work the way Ctrl-C does (from any thread); nothing when idle."""
        self.app.cancel()

    def close(self) -> None:
        """End the session: its hooks, jobs, MCP servers, sandbox and log (once)."""
        if self._closed:
            return
        self._closed = True
        worker = self.worker
        if worker is not None and worker.is_alive():  # a stream() its consumer left open
            self.cancel()
            worker.join()
        self.app.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- inside ------------------------------------------------------------------------
    @contextmanager
    def claimed(self) -> Iterator[None]:
        """The session for one run; a second one at the same time is a RuntimeError."""
        if self._closed:
            raise RuntimeError("this caretz session is closed")
        if not self._busy.acquire(blocking=False):
            raise RuntimeError("this caretz session is already running: one run at a time")
        try:
            yield
        finally:
            self._busy.release()

    def _reading(self) -> _Reading:
        return _Reading(
            dataclasses.replace(self.app.totals),
            len(self.app.permission_denials),
            len(self._relay.verdicts),
            time.monotonic(),
        )

    def _result(self, outcome: Outcome, before: _Reading) -> RunResult:
        totals = self.app.totals
        used = usage_report(totals, before.totals)
        denials = list(self.app.permission_denials[before.denials :])
        return RunResult(
            session_id=self.app.id,
            outcome=outcome,
            usage=used.usage,
            cost_usd=used.cost_usd,
            tool_calls=totals.tool_calls - before.totals.tool_calls,
            duration_s=time.monotonic() - before.started,
            permission_denials=tuple(PermissionDenial.from_dict(d) for d in denials),
            permission_hint=tools_permission.allow_hint(denials),
            guard_verdicts=tuple(self._relay.verdicts[before.verdicts :]),
            judge_usage=used.judge_usage,
            judge_cost_usd=used.judge_cost_usd,
            agents={name: share.to_dict() for name, share in used.agents.items()},
        )

    def _raise_callback_error(self) -> None:
        error = getattr(self._asker, "error", None)  # an on_permission callback's
        if error is not None:
            self._asker.error = None  # type: ignore[union-attr]  # a CallbackAsker's
            raise error

    @property
    def relay(self) -> Relay:
        return self._relay
