"""The model table: families by pattern, the default, a llama.cpp server's n_ctx;
how a "prompt is too long" refusal is recognized."""

from __future__ import annotations

import pytest

from caretz.providers.base import ProviderError, is_prompt_too_long, reported_prompt_tokens
from caretz.providers.model_limits import (
    DEFAULT,
    limits_for,
    reported_context,
    server_context_window,
)


@pytest.mark.parametrize(
    ("model", "window", "max_tokens", "anthropic_reasoning", "openai_reasoning"),
    [
        ("anthropic/claude-opus-5-5", 200_000, 32_000, "medium", "off"),
        ("anthropic/claude-haiku-4-5", 200_000, 32_000, "medium", "off"),
        ("claude-sonnet-4-5-20250929", 200_000, 32_000, "medium", "off"),
        ("openrouter/anthropic/claude-opus-4.1", 200_000, 32_000, "medium", "off"),
        ("anthropic/claude-3-5-haiku-latest", 200_000, 8_192, "off", "off"),
        ("anthropic/claude-3-haiku-20240307", 200_000, 4_096, "off", "off"),
        ("openai/gpt-5.1", 272_000, 32_000, "off", "medium"),
        ("chatgpt/gpt-6.1-sol", 272_000, 32_000, "off", "medium"),
        ("openai/gpt-5-chat-latest", 128_000, 16_384, "off", "off"),
        ("openai/gpt-4.1-mini", 1_047_576, 32_000, "off", "off"),
        ("openai/GPT-4o", 128_000, 16_384, "off", "off"),
        ("openai/o4-mini", 200_000, 32_000, "off", "medium"),
    ],
)
def test_families_match_by_pattern(
    model, window, max_tokens, anthropic_reasoning, openai_reasoning
):
    limits = limits_for(model)
    assert (limits.context_window, limits.default_max_tokens) == (window, max_tokens)
    # Thinking is on by default only on the family's own protocol.
    assert limits.default_reasoning("anthropic") == anthropic_reasoning
    assert limits.default_reasoning("openai") == openai_reasoning


@pytest.mark.parametrize("model", ["ollama/qwen3-coder:30b", "anthropic/claude-test", "x"])
def test_an_unknown_model_gets_the_conservative_default(model):
    assert limits_for(model) is DEFAULT
    assert (DEFAULT.context_window, DEFAULT.default_max_tokens) == (128_000, 8_192)
    assert DEFAULT.default_reasoning("anthropic") == DEFAULT.default_reasoning("openai") == "off"


def test_n_ctx_is_read_from_props_or_slots():
    assert reported_context({"default_generation_settings": {"n_ctx": 4096}}) == 4096
    assert reported_context({"n_ctx": 8192}) == 8192
    assert reported_context([{"id": 0, "n_ctx": 2048}]) == 2048
    assert reported_context({"n_ctx": True}) is None
    assert reported_context({"model_path": "x.gguf"}) is None
    assert reported_context("nonsense") is None


def test_a_server_that_does_not_say_gives_none(server):
    assert server_context_window(server.url) is None  # /props and /slots are 404 there
    server.props = {"default_generation_settings": {"n_ctx": 4096}}
    assert server_context_window(server.url) == 4096
    assert server_context_window("http://127.0.0.1:9") is None  # nothing listens


@pytest.mark.parametrize(
    ("message", "status", "tokens"),
    [
        (
            "anthropic: HTTP 400 invalid_request_error: prompt is too long: 212000 tokens > "
            "200000 maximum",
            400,
            212_000,
        ),
        (
            "openai: HTTP 400 invalid_request_error: This model's maximum context length is "
            "128000 tokens. However, your messages resulted in 131,000 tokens.",
            400,
            131_000,
        ),
        (
            "openai: HTTP 400 invalid_request_error: Your input exceeds the context window of "
            "this model.",
            400,
            None,
        ),
        (
            "anthropic: HTTP 400 invalid_request_error: input length and `max_tokens` exceed "
            "context limit: 188240 + 21333 > 200000",
            400,
            None,
        ),
        (
            "local: HTTP 400 exceed_context_size_error: the request exceeds the available "
            "context size",
            400,
            None,
        ),
    ],
)
def test_prompt_too_long_is_recognized_in_each_providers_words(message, status, tokens):
    assert is_prompt_too_long(ProviderError(message, status=status))
    assert reported_prompt_tokens(message) == tokens


def test_other_errors_are_not_prompt_too_long():
    assert not is_prompt_too_long(
        ProviderError("HTTP 400 max_tokens: must be at most 64000", status=400)
    )
    assert not is_prompt_too_long(ProviderError("prompt is too long", status=500))


def test_every_model_tab_offers_has_a_family_of_its_own():
    from caretz.providers.registry import BUILTIN_PROVIDERS, KNOWN_MODELS

    for provider, models in KNOWN_MODELS.items():
        assert provider in BUILTIN_PROVIDERS
        for model in models:
            assert limits_for(model).family != "default", model
