"""MCP servers started behind an interactive session's prompt.

`BackgroundStart` is a thread that makes the manager, starts every server's process at
once, imports the SDK there (not in the session's thread) and settles each server as it
becomes ready or fails or runs out of its `startupTimeout`, in whatever order that
happens. The import waits for `go`: the session's first look at its servers (the prompt
drawn and watching for them, or the first request's tools), so the import does not take
the interpreter from the session's own start; the servers' processes boot meanwhile. A settled
server waits in `settled` until the session takes it (`McpServers.collect`, in the
session's own thread: its tools join the registry and its event is written there), and
its `done` event wakes a call that waits for it.
"""

from __future__ import annotations

import concurrent.futures
import queue
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from caretz.mcp_client.manager import Attempt

if TYPE_CHECKING:
    from caretz.mcp_client.manager import McpManager
    from caretz.mcp_client.model import ServerSpec


class BackgroundStart(threading.Thread):
    def __init__(
        self,
        specs: list[ServerSpec],
        timeout_s: float,
        manager: Callable[[], McpManager | None],
    ):
        """`manager` makes (or gives) the servers' manager; None: they are closing."""
        super().__init__(name="caretz-mcp-start", daemon=True)
        self.specs = specs
        self.timeout_s = timeout_s
        self.manager = manager
        self.settled: queue.SimpleQueue[Attempt] = queue.SimpleQueue()
        self.done = {spec.name: threading.Event() for spec in specs}
        self.allowed_s = {spec.name: spec.startup_timeout_s or timeout_s for spec in specs}
        self.wake: Callable[[], None] = lambda: None  # told when a server has settled
        self.go = threading.Event()  # the session is up: the SDK may load

    def run(self) -> None:
        try:
            manager = self.manager()
            if manager is None:
                return
            pending = manager.begin(self.specs, self.timeout_s, before_sdk=self.go.wait)
            while pending:
                nearest = min(starting.deadline for starting in pending)
                concurrent.futures.wait(
                    [starting.ready for starting in pending],
                    timeout=max(0.0, nearest - time.monotonic()),
                    return_when=concurrent.futures.FIRST_COMPLETED,
                )
                now = time.monotonic()
                for starting in [s for s in pending if s.ready.done() or s.deadline <= now]:
                    pending.remove(starting)
                    self._publish(manager.settle(starting))
        except Exception as error:  # the SDK failed to load, the manager closed under it
            for spec in self.specs:  # those already settled are left as they are
                self._publish(Attempt(spec=spec, error=f"it could not be started: {error}"))
        finally:
            for spec in self.specs:  # nothing left waiting, whatever happened
                self.done[spec.name].set()

    def _publish(self, attempt: Attempt) -> None:
        if self.done[attempt.spec.name].is_set():
            return
        self.settled.put(attempt)
        self.done[attempt.spec.name].set()
        self.wake()

    def waiting(self, name: str) -> bool:
        """Whether server `name` is still starting."""
        event = self.done.get(name)
        return event is not None and not event.is_set()

    def wait(self, name: str, cancel: threading.Event, poll_s: float = 0.05) -> None:
        """Until server `name` has settled, or `cancel`; Ctrl-C goes through. No clock of
        its own: `run` settles every server, each by its startupTimeout, counted from
        when the start began, whatever the SDK's load took on a busy machine."""
        event = self.done[name]
        while not event.wait(poll_s):
            if cancel.is_set():
                return
