"""Prices: built-in globs, the file's overrides, and what a Usage costs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from caretz.config.settings import resolve_settings
from caretz.messages import Usage
from caretz.pricing import BUILTIN_PRICES, Price, cost_usd, price_for


def test_builtin_families_are_priced() -> None:
    for ref in (
        "anthropic/claude-opus-4-5",
        "anthropic/claude-sonnet-4-5-20250929",
        "anthropic/claude-haiku-4-5",
        "openai/gpt-5",
        "openai/gpt-4o-2024-08-06",
        "openai/gpt-4.1",
        "chatgpt/gpt-5",
    ):
        assert price_for(ref) is not None, ref
    assert price_for("anthropic/claude-sonnet-4-5") == BUILTIN_PRICES["anthropic/claude-sonnet-*"]
    assert price_for("ollama/qwen3") is None


def test_longest_matching_glob_wins() -> None:
    assert price_for("openai/gpt-5-mini") == BUILTIN_PRICES["openai/gpt-5-mini*"]
    assert price_for("openai/gpt-5") == BUILTIN_PRICES["openai/gpt-5*"]
    assert price_for("openai/gpt-4o-mini") == BUILTIN_PRICES["openai/gpt-4o-mini*"]
    opus_4_1 = price_for("anthropic/claude-opus-4-1-20250805")
    assert opus_4_1 is not None and opus_4_1.input == 15.0


def test_file_prices_extend_and_override_builtins() -> None:
    mine = {
        "anthropic/claude-sonnet-*": Price(input=1, output=2),
        "ollama/*": Price(input=0, output=0),
    }
    assert price_for("anthropic/claude-sonnet-4-5", mine) == mine["anthropic/claude-sonnet-*"]
    assert price_for("ollama/qwen3", mine) == mine["ollama/*"]
    # An entry more specific than the file's still loses to the file: the file is searched first.
    assert price_for("openai/gpt-5-mini", {"openai/*": Price(input=9, output=9)}).input == 9


def test_cost_counts_each_kind_of_token_at_its_price() -> None:
    prices = {"p/m": Price(input=3, output=15, cache_read=0.3, cache_write=3.75)}
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=100_000,
        cache_read_tokens=2_000_000,
        cache_write_tokens=400_000,
    )
    assert cost_usd("p/m", usage, prices) == pytest.approx(3 + 1.5 + 0.6 + 1.5)


def test_cache_prices_default_to_the_input_price() -> None:
    prices = {"p/m": Price(input=2, output=4)}
    usage = Usage(cache_read_tokens=1_000_000, cache_write_tokens=500_000)
    assert cost_usd("p/m", usage, prices) == pytest.approx(2 + 1)


def test_unknown_price_means_unknown_cost() -> None:
    assert cost_usd("mystery/model", Usage(input_tokens=10), {}) is None
    assert cost_usd("anthropic/claude-haiku-4-5", Usage(), None) == 0.0


def test_prices_come_from_the_file_in_camel_case(tmp_path: Path) -> None:
    path = tmp_path / "profiles.json"
    path.write_text(
        json.dumps({"prices": {"ollama/*": {"input": 0.1, "output": 0.2, "cacheRead": 0.01}}})
    )
    settings = resolve_settings(dict(config=str(path)), {})
    price = price_for("ollama/qwen3", settings.prices)
    assert price == Price(input=0.1, output=0.2, cache_read=0.01)
    assert cost_usd("ollama/qwen3", Usage(cache_read_tokens=1_000_000), settings.prices) == (
        pytest.approx(0.01)
    )
