"""Usage limits, checked before every model request and every tool call."""

from __future__ import annotations

from dataclasses import field

from caretz.agent.outcomes import LimitReached
from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import Usage


@lazy_dataclass
class RunTotals:
    """What this run has used so far, across its turns."""

    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0  # None once a response had no known price
    requests: int = 0
    tool_calls: int = 0

    def price_unknown(self) -> None:
        """A model without a known price takes part in the run: its cost is unknown."""
        self.cost_usd = None

    def add_response(self, usage: Usage, cost: float | None) -> None:
        self.usage = self.usage + usage
        self.requests += 1
        if cost is None or self.cost_usd is None:
            self.cost_usd = None
        else:
            self.cost_usd += cost


@lazy_dataclass(frozen=True)
class UsageLimits:
    max_tool_calls: int | None = None
    max_budget_usd: float | None = None

    def check_before_request(self, totals: RunTotals) -> None:
        budget, spent = self.max_budget_usd, totals.cost_usd
        if budget is not None and spent is not None and spent >= budget:
            raise LimitReached(
                f"budget limit reached: ${spent:.4f} spent of --max-budget-usd {budget:g}"
            )

    def check_before_tool_call(self, totals: RunTotals) -> None:
        if self.max_tool_calls is not None and totals.tool_calls >= self.max_tool_calls:
            raise LimitReached(
                f"tool call limit reached: {totals.tool_calls} of --max-tool-calls "
                f"{self.max_tool_calls}"
            )
