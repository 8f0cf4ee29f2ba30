"""What a prompt used, in the protocol's fields: the prompt answer's `usage` (its tokens,
the judge's part and the cost under `_meta.caretz`) and a `usage_update` after it (the
context's size and the session's cost so far). Both read `usage_report`, so the loop
guard's judge counts as it does in every other report."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp.schema import Cost, Usage, UsageUpdate

from caretz.agent.limits import UsageReport, usage_report

if TYPE_CHECKING:
    from caretz.app.session import AppSession
    from caretz.messages import Usage as Tokens


def prompt_usage(report: UsageReport) -> Usage:
    """A prompt's tokens as ACP counts them (input is the uncached input, as Anthropic's
    `input_tokens`; the cache reads and writes apart; the total all of them)."""
    fields = _tokens(report.usage)
    judge = {**_tokens(report.judge_usage), "calls": report.judge_calls}
    judge["costUsd"] = report.judge_cost_usd
    meta = {"caretz": {"costUsd": report.cost_usd, "judge": judge}}
    return Usage.model_validate({**fields, "_meta": meta})


def session_usage(session: AppSession) -> UsageUpdate:
    """The context in use and the window, and what the session has cost (when every
    model in it has a price); read on the session's worker thread."""
    report = usage_report(session.totals)
    cost = Cost(amount=report.cost_usd, currency="USD") if report.cost_usd is not None else None
    return UsageUpdate(
        session_update="usage_update",
        used=max(0, session.context_tokens()),
        size=session.context_window,
        cost=cost,
    )


def _tokens(usage: Tokens) -> dict[str, Any]:
    total = (
        usage.input_tokens
        + usage.output_tokens
        + usage.cache_read_tokens
        + usage.cache_write_tokens
    )
    fields: dict[str, Any] = {
        "totalTokens": total,
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "cachedReadTokens": usage.cache_read_tokens,
        "cachedWriteTokens": usage.cache_write_tokens,
    }
    if usage.reasoning_tokens:
        fields["thoughtTokens"] = usage.reasoning_tokens
    return fields
