"""The approval prompt of the interactive session.

When a tool call needs the user's approval, the live view pauses, the call is shown
(a bash command highlighted as bash), with why it asks and what "always" would
save, and one key answers: `y` yes once, `a` yes always for this project, `n` no.
Text typed after the key is a note for the model; Enter sends. Ctrl-D is no, and the
turn carries on with that answer; Ctrl-C stops the turn, as it does anywhere else.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from rich.console import Console, Group
from rich.markdown import Markdown
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from caretz.tools.asking import Answer, Choice, Question

if TYPE_CHECKING:
    from caretz.ui.live import LiveView

ReadLine = Callable[[str], str]
_ANSWER = re.compile(r"\s*(yes|always|no|y|a|n)\b[\s:,.;-]*(.*)", re.IGNORECASE | re.DOTALL)
_CHOICES: dict[str, Choice] = {
    "y": "yes",
    "yes": "yes",
    "a": "always",
    "always": "always",
    "n": "no",
    "no": "no",
}
PROMPT = "allow? "
BODY_LINES = 20  # of an edit's diff or a write's content


def parse_answer(text: str, always_offered: bool) -> Answer | None:
    """`n use rg instead` → no, with a note; None when the line is not an answer."""
    match = _ANSWER.fullmatch(text)
    if match is None:
        return None
    choice = _CHOICES[match.group(1).lower()]
    if choice == "always" and not always_offered:
        return None
    return Answer(choice, match.group(2).strip())


class TerminalAsker:
    """Asks at the terminal, with the live view paused."""

    interactive = True

    def __init__(self, console: Console, view: LiveView, read_line: ReadLine | None = None):
        self.console = console
        self.view = view
        self.read_line = read_line or _prompt_toolkit_line

    def __call__(self, question: Question) -> Answer:
        with self.view.paused():
            self.console.print(question_view(question))
            try:
                return self._read(question)
            except EOFError:  # Ctrl-D; Ctrl-C goes on up and ends the turn
                return Answer("no")

    def _read(self, question: Question) -> Answer:
        offered = bool(question.saves or question.always_means)
        while True:
            answer = parse_answer(self.read_line(PROMPT), offered)
            if answer is not None:
                return answer
            keys = "y, a or n" if offered else "y or n"
            self.console.print(f"[dim]answer {keys}; a note for the model may follow the key[/]")


def question_view(question: Question) -> Group:
    """The call, why it asks, and the keys."""
    heading = (
        Text(question.heading, "bold yellow")
        if question.heading
        else Text.assemble(("caretz asks before it runs ", "bold yellow"), (question.tool, "bold"))
    )
    parts: list[Any] = [heading]
    parts.append(Panel(_call_body(question), border_style="yellow", expand=False))
    parts.append(Text.assemble(("why: ", "bold"), question.reason))
    if question.escalate and question.escalate not in question.reason:
        parts.append(Text.assemble(("outside the sandbox: ", "bold"), question.escalate))
    parts.append(Text.from_markup(f"  [bold]y[/]  {escape(question.yes_means)}"))
    if question.saves:
        rules = escape(", ".join(question.saves))
        where = escape(question.settings_file)
        parts.append(Text.from_markup(f"  [bold]a[/]  yes, always: saves {rules} to {where}"))
    elif question.always_means:
        parts.append(Text.from_markup(f"  [bold]a[/]  {escape(question.always_means)}"))
    parts.append(Text.from_markup(f"  [bold]n[/]  {escape(question.no_means)}"))
    parts.append(
        Text(
            "  a note for the model may follow the key; Enter sends · Ctrl-D: no · Ctrl-C: stop",
            "dim",
        )
    )
    return Group(*parts)


def _call_body(question: Question) -> Any:
    args = question.arguments
    plan = args.get("plan")
    if isinstance(plan, str):  # a plan to approve: all of it, as Markdown
        return Markdown(plan)
    command = args.get("command")
    if question.tool == "bash" and isinstance(command, str):
        return _syntax(command, "bash")
    old, new = args.get("old_string"), args.get("new_string")
    if isinstance(old, str) and isinstance(new, str):  # an edit: what it replaces
        lines = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=1)
        diff = "\n".join(list(lines)[2:][:BODY_LINES])
        return Group(Text(question.summary, "bold"), _syntax(diff, "diff"))
    content = args.get("content")
    if isinstance(content, str):  # a write: its first lines
        shown = "\n".join(content.splitlines()[:BODY_LINES])
        return Group(Text(question.summary, "bold"), Text(shown, "dim"))
    return Text(question.summary)


def _syntax(code: str, lexer: str) -> Syntax:
    return Syntax(code, lexer, theme="ansi_dark", background_color="default", word_wrap=True)


def _prompt_toolkit_line(message: str) -> str:
    session: PromptSession[str] = PromptSession(message=[("bold yellow", message)])
    return session.prompt()
