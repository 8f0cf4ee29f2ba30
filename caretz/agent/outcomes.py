"""How a piece of work ends: one `Outcome`, with the README's exit code, from the turn
loop that decides the end up to the exit code of the process.

The turn loop raises a `TurnEnd` where the end happens; each kind carries the outcome it
stands for (`TurnEnd.ending`), and `Turn.run` catches the base class and returns its
`outcome` with the turn's answer filled in. The app layer passes that same object up
(a goal wraps its last turn's as `last_turn`), the Python API's `RunResult` carries it,
and the CLI reads its exit code. No other type repeats `status` and `exit_code`
(tests/test_architecture_outcome.py).
"""

from __future__ import annotations

import dataclasses
import traceback
from pathlib import Path
from typing import Any, ClassVar

from caretz.guard.seam import AutoResume
from caretz.lazy_dataclass import lazy_dataclass
from caretz.private_data import DataWriteFailed
from caretz.text import one_line

SKIPPED_AFTER_STOP = "Not run: the loop guard ended this turn."
SKIPPED_AFTER_INTERRUPT = "Not run: the user interrupted the turn."
INTERRUPTED_UNKNOWN = (
    "this call had started, and whether it finished its work is unknown: check before "
    "running it again"
)


@lazy_dataclass(frozen=True, kw_only=True)
class Outcome:
    """How a piece of a session's work ended, for every front end.

    `status`: done, interrupted, loop_guard, limit, error, hook, usage_error, and a
    goal's own (met, impossible, max_turns, paused…); `exit_code`: 0, 1, 2, 3, 4, 5, 6,
    130, 129 or 143; `message`: one line for people ("" when done); `text`: the agent's
    final answer (or the guard's report); `tool_calls`: the turn's; `resume`: after a
    loop stop, the turn autoResume sends next; `goal`: the goal as its events hold it;
    `sent`: False when the work ended before anything was sent to the model (a prompt
    over the window, a usage error, an interrupt while a custom command's `!` commands
    ran); `last_turn`: for a goal, how its last turn ended (None: no turn ran)."""

    status: str
    exit_code: int
    message: str = ""
    text: str = ""
    tool_calls: int = 0
    resume: AutoResume | None = None
    goal: dict[str, Any] | None = None
    sent: bool = True
    last_turn: Outcome | None = None

    @property
    def interrupted(self) -> bool:
        return self.status == "interrupted"


class TurnEnd(Exception):
    """A turn's end, raised where it happens; `outcome` is how the turn ended."""

    ending: ClassVar[Outcome] = Outcome(status="done", exit_code=0)

    def __init__(self, message: str = ""):
        super().__init__(message)
        self.outcome = dataclasses.replace(self.ending, message=message)


class Done(TurnEnd):
    """The model answered without tool calls."""


class RuntimeFailure(TurnEnd):
    """The provider gave up, or a tool crashed."""

    ending = Outcome(status="error", exit_code=1)


def internal_failure(error: Exception) -> RuntimeFailure:
    """One line for a fault inside caretz, with where it happened (for a bug report); a
    data folder caretz cannot write says so, and what to do, in its own line."""
    if isinstance(error, DataWriteFailed):
        return RuntimeFailure(str(error))
    frames = traceback.extract_tb(error.__traceback__)
    where = f", at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    return RuntimeFailure(
        f"caretz failed: {type(error).__name__}: {one_line(str(error), 300)}{where}"
    )


class ProviderRefused(RuntimeFailure):
    """The provider rejected the key (401/403), does not know the model (404) or said the
    model takes no images: fixed in the config, like a missing key, so the usage error's
    exit code."""

    ending = Outcome(status="error", exit_code=2)


REFUSING_STATUSES = (401, 403, 404)


class StoppedByGuard(TurnEnd):
    ending = Outcome(status="loop_guard", exit_code=3)


class LimitReached(TurnEnd):
    """--max-tool-calls or --max-budget-usd was hit, or the reply stayed cut off at
    the output limit (maxTokens) after its continuations."""

    ending = Outcome(status="limit", exit_code=4)


class Interrupted(TurnEnd):
    """Ctrl-C (130), or SIGTERM / SIGHUP taking the same path (128 + the signal)."""

    ending = Outcome(status="interrupted", exit_code=130)

    def __init__(self, message: str = "", exit_code: int = 130):
        super().__init__(message)
        self.outcome = dataclasses.replace(self.outcome, exit_code=exit_code)


class StoppedByHook(TurnEnd):
    """A hook blocked the user's prompt (UserPromptSubmit) or ended the turn
    (`continue: false`); the message says which hook and why."""

    ending = Outcome(status="hook", exit_code=6)


class PromptTooLarge(TurnEnd):
    """The prompt alone is over the model's window (agent/prompt_room.py): nothing was
    sent, and the conversation does not keep it; fixed by the user, as a usage error."""

    ending = Outcome(status="usage_error", exit_code=2, sent=False)


# Not a turn's end: a goal's evaluator found the goal cannot be met (agent/goal_driver.py).
GOAL_IMPOSSIBLE = 5


EXIT_CODES: dict[int, str] = {
    0: "done: the agent answered",
    1: "runtime failure: the provider gave up or a tool crashed",
    2: "usage or configuration error",
    3: "the loop guard ended the turn, or cut a reply that kept repeating itself",
    4: "a limit (--max-tool-calls, --max-budget-usd, maxTokens, goal.maxTurns) ended the turn "
    "or the goal",
    5: "the goal was judged impossible",
    6: "a hook blocked the prompt or ended the turn",
    129: "ended by SIGHUP (a closed terminal), like Ctrl-C",
    130: "interrupted (Ctrl-C)",
    143: "ended by SIGTERM, like Ctrl-C",
}
