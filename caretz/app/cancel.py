"""Ending a session's running work from any thread, the way Ctrl-C does.

The work (a turn, a custom command, a goal's turns, a compaction) runs in the thread
that asked for it. `Canceller.cancel` makes a `KeyboardInterrupt` appear in that thread,
so the path Ctrl-C takes runs: the bash tool ends its command's process group, the turn
loop answers the open tool calls and writes `Turn.Ended`, the outcome is "interrupted".

- In the main thread it sends SIGINT to it (`signal.pthread_kill`): Ctrl-C itself, which
  also breaks any wait the thread is blocked in (a socket read, a lock, a sleep). With
  SIGINT inherited as ignored (a job started with `&` by a script) there is no handler
  to run, so the main thread is treated as any other.
- In another thread there is no signal to send, so the interrupt is raised there with
  `PyThreadState_SetAsyncExc`. That lands the next time the thread runs Python code,
  which a thread blocked inside a C call does not: the bash tool's wait wakes every 50 ms
  besides its command's exit, ripgrep every few milliseconds, MCP calls and parallel tools wait in slices,
  but a model stream blocked on a silent socket would wait for its idle timeout. So the
  provider is aborted too (`wake`): its sockets are shut down, the read returns, and the
  interrupt lands in the provider's Python code before anything is retried.

On Python 3.11 a thread being started carries the id of the thread starting it until it
runs, and the interrupt goes to the newest thread state with that id: raised then, it would
kill the new thread before it says it started, and the work would wait for it for ever.
So it is raised only while no thread is being started (`threading`'s own record of them).

The tool context's `cancel` event is left alone: a bash command seeing it returns a
"cancelled" result through a path where an interrupt landing a moment later could skip
the end of its process group, while the interrupt alone is always caught inside the
tool, where the group is ended.
"""

from __future__ import annotations

import ctypes
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext


class Canceller:
    """Which thread runs the session's work now, and how to interrupt it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._worker: int | None = None  # the thread's ident while work runs
        self._sent = False  # an interrupt was raised in the worker's thread

    @contextmanager
    def running(self) -> Iterator[None]:
        """Around one piece of work, in the thread that runs it."""
        with self._lock:
            if self._worker is not None:
                raise RuntimeError("the session is already running work")
            self._worker, self._sent = threading.get_ident(), False
        try:
            yield
        finally:
            with self._lock:
                worker, self._worker = self._worker, None
                if self._sent and worker != threading.main_thread().ident:
                    _clear_async_exception(worker)  # one not yet landed must not land later

    @property
    def busy(self) -> bool:
        return self._worker is not None

    def cancel(self, wake: Callable[[], None] = lambda: None) -> bool:
        """Interrupt the running work (False when none runs); `wake` unblocks what a
        thread's interrupt cannot reach (the provider's stream)."""
        with self._lock:
            worker = self._worker
            if worker is None:
                return False
            self._sent = True
            # SIGINT inherited as ignored stays so (agent/signals.py): no signal to send.
            if worker == threading.main_thread().ident and callable(
                signal.getsignal(signal.SIGINT)
            ):
                signal.pthread_kill(worker, signal.SIGINT)
                return True
            _raise_in(worker, KeyboardInterrupt)
        wake()
        return True


STARTING_POLL_S = 0.001


def _raise_in(thread_id: int, exception: type[BaseException]) -> None:
    """Raise `exception` in the thread `thread_id`, at a moment no thread is being started
    (`threading` holds its lock while it adds one to its starting threads)."""
    starting_lock = getattr(threading, "_active_limbo_lock", None) or nullcontext()
    starting: dict[object, object] = getattr(threading, "_limbo", {})
    while True:
        with starting_lock:
            if not starting:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(thread_id), ctypes.py_object(exception)
                )
                return
        time.sleep(STARTING_POLL_S)  # a thread's start takes a moment; then it has its own id


def _clear_async_exception(thread_id: int | None) -> None:
    if thread_id is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), None)
