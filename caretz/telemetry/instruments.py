"""The session's metrics: tokens by type, cost (the judge's share labelled), tool calls by
tool and outcome, the loop guard's firings and stops, sessions; and the GenAI semantic
conventions' client histograms. Names follow Claude Code's (`caretz.` for
`claude_code.`) where one exists."""

from __future__ import annotations

from opentelemetry.metrics import Meter

from caretz.messages import Usage

# Usage's fields by the `type` attribute Claude Code's token.usage uses.
TOKEN_TYPES = (
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("cacheRead", "cache_read_tokens"),
    ("cacheCreation", "cache_write_tokens"),
)
# The GenAI conventions count a request's input (cache included) and output.
SEMCONV_TYPES = ("input", "output")


class Instruments:
    """The counters and histograms, made once per session's meter."""

    def __init__(self, meter: Meter):
        self.sessions = meter.create_counter(
            "caretz.session.count", "{session}", "Sessions started or resumed"
        )
        self.tokens = meter.create_counter(
            "caretz.token.usage", "{token}", "Tokens used, by type and query source"
        )
        self.cost = meter.create_counter(
            "caretz.cost.usage", "USD", "Cost of model calls, by model and query source"
        )
        self.tool_calls = meter.create_counter(
            "caretz.tool.calls", "{call}", "Tool calls, by tool and outcome"
        )
        self.guard_firings = meter.create_counter(
            "caretz.guard.firings", "{firing}", "Loop-guard detector firings"
        )
        self.guard_stops = meter.create_counter(
            "caretz.guard.stops", "{stop}", "Turns the loop guard ended"
        )
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage", "{token}", "Tokens used per model call"
        )
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration", "s", "Duration of model calls"
        )

    def model_call(
        self,
        usage: Usage,
        cost: float | None,
        latency_s: float,
        attributes: dict[str, str],
        semconv: dict[str, str],
    ) -> None:
        """One model call's tokens, cost and time: `attributes` (model, query_source,
        agent) on caretz's counters, `semconv` (gen_ai.*) on the conventions' histograms."""
        for kind, field in TOKEN_TYPES:
            count = getattr(usage, field)
            if count:
                self.tokens.add(count, {**attributes, "type": kind})
        if cost:
            self.cost.add(cost, attributes)
        inputs = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
        for kind, count in zip(SEMCONV_TYPES, (inputs, usage.output_tokens), strict=True):
            self.token_usage.record(count, {**semconv, "gen_ai.token.type": kind})
        self.duration.record(latency_s, semconv)
