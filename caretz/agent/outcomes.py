"""How a turn ends: one small family of outcomes, each with its exit code.

The turn loop raises these where the end happens; `Turn.run` catches the base
class and turns it into a TurnResult. The CLI maps the exit code to the process.
"""

from __future__ import annotations

import traceback
from pathlib import Path

from caretz.guard.seam import AutoResume
from caretz.lazy_dataclass import lazy_dataclass
from caretz.private_data import DataWriteFailed
from caretz.text import one_line

SKIPPED_AFTER_STOP = "Not run: the loop guard ended this turn."
SKIPPED_AFTER_INTERRUPT = "Not run: the user interrupted the turn."
INTERRUPTED_UNKNOWN = (
    "Interrupted by the user after {seconds:.1f} s: this call had started, and whether it "
    "finished its work is unknown. Check before running it again."
)


class TurnEnd(Exception):
    status: str = "done"
    exit_code: int = 0

    def __init__(self, message: str = ""):
        super().__init__(message)
        self.message = message


class Done(TurnEnd):
    status = "done"
    exit_code = 0


class RuntimeFailure(TurnEnd):
    """The provider gave up, or a tool crashed."""

    status = "error"
    exit_code = 1


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

    exit_code = 2


REFUSING_STATUSES = (401, 403, 404)


class StoppedByGuard(TurnEnd):
    status = "loop_guard"
    exit_code = 3


class LimitReached(TurnEnd):
    """--max-tool-calls or --max-budget-usd was hit, or the reply stayed cut off at
    the output limit (maxTokens) after its continuations."""

    status = "limit"
    exit_code = 4


class Interrupted(TurnEnd):
    """Ctrl-C (130), or SIGTERM / SIGHUP taking the same path (128 + the signal)."""

    status = "interrupted"
    exit_code = 130

    def __init__(self, message: str = "", exit_code: int = 130):
        super().__init__(message)
        self.exit_code = exit_code


class StoppedByHook(TurnEnd):
    """A hook blocked the user's prompt (UserPromptSubmit) or ended the turn
    (`continue: false`); the message says which hook and why."""

    status = "hook"
    exit_code = 6


class PromptTooLarge(TurnEnd):
    """The prompt alone is over the model's window (agent/prompt_room.py): nothing was
    sent, and the conversation does not keep it; fixed by the user, as a usage error."""

    status = "usage_error"
    exit_code = 2


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


@lazy_dataclass(kw_only=True)
class TurnResult:
    status: str
    exit_code: int
    message: str  # why the turn ended, for people ("" when done)
    text: str  # the agent's last answer (or its report after a loop-guard stop)
    tool_calls: int
    resume: AutoResume | None = None  # after a loop stop: the turn autoResume sends next
