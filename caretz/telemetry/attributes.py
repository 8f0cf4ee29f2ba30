"""The attributes the telemetry sink sets: GenAI semantic-convention names where they
exist (gen_ai.*), caretz's own (caretz.*) elsewhere; the texts that quote a user's
commands or output only when asked for, and then redacted."""

from __future__ import annotations

from typing import Any

from caretz import secrets
from caretz.messages import Usage
from caretz.session.records import guard
from caretz.session.records.base import Record


def model_of(model_ref: str) -> str:
    return model_ref.split("/", 1)[1] if "/" in model_ref else model_ref


def provider_of(model_ref: str) -> str:
    """`anthropic/claude-sonnet-4-5` → `anthropic`; a bare model's provider is unknown."""
    return model_ref.split("/", 1)[0] if "/" in model_ref else "unknown"


def usage_attributes(usage: Usage, cost: float | None) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "gen_ai.usage.cache_read.input_tokens": usage.cache_read_tokens,
        "gen_ai.usage.cache_creation.input_tokens": usage.cache_write_tokens,
    }
    if cost is not None:
        attributes["caretz.cost_usd"] = cost
    return attributes


def verdict_attributes(record: guard.LoopGuardJudged) -> dict[str, Any]:
    verdict = record.verdict
    attributes: dict[str, Any] = {
        "caretz.guard.action": record.action,
        "caretz.guard.mode": record.mode,
        "caretz.guard.applied": record.applied,
    }
    if isinstance(verdict.get("stuck"), bool):
        attributes["caretz.guard.stuck"] = verdict["stuck"]
    if isinstance(verdict.get("confidence"), int | float):
        attributes["caretz.guard.confidence"] = float(verdict["confidence"])
    return attributes


# Which fields of the guard's records each event carries; the texts among them (what
# fired, the judge's reason, the note) quote commands and output, so only with details.
GUARD_FIELDS = ("detector", "trigger", "severity", "action", "mode", "applied", "judged", "step")
GUARD_TEXTS = ("headline", "message", "notice", "note", "reason")


def guard_attributes(record: Record, details: bool) -> dict[str, Any]:
    attributes: dict[str, Any] = {}
    for field in GUARD_FIELDS:
        value = getattr(record, field, None)
        if isinstance(value, bool | int | float | str) and value != "":
            attributes[f"caretz.guard.{field}"] = value
    if isinstance(record, guard.LoopGuardJudged):
        attributes.update(verdict_attributes(record))
        attributes["caretz.guard.judge_model"] = record.model
        if details and isinstance(record.verdict.get("reason"), str):
            attributes["caretz.guard.reason"] = secrets.redact(record.verdict["reason"])
    if details:
        for field in GUARD_TEXTS:
            value = getattr(record, field, None)
            if isinstance(value, str) and value:
                attributes[f"caretz.guard.{field}"] = secrets.redact(value)
    return attributes
