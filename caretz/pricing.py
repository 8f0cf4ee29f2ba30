"""What a model's tokens cost, for the budget limit and the usage report.

Prices are USD per million tokens, keyed by a glob over `provider/model` refs.
The built-in table covers a few well-known families; the "prices" section of
profiles.json adds entries or overrides these. Prices change: the built-in
numbers are a starting point, not a bill.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from caretz.messages import Usage
from caretz.text import glob_matches

_PER_TOKEN = 1 / 1_000_000


class Price(NamedTuple):
    """USD per million tokens. Cache prices left out cost the same as input.

    Plain data: profiles.json's `prices` entries are checked by `config.schema.PriceEntry`.
    """

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None

    def to_json(self, *, exclude_none: bool = False) -> dict[str, Any]:
        """As profiles.json writes it: `cacheRead`, `cacheWrite`."""
        keys: dict[str, float | None] = {"input": self.input, "output": self.output}
        keys |= {"cacheRead": self.cache_read, "cacheWrite": self.cache_write}
        return {k: v for k, v in keys.items() if v is not None} if exclude_none else keys

    @property
    def cache_read_rate(self) -> float:
        return self.input if self.cache_read is None else self.cache_read

    @property
    def cache_write_rate(self) -> float:
        return self.input if self.cache_write is None else self.cache_write


_price = Price


def _openai_family(prefix: str) -> dict[str, Price]:
    # OpenAI bills no cache writes: cache_write equals the input price.
    table = {
        "gpt-5*": _price(1.25, 10.0, 0.125, 1.25),
        "gpt-5-mini*": _price(0.25, 2.0, 0.025, 0.25),
        "gpt-5-nano*": _price(0.05, 0.40, 0.005, 0.05),
        "gpt-4.1*": _price(2.0, 8.0, 0.50, 2.0),
        "gpt-4.1-mini*": _price(0.40, 1.60, 0.10, 0.40),
        "gpt-4.1-nano*": _price(0.10, 0.40, 0.025, 0.10),
        "gpt-4o*": _price(2.50, 10.0, 1.25, 2.50),
        "gpt-4o-mini*": _price(0.15, 0.60, 0.075, 0.15),
    }
    return {f"{prefix}/{glob}": price for glob, price in table.items()}


BUILTIN_PRICES: dict[str, Price] = {
    "anthropic/claude-opus-*": _price(5.0, 25.0, 0.50, 6.25),
    "anthropic/claude-opus-4-0*": _price(15.0, 75.0, 1.50, 18.75),
    "anthropic/claude-opus-4-1*": _price(15.0, 75.0, 1.50, 18.75),
    "anthropic/claude-opus-4-2*": _price(15.0, 75.0, 1.50, 18.75),  # claude-opus-4-20250514
    "anthropic/claude-3-opus*": _price(15.0, 75.0, 1.50, 18.75),
    "anthropic/claude-sonnet-*": _price(3.0, 15.0, 0.30, 3.75),
    "anthropic/claude-3-5-sonnet*": _price(3.0, 15.0, 0.30, 3.75),
    "anthropic/claude-3-7-sonnet*": _price(3.0, 15.0, 0.30, 3.75),
    "anthropic/claude-haiku-*": _price(1.0, 5.0, 0.10, 1.25),
    "anthropic/claude-3-5-haiku*": _price(0.80, 4.0, 0.08, 1.0),
    **_openai_family("openai"),
    **_openai_family("chatgpt"),
}


def price_for(model_ref: str, prices: Mapping[str, Price] | None = None) -> Price | None:
    """The price of a `provider/model` ref (or a bare model ID), or None when unknown.

    `prices` (the file's "prices" section) is searched before the built-in table.
    Within a table the longest matching glob wins, so "openai/gpt-5-mini*" beats
    "openai/gpt-5*" whatever the order of the entries.
    """
    for table in (prices or {}, BUILTIN_PRICES):
        found = _best_match(model_ref, table)
        if found is not None:
            return found
    return None


def _best_match(model_ref: str, table: Mapping[str, Price]) -> Price | None:
    matching = [glob for glob in table if glob_matches(model_ref, glob)]
    if not matching:
        return None
    return table[max(matching, key=len)]


def cost_usd(
    model_ref: str, usage: Usage, prices: Mapping[str, Price] | None = None
) -> float | None:
    """USD spent on `usage`, or None when the model's price is unknown.

    `usage.input_tokens` is the uncached input; cache reads and cache writes
    are billed at their own prices.
    """
    price = price_for(model_ref, prices)
    if price is None:
        return None
    return _PER_TOKEN * (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * price.cache_read_rate
        + usage.cache_write_tokens * price.cache_write_rate
    )
