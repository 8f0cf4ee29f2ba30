"""`Session.stream()`: the work in a background thread, its events through a queue.

Whatever ends the consumer's loop early (a `break`, `close()`, an exception or Ctrl-C
while it waits) cancels the work the way Ctrl-C does and waits for the thread: none is
ever left running.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from caretz.api.events import Event, Finished

if TYPE_CHECKING:
    from caretz.api.result import RunResult
    from caretz.api.session import Session, Work

_DONE = object()  # the work ended; its result (or error) is in the box


class _Box:
    result: RunResult | None = None
    error: BaseException | None = None


def stream_work(session: Session, work: Work) -> Iterator[Event]:
    """The events of `work` on `session`, then `Finished(result)` (its error, raised)."""
    items: queue.Queue[object] = queue.Queue()
    box = _Box()

    def run() -> None:
        try:
            box.result = session.measured(work)
        except BaseException as error:  # handed to the consumer's thread, raised there
            box.error = error
        finally:
            items.put(_DONE)

    with session.claimed():
        session.relay.sink = items.put
        worker = session.worker = threading.Thread(target=run, name="caretz-stream", daemon=True)
        worker.start()
        try:
            while (item := items.get()) is not _DONE:
                yield item  # type: ignore[misc]  # every other item is an Event
        finally:
            if worker.is_alive():
                session.cancel()
            worker.join()
            session.relay.sink = None
    if box.error is not None:
        raise box.error
    assert box.result is not None
    yield Finished(box.result)
