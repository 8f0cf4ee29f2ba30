"""The outcomes the application layer makes itself, outside the turn loop: a problem
people can fix (a `/name` that is no custom command, a model a command file names that
cannot be switched to) and an interrupt outside the turn loop's own handling.

They are the turn loop's own `Outcome` (caretz/agent/outcomes.py), the type a turn and
a goal end with, so the REPL, `-p`, ACP and the Python API read one type.
"""

from __future__ import annotations

import dataclasses

from caretz.agent.outcomes import Outcome
from caretz.agent.signals import interrupted_by
from caretz.usage_error import USAGE_ERROR


def usage_outcome(message: str) -> Outcome:
    """A problem people can fix, found once the session was open; nothing was sent."""
    return Outcome(status="usage_error", exit_code=USAGE_ERROR, message=message, sent=False)


def interrupted_outcome(
    interrupt: KeyboardInterrupt, message: str = "", *, sent: bool = True
) -> Outcome:
    """Ctrl-C, SIGTERM / SIGHUP or `AppSession.cancel` outside the turn loop's own handling."""
    end = interrupted_by(interrupt).outcome
    return dataclasses.replace(end, message=message or end.message, sent=sent)
