"""caretz's permission questions as `session/request_permission`.

Everything caretz would ask at the terminal it asks the editor: allow once, always
(when caretz can save a rule for it: the option names the rule and the file), or
reject. The question arrives on the thread that runs the turn; `ask` blocks it until
the editor answers. A prompt cancelled while its question is open answers nothing: the
work ends as Ctrl-C ends it (the call not run, the stop reason `cancelled`).
"""

from __future__ import annotations

from collections.abc import Callable

from acp.schema import (
    ContentToolCallContent,
    PermissionOption,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallUpdate,
)

from caretz.acp import toolcalls
from caretz.acp.view import AcpView
from caretz.tools.asking import Answer, Choice, Question

# Sends the request and waits for the answer; None: withdrawn (the prompt was cancelled).
Ask = Callable[[ToolCallUpdate, list[PermissionOption]], "RequestPermissionResponse | None"]

ALLOW_ONCE = "allow-once"
ALLOW_ALWAYS = "allow-always"
REJECT = "reject"
_ANSWERS: dict[str, Choice] = {ALLOW_ONCE: "yes", ALLOW_ALWAYS: "always", REJECT: "no"}


def options(question: Question) -> list[PermissionOption]:
    once = "Allow once" if question.yes_means == "yes, once" else question.yes_means
    offered = [PermissionOption(option_id=ALLOW_ONCE, name=once, kind="allow_once")]
    if question.saves:
        rules = ", ".join(question.saves)
        name = f"Always allow {rules} (saved to {question.settings_file})"
        offered.append(PermissionOption(option_id=ALLOW_ALWAYS, name=name, kind="allow_always"))
    elif question.always_means:  # an answer of its own (a plan carried out in ask mode)
        name = question.always_means
        offered.append(PermissionOption(option_id=ALLOW_ALWAYS, name=name, kind="allow_always"))
    reject = "Reject" if question.no_means == "no" else question.no_means
    offered.append(PermissionOption(option_id=REJECT, name=reject, kind="reject_once"))
    return offered


def why(question: Question) -> str:
    """Why caretz asks, in the words the terminal uses."""
    if question.heading:  # not about running a call: a plan to approve, a host to reach
        plan = question.arguments.get("plan")
        body = f"\n\n{plan}" if isinstance(plan, str) else ""
        return f"{question.heading}\n{question.reason}{body}"
    lines = [f"caretz asks before it runs this {question.tool} call: {question.reason}"]
    if question.rule:
        lines.append(f"rule: {question.rule}")
    if question.escalate:
        lines.append(f"outside the sandbox, because: {question.escalate}")
    return "\n".join(lines)


def answer(response: RequestPermissionResponse | None) -> Answer:
    """The editor's choice; a request that failed, one the editor cancelled, or an option
    caretz did not offer, is no."""
    outcome = response.outcome if response is not None else None
    if outcome is None or outcome.outcome != "selected":
        return Answer("no")
    return Answer(_ANSWERS.get(outcome.option_id, "no"))


class EditorAsker:
    """The session's `Asker`: the editor answers."""

    interactive = True

    def __init__(self, view: AcpView, ask: Ask):
        self.view = view
        self.ask = ask
        self.asked = 0

    def __call__(self, question: Question) -> Answer:
        if self.view.cancelling:  # session/cancel came before the question: none is asked
            raise KeyboardInterrupt("the prompt was cancelled")
        self.asked += 1
        call = self.view.asked_call
        call_id = call.id if call is not None else f"caretz-question-{self.asked}"
        text = TextContentBlock(type="text", text=why(question))
        tool_call = ToolCallUpdate(
            tool_call_id=call_id,
            title=toolcalls.title(question.tool, question.arguments),
            kind=toolcalls.tool_kind(question.tool),
            status="pending",
            raw_input=dict(question.arguments),
            content=[ContentToolCallContent(type="content", content=text)],
        )
        response = self.ask(tool_call, options(question))
        if response is None and self.view.cancelling:  # withdrawn by session/cancel
            raise KeyboardInterrupt("the prompt was cancelled while its question was open")
        return answer(response)
