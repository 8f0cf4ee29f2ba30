"""Peer-style checks on the turn as a whole: rounds of tool calls with no word
to the user, the same answer turn after turn, and a runaway number of calls.
"""

from __future__ import annotations

from caretz.guard.counting import Count
from caretz.guard.detector import Detector, fire
from caretz.guard.detectors_config import SameAnswerConfig, ToolBudgetConfig, ToolRoundsConfig
from caretz.guard.model import Firing, ToolObservation, TurnContext
from caretz.messages import Message
from caretz.text import one_line, plural


class ToolRoundsDetector(Detector):
    """Responses that only call tools, round after round, with no word to the user.

    As Goa's `max_consecutive_tool_rounds`, with its recovery instruction.
    """

    name = "tool-rounds"

    def __init__(self, config: ToolRoundsConfig):
        self.config = config
        self._rounds = Count()

    def begin_turn(self, ctx: TurnContext) -> None:
        self._rounds = Count()

    def after_response(self, message: Message) -> Firing | None:
        if not message.tool_calls or message.content.strip():
            self._rounds = Count()
            return None
        rounds = self._rounds.add()
        if not rounds.reached(self.config.max_rounds):
            return None
        rounds.restart()
        return fire(
            self.name,
            "tool rounds without text",
            f"{rounds.value} tool rounds in a row without a word to the user",
            "warn",
            message=self.config.recovery_message,
        )


class SameAnswerDetector(Detector):
    """The same final answer turn after turn with no progress (Goa's runaway guard).

    Automated turns (auto-resume, goal continuation) keep the count; a
    genuine user turn resets it. A turn whose tools made progress never adds
    a strike, whatever its text.
    """

    name = "same-answer"

    def __init__(self, config: SameAnswerConfig):
        self.config = config
        self._previous: str | None = None
        self._strikes = 0

    def begin_turn(self, ctx: TurnContext) -> None:
        if ctx.from_user:
            self._previous, self._strikes = None, 0

    def end_turn(self, final_text: str, progress: bool) -> Firing | None:
        answer = one_line(final_text)
        previous, self._previous = self._previous, answer
        if progress:
            return None
        if answer != previous:
            self._strikes = 0
            return None
        self._strikes += 1
        limit = self.config.max_repeats
        if not limit or self._strikes < limit:
            return None
        self._strikes = 0
        shown = one_line(answer, 80) or "(empty response)"
        return fire(
            self.name,
            answer or "(empty response)",
            f"same answer {limit + 1} turns in a row: {shown}",
            "stop",
            message=(
                f"The last {limit + 1} turns ended with the same answer and no progress: "
                f"{shown!r}. Resuming again will not change it."
            ),
        )


class ToolBudgetDetector(Detector):
    """A per-turn budget of tool calls: a warning with what remains, then a hard stop.

    As the anti-looping guardrail's per-task budget (warning at 12, stop at 15),
    at thresholds of its own. It keeps no count: the turn loop numbers each call
    it observes (`ToolObservation.index`), as it counts the run's calls for
    --max-tool-calls.
    """

    name = "tool-budget"

    def __init__(self, config: ToolBudgetConfig):
        self.config = config

    def after_tool(self, obs: ToolObservation) -> Firing | None:
        calls, c = obs.index + 1, self.config
        if c.stop_at and calls >= c.stop_at:
            return fire(
                self.name,
                "tool budget",
                f"{plural(calls, 'tool call')} this turn (budget {c.stop_at})",
                "stop",
                obs.index,
                f"This turn has used its budget of {c.stop_at} tool calls. Stop calling "
                "tools: report what you changed, what is unfinished and what you need.",
                immediate=True,  # a hard cap: it acts whatever a judge would say
            )
        if c.warn_at and calls == c.warn_at:
            remaining = (
                f"; {c.stop_at - calls} remain before the turn is stopped" if c.stop_at else ""
            )
            return fire(
                self.name,
                "tool budget",
                f"{plural(calls, 'tool call')} this turn",
                "warn",
                obs.index,
                f"This turn has made {plural(calls, 'tool call')}{remaining}. Finish the most important "
                "part first, and leave the rest for a report.",
            )
        return None
