"""How a piece of a session's work ended, for every front end: one `Outcome`, with the
README's exit code.

A turn's `TurnResult`, a goal's `GoalRun`, a problem people can fix (a `/name` that is
no custom command, a model a command file names that cannot be switched to) and an
interrupt outside the turn loop all become one of these, so the REPL, `-p`, ACP and the
Python API read the same four fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from caretz.agent.outcomes import PromptTooLarge
from caretz.agent.signals import interrupted_by
from caretz.lazy_dataclass import lazy_dataclass
from caretz.usage_error import USAGE_ERROR

if TYPE_CHECKING:
    from caretz.agent.goal_driver import GoalRun
    from caretz.agent.outcomes import TurnResult


@lazy_dataclass(frozen=True, kw_only=True)
class Outcome:
    """`status`: done, interrupted, loop_guard, limit, error, hook, usage_error, and a
    goal's own (met, impossible, max_turns, paused…); `exit_code`: 0, 1, 2, 3, 4, 5, 6,
    130, 129 or 143; `message`: one line for people ("" when done); `text`: the agent's
    final answer (or the guard's report); `goal`: the goal as its events hold it;
    `sent`: False when the work ended before anything was sent to the model (a usage
    error, an interrupt while a custom command's `!` commands ran); `last_turn`: for a
    goal, how its last turn ended (None: no turn ran)."""

    status: str
    exit_code: int
    message: str = ""
    text: str = ""
    goal: dict[str, Any] | None = None
    sent: bool = True
    last_turn: Outcome | None = None

    @property
    def interrupted(self) -> bool:
        return self.status == "interrupted"


def turn_outcome(result: TurnResult) -> Outcome:
    """A turn's outcome; a turn refused before its request (a prompt over the window) sent
    nothing."""
    sent = result.status != PromptTooLarge.status
    return Outcome(
        status=result.status,
        exit_code=result.exit_code,
        message=result.message,
        text=result.text,
        sent=sent,
    )


def goal_outcome(run: GoalRun) -> Outcome:
    """A goal's run: its status and exit code are the goal's (met 0, paused with the
    turn's code, impossible 5…), the text the last turn's answer."""
    last = turn_outcome(run.result) if run.result is not None else None
    text = last.text if last is not None else ""
    goal = run.goal.to_dict()
    return Outcome(
        status=run.goal.status,
        exit_code=run.exit_code,
        message=run.message,
        text=text,
        goal=goal,
        last_turn=last,
    )


def usage_outcome(message: str) -> Outcome:
    """A problem people can fix, found once the session was open; nothing was sent."""
    return Outcome(status="usage_error", exit_code=USAGE_ERROR, message=message, sent=False)


def interrupted_outcome(
    interrupt: KeyboardInterrupt, message: str = "", *, sent: bool = True
) -> Outcome:
    """Ctrl-C, SIGTERM / SIGHUP or `AppSession.cancel` outside the turn loop's own handling."""
    end = interrupted_by(interrupt)
    return Outcome(
        status=end.status, exit_code=end.exit_code, message=message or end.message, sent=sent
    )
