"""Asking the user about one tool call: the question, the answer, and who asks.

An `Asker` is whatever can put a question to the user: the interactive session's
prompt (caretz.ui.asking), a scripted one in tests. `NobodyAsks` is the headless
run's: nobody is there, so the answer is "no" without a question, and the model is
told what was denied and how the user can allow it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol

from caretz.lazy_dataclass import lazy_dataclass
from caretz.text import one_line

Choice = Literal["yes", "always", "no"]
SUMMARY_CHARS = 200


@lazy_dataclass(frozen=True, kw_only=True)
class Question:
    tool: str
    arguments: Mapping[str, Any]
    summary: str  # the command, the path: what the call is about, on one line
    reason: str  # why it asks: the rule, the escalation reason, the mode
    rule: str | None = None  # "Bash(git push:*) (.caretz/settings.json)" when a rule asks
    escalate: str | None = None  # the model's reason for leaving the sandbox
    saves: tuple[str, ...] = ()  # the rules "yes, always" would save; () when not offered
    settings_file: str = ".caretz/settings.json"  # where they would be saved
    heading: str | None = None  # None: "caretz asks before it runs <tool>"
    yes_means: str = "yes, once"  # what `y` does, as the question shows it
    always_means: str | None = None  # what `a` does where it saves no rule (None: not offered)
    no_means: str = "no"  # what `n` does


@lazy_dataclass(frozen=True)
class Answer:
    choice: Choice
    note: str = ""  # the user's words for the model


class Asker(Protocol):
    interactive: bool  # False: nobody can answer; the call is denied without a question

    def __call__(self, question: Question) -> Answer: ...


class NobodyAsks:
    """A headless run's asker: nobody can answer, so nothing that would ask runs."""

    interactive = False

    def __call__(self, question: Question) -> Answer:
        return Answer("no")


def input_summary(tool: str, arguments: Mapping[str, Any]) -> str:
    """The one argument that says what a call is about, on one line."""
    for key in ("command", "path", "pattern", "url", "query", "agent", "prompt"):
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return one_line(value, SUMMARY_CHARS)
    shown = ", ".join(f"{key}={value!r}" for key, value in sorted(arguments.items()))
    return one_line(shown, SUMMARY_CHARS) or tool


def declined_by_user(question: Question, note: str) -> str:
    """What the model reads when the user said no."""
    text = (
        f"The user declined this {question.tool} call ({question.summary}); it did not run. "
        "Do not retry it as it is."
    )
    if note.strip():
        text += f" The user's note: {note.strip()}"
    return text


def denied_headless(question: Question, mode_hint: str | None) -> str:
    """What the model reads in a run nobody can answer: what was denied, and how to allow it."""
    ways = []
    if question.saves:
        rules = ", ".join(question.saves)
        ways.append(f'add {rules} to "permissions.allow" in {question.settings_file}')
    if mode_hint:
        ways.append(mode_hint)
    if question.rule is not None and not question.saves:
        ways.append(f"approve it in an interactive session (the rule {question.rule} asks)")
    how = " or ".join(ways) or "approve it in an interactive caretz session"
    return (
        f"caretz did not run this {question.tool} call ({question.summary}): it needs the "
        f"user's approval ({question.reason}), and nobody can approve in a headless run. "
        f"To allow it, the user can {how}. Do the task another way, or say what you need."
    )
