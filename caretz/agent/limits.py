"""Usage limits, checked before every model request and every tool call, and what a run
has used: `RunTotals` as it runs, `usage_report` the one reading of it every report makes
(the result object, `--output json`, ACP, the Python API, the REPL), the judge's share in."""

from __future__ import annotations

import threading
from dataclasses import field
from typing import Any

from caretz.agent.outcomes import LimitReached
from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import Usage

# Subagents asked for in one reply run at the same time and add to the same totals.
_ADDING = threading.Lock()


@lazy_dataclass(frozen=True)
class AgentUsage:
    """What one agent (by name: "main", or a subagent's) used of a run."""

    model: str
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0
    requests: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            **self.usage.to_dict(),
            "cost_usd": self.cost_usd,
            "requests": self.requests,
        }


@lazy_dataclass(kw_only=True)
class RunTotals:
    """What this run has used so far, across its turns: the agent's own model calls (its
    turns, subagents, compaction's summaries) and, apart, the loop guard's judge's."""

    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0  # None once a response had no known price
    requests: int = 0
    tool_calls: int = 0
    judge_usage: Usage = field(default_factory=Usage)
    judge_cost_usd: float | None = 0.0  # None once a judge call had no known price
    judge_calls: int = 0
    # Each agent's share, by name; replaced whole on each change, so a copy of the totals
    # (a report's `since`) keeps the shares as they were.
    agents: dict[str, AgentUsage] = field(default_factory=dict)

    def price_unknown(self) -> None:
        """A model without a known price takes part in the run: its cost is unknown."""
        self.cost_usd = None

    def add_response(
        self, usage: Usage, cost: float | None, agent: str = "main", model: str = ""
    ) -> None:
        with _ADDING:
            self.usage = self.usage + usage
            self.requests += 1
            self.cost_usd = _plus(self.cost_usd, cost)
            had = self.agents.get(agent) or AgentUsage(model)
            share = AgentUsage(
                model or had.model, had.usage + usage, _plus(had.cost_usd, cost), had.requests + 1
            )
            self.agents = {**self.agents, agent: share}

    def add_tool_call(self) -> None:
        with _ADDING:
            self.tool_calls += 1

    def add_judge_call(self, usage: Usage, cost: float | None) -> None:
        """One call of the loop guard's judge (answered or not) and what it cost."""
        self.judge_usage = self.judge_usage + usage
        self.judge_calls += 1
        self.judge_cost_usd = _plus(self.judge_cost_usd, cost)


@lazy_dataclass(frozen=True, kw_only=True)
class UsageReport:
    """What a run (or a stretch of it) used, every model call counted: `usage` and
    `cost_usd` are the agent's and the judge's together, `judge_usage` and
    `judge_cost_usd` the judge's part of them. A cost is None when a model that took
    part has no known price."""

    usage: Usage
    cost_usd: float | None
    judge_usage: Usage
    judge_cost_usd: float | None
    judge_calls: int
    agents: dict[str, AgentUsage] = field(default_factory=dict)  # each agent's share

    def usage_dict(self) -> dict[str, Any]:
        """The tokens as a result object writes them, the judge's part under "judge"."""
        return {**self.usage.to_dict(), "judge": self.judge_usage.to_dict()}


def usage_report(totals: RunTotals, since: RunTotals | None = None) -> UsageReport:
    """What `totals` holds (with `since`, an earlier copy of the same totals: what came
    after it), the judge's share in. Every usage report reads the totals through this."""
    before = since if since is not None else RunTotals()
    model_usage = _minus(totals.usage, before.usage)
    judge_usage = _minus(totals.judge_usage, before.judge_usage)
    model_cost = _cost_between(before.cost_usd, totals.cost_usd)
    judge_cost = _cost_between(before.judge_cost_usd, totals.judge_cost_usd)
    return UsageReport(
        usage=model_usage + judge_usage,
        cost_usd=_plus(model_cost, judge_cost),
        judge_usage=judge_usage,
        judge_cost_usd=judge_cost,
        judge_calls=totals.judge_calls - before.judge_calls,
        agents=_agents_between(before.agents, totals.agents),
    )


def _agents_between(
    before: dict[str, AgentUsage], after: dict[str, AgentUsage]
) -> dict[str, AgentUsage]:
    shares = {}
    for name, now in after.items():
        was = before.get(name) or AgentUsage(now.model)
        if now.requests > was.requests:
            cost = _cost_between(was.cost_usd, now.cost_usd)
            shares[name] = AgentUsage(
                now.model, _minus(now.usage, was.usage), cost, now.requests - was.requests
            )
    return shares


def _plus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def _cost_between(before: float | None, after: float | None) -> float | None:
    if before is None or after is None:
        return None
    return round(after - before, 10)


def _minus(after: Usage, before: Usage) -> Usage:
    return Usage(
        input_tokens=after.input_tokens - before.input_tokens,
        output_tokens=after.output_tokens - before.output_tokens,
        cache_read_tokens=after.cache_read_tokens - before.cache_read_tokens,
        cache_write_tokens=after.cache_write_tokens - before.cache_write_tokens,
        reasoning_tokens=after.reasoning_tokens - before.reasoning_tokens,
    )


@lazy_dataclass(frozen=True)
class UsageLimits:
    max_tool_calls: int | None = None
    max_budget_usd: float | None = None

    def check_before_request(self, totals: RunTotals) -> None:
        budget, spent = self.max_budget_usd, usage_report(totals).cost_usd
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
