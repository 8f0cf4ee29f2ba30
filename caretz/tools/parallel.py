"""Running a reply's read-only calls at the same time.

One daemon thread per call (a batch is at most MAX_PARALLEL_CALLS calls), so a call that
never returns cannot keep caretz from exiting. Only the tools' own runs happen here: the
checks before (which may ask the user) and the hooks after run in the turn's thread, in
order (agent/turn.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TypeVar

from caretz.tools.base import ToolResult

MAX_PARALLEL_CALLS = 8

_Item = TypeVar("_Item")


def run_together(
    items: Mapping[int, _Item],
    invoke: Callable[[_Item], ToolResult],
    outcomes: dict[int, ToolResult | BaseException],
) -> None:
    """`invoke` on every item at once; each result (or what it raised) into `outcomes`
    under the item's key. A KeyboardInterrupt while waiting leaves `outcomes` with the
    calls that had finished, and goes on up."""
    lock = threading.Lock()

    def work(key: int, item: _Item) -> None:
        try:
            outcome: ToolResult | BaseException = invoke(item)
        except BaseException as error:  # handed to the turn's thread, which raises it
            outcome = error
        with lock:
            outcomes[key] = outcome

    threads = [
        threading.Thread(target=work, args=(key, item), name=f"caretz-tool-{key}", daemon=True)
        for key, item in items.items()
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
