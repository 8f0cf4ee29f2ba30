"""One editor session: a caretz `AppSession` on a worker thread of its own.

Everything that blocks (opening, a prompt's work, a switch, closing) runs on the
session's one worker thread, in the order asked, so the session is never used from two
threads at once; only `cancel` reaches it from the event loop, as the contract allows.
The view posts the turn's updates through the outbox; permission questions go through
`Questions` and block the worker until the editor answers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from acp import RequestError
from acp.schema import (
    PermissionOption,
    RequestPermissionResponse,
    StopReason,
    ToolCallUpdate,
    Usage,
)

from caretz.acp.bridge import Outbox, Questions
from caretz.acp.commands import available_commands
from caretz.acp.notices import from_caretz
from caretz.acp.permissions import EditorAsker
from caretz.acp.replay import replay
from caretz.acp.translate import Update, agent_text
from caretz.acp.usage import prompt_usage, session_usage
from caretz.acp.view import AcpView, TurnSigns
from caretz.agent.limits import usage_report
from caretz.lazy import lazy_module

if TYPE_CHECKING:
    from caretz.app import session as app_session
else:
    # The application layer, loaded when the editor opens its first session (after the handshake).
    app_session = lazy_module("caretz.app.session")

if TYPE_CHECKING:
    from acp.interfaces import Client

    from caretz.agent.outcomes import Outcome
    from caretz.app.session import AppSession
    from caretz.config.settings import Settings

T = TypeVar("T")
# Outcomes whose one line the editor is shown as caretz's (a loop-guard stop has shown its
# notice and ends on the report; "done" and "interrupted" need no line). A usage error is a
# prompt refused before anything was sent (an unknown /command): its line is the answer.
_SAID = ("limit", "hook", "usage_error")


class AcpSession:
    def __init__(self, loop: asyncio.AbstractEventLoop, client: Client, workspace: Path):
        self.loop = loop
        self.client = client
        self.workspace = workspace
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="caretz-acp")
        self.id = ""
        self.outbox = Outbox(loop, self._send)
        self.questions = Questions(self.outbox)
        self.view = AcpView(self.outbox.post, workspace)
        self.session: AppSession | None = None
        self.running = False
        self.cancelled = False

    # -- on the event loop ---------------------------------------------------------------
    async def open(
        self,
        settings: Settings,
        env: Mapping[str, str],
        *,
        resume: str | None = None,
        mcp_servers: Sequence[Any] = (),
    ) -> None:
        """Open (or resume) the session; raises ConfigError / SessionNotFound as
        `AppSession.open` does, with nothing started."""
        asker = EditorAsker(self.view, self._ask)
        self.session = await self.call(
            app_session.AppSession.open,
            settings,
            self.view,
            env=env,
            workspace=self.workspace,
            resume=resume,
            asker=asker,
            mcp_servers=mcp_servers,
        )
        self.id = self.session.id
        self.outbox.start()
        # Posted, so it goes out after the answer that tells the editor the session's ID.
        self.outbox.post(await self.call(available_commands, settings, self.workspace))

    async def replay(self) -> None:
        """Send the session's history as updates (session/load), before the answer."""
        session = self.live
        for update in await self.call(replay, session.events_path, self.view.translator):
            self.outbox.post(update)
        await self.outbox.flush()

    async def prompt(self, text: str) -> tuple[StopReason, Usage]:
        """How the prompt's work ended, and what it used (the judge's share in); the
        session's context and cost go out as a `usage_update` before the answer."""
        session = self.live
        if self.running:
            raise RequestError(-32600, "a prompt is already running in this session")
        self.running, self.cancelled = True, False
        self.view.begin_prompt()
        before = dataclasses.replace(session.totals)
        try:
            outcome = await self.call(self._submit, session, text)
        except asyncio.CancelledError:  # the request was dropped (the editor went away)
            self.cancel()
            raise
        finally:
            self.running = False
        said_already = self.view.signs.prompt_blocked  # its notice came with its event
        if outcome.status in _SAID and outcome.message and not said_already:
            self.outbox.post(agent_text(from_caretz([outcome.message])))
        self.outbox.post(await self.call(session_usage, session))
        await self.outbox.flush()
        used = prompt_usage(usage_report(session.totals, before))
        return stop_reason(outcome, self.view.signs, self.cancelled), used

    def cancel(self) -> None:
        """End the running prompt's work (no-op when idle), an open question with it."""
        if not self.running or self.session is None:
            return
        self.cancelled = self.view.cancelling = True
        self.session.cancel()
        self.questions.withdraw()

    async def switch(self, **change: str) -> str:
        return await self.call(self.live.switch, **change)

    async def close(self) -> None:
        self.cancel()
        if self.session is not None:
            await self.call(self.session.close)
        await self.outbox.close()
        self.worker.shutdown(wait=False)

    async def call(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`function` on the session's worker thread."""
        bound = functools.partial(function, *args, **kwargs)
        return await self.loop.run_in_executor(self.worker, bound)

    @property
    def live(self) -> AppSession:
        assert self.session is not None, "the session is not open"
        return self.session

    async def _send(self, update: Update) -> None:
        await self.client.session_update(session_id=self.id, update=update)

    # -- on the worker thread ------------------------------------------------------------
    def _submit(self, session: AppSession, text: str) -> Outcome:
        if self.cancelled:  # cancelled before the work started: the session was idle
            return app_session.Outcome(
                status="interrupted",
                exit_code=130,
                message="cancelled before it started",
                sent=False,
            )
        return session.submit(text)

    def _ask(
        self, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse | None:
        def send() -> Any:
            return self.client.request_permission(
                session_id=self.id, tool_call=tool_call, options=options
            )

        return self.questions.ask(send)


def stop_reason(outcome: Outcome, signs: TurnSigns, cancelled: bool) -> StopReason:
    """ACP's stop reason for how the work ended; an error is the request's error."""
    status = outcome.status
    if status == "interrupted" or (cancelled and status != "done"):
        return "cancelled"
    if status == "limit":
        return "max_tokens" if signs.output_limit else "max_turn_requests"
    if status == "hook" and signs.prompt_blocked:
        return "refusal"  # the prompt never reached the model
    if status == "done" and signs.refused:
        return "refusal"
    if status == "error":
        raise RequestError(-32603, f"caretz: {outcome.message}", {"message": outcome.message})
    # done, loop_guard (the last message is the report), a hook's end, a usage error (a
    # prompt refused before it was sent: its line said why)
    return "end_turn"
