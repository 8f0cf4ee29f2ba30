"""From the thread that runs a turn to the event loop that speaks ACP.

A turn runs synchronously on its session's worker thread; the protocol is asyncio.
`Outbox` carries the turn's updates to the loop, which sends them one at a time in the
order they were posted. `Questions` carries a permission question the same way, after
every update posted before it, and blocks the worker until the editor answers or the
prompt is cancelled.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")
Step = Callable[[], Awaitable[None]]


class Outbox:
    """Updates posted from any thread, sent on the loop in order."""

    def __init__(self, loop: asyncio.AbstractEventLoop, send: Callable[[Any], Awaitable[None]]):
        self.loop = loop
        self.send = send
        self.queue: asyncio.Queue[Step] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Send what is posted from now on (and what waits already); on the loop."""
        self.task = self.loop.create_task(self._pump())

    def post(self, update: Any) -> None:
        """From any thread: send `update` after everything posted before it."""
        self.then(lambda: self.send(update))

    def then(self, step: Step) -> None:
        self.loop.call_soon_threadsafe(self.queue.put_nowait, step)

    async def flush(self) -> None:
        """On the loop: return once everything posted before has been sent."""
        done = self.loop.create_future()

        async def mark() -> None:
            done.set_result(None)

        self.then(mark)  # the same way as the posts, so it queues behind every one of them
        await done

    async def close(self) -> None:
        if self.task is None:
            return
        await self.flush()
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task

    async def _pump(self) -> None:
        while True:
            step = await self.queue.get()
            try:
                await step()
            except Exception:  # a client that went away: the turn carries on regardless
                log.exception("sending a session update failed")


class Questions:
    """Permission questions from the worker thread to the editor, one at a time."""

    def __init__(self, outbox: Outbox):
        self.outbox = outbox
        self.pending: concurrent.futures.Future[Any] | None = None
        self.request: asyncio.Task[Any] | None = None

    def ask(self, send: Callable[[], Awaitable[T]]) -> T | None:
        """On the worker thread: `send()` on the loop, after the updates posted before;
        its result, or None when the question was withdrawn or the request failed."""
        answer: concurrent.futures.Future[T | None] = concurrent.futures.Future()
        self.pending = answer

        async def start() -> None:
            if answer.done():  # withdrawn before it was sent
                return
            self.request = asyncio.ensure_future(send())
            self.request.add_done_callback(lambda task: _settle(answer, task))

        self.outbox.then(start)
        try:
            return answer.result()
        finally:
            self.pending = None

    def withdraw(self) -> None:
        """On the loop: answer the open question with None and drop its request."""
        if self.pending is not None:
            _resolve(self.pending, None)
        if self.request is not None and not self.request.done():
            self.request.cancel()


def _settle(answer: concurrent.futures.Future[Any], task: asyncio.Task[Any]) -> None:
    if task.cancelled():
        _resolve(answer, None)
    elif task.exception() is not None:
        log.error("a permission request failed: %s", task.exception())
        _resolve(answer, None)
    else:
        _resolve(answer, task.result())


def _resolve(future: concurrent.futures.Future[Any], value: Any) -> None:
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        future.set_result(value)
