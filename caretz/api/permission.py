"""`on_permission`: a program answers what a person would be asked.

The callback gets the same `Question` the interactive session shows (the tool, its
arguments, a one-line summary, why it asks, the rules "always" would save) and answers
True (allow once), False (refuse), or a richer answer: `Answer("always")` saves the rule
the question offers, `Answer("no", "use the staging database")` refuses with a note the
model reads; the strings "yes", "always" and "no" work too.

Whatever else happens fails closed: a callback that raises or returns something else
refuses the call and ends the turn there, and `Session.run` raises that error once the
session has settled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from caretz.tools.asking import Answer, Choice, Question
from caretz.tools.policy import EndTurn

PermissionCallback = Callable[[Question], Any]
_CHOICES: tuple[Choice, ...] = ("yes", "always", "no")


class CallbackAsker:
    """The `Asker` that puts each question to `callback`. The first error it meets is kept
    in `error`, and the turn ends at once (as a hook's `continue: false` ends it): no call
    is refused silently while the run goes on."""

    interactive = True

    def __init__(self, callback: PermissionCallback):
        self.callback = callback
        self.error: Exception | None = None

    def __call__(self, question: Question) -> Answer:
        try:
            return as_answer(self.callback(question))
        except Exception as error:  # the program's bug: refuse, end the turn, raise it later
            self.error = error
            raise EndTurn(f"the on_permission callback failed: {error!r}") from error


def as_answer(reply: Any) -> Answer:
    """The callback's reply as an `Answer`; anything that is not one is a TypeError."""
    if isinstance(reply, Answer):
        return reply
    if isinstance(reply, bool):
        return Answer("yes" if reply else "no")
    choice = next((each for each in _CHOICES if each == reply), None)
    if isinstance(reply, str) and choice is not None:
        return Answer(choice)
    raise TypeError(
        f"on_permission returned {reply!r}: return True (allow once), False (refuse), "
        'or an Answer("yes" | "always" | "no", note)'
    )
