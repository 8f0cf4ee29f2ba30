"""The `loopGuard` section of a profile."""

from __future__ import annotations

import fnmatch

from pydantic import Field, field_validator

from caretz.config_base import parse_duration
from caretz.config_section import Section
from caretz.guard.detectors_config import DetectorsConfig
from caretz.guard.model import Mode
from caretz.messages import Reasoning


class JudgeConfig(Section):
    model: str | None = None  # provider/model; None = the session's own model judges
    reasoning: Reasoning | None = None
    # A "stuck" verdict the judge itself is unsure of does not interrupt the agent:
    # a redirect costs the agent its train of thought, so a guess is not enough.
    min_confidence: float = Field(0.5, ge=0.0, le=1.0)


class StagnationConfig(Section):
    # While the run looks flat (no task file changed and almost nothing new in the
    # last calls: guard/stagnation.py), the periodic check comes after this many
    # calls instead of checkEvery. It never asks the judge on its own.
    enabled: bool = True
    check_every: int = Field(10, ge=1)


class LoopGuardConfig(Section):
    mode: Mode = "off"
    repeat_threshold: int = Field(3, ge=1)
    check_every: int = Field(20, ge=0)  # 0 turns the periodic check off
    judge_timeout: str | float = "15s"
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    models: list[str] | None = None  # provider/model globs; None = guard every model
    detectors: DetectorsConfig = Field(default_factory=DetectorsConfig)
    stagnation: StagnationConfig = Field(default_factory=StagnationConfig)

    @field_validator("judge_timeout")
    @classmethod
    def _valid_duration(cls, value: str | float) -> str | float:
        parse_duration(value)
        return value

    @property
    def judge_timeout_s(self) -> float:
        return parse_duration(self.judge_timeout)

    def guards_model(self, model_ref: str) -> bool:
        """Whether the guard watches this model (checked at the start of every turn)."""
        if self.models is None:
            return True
        return any(_matches(model_ref, pattern) for pattern in self.models)


def _matches(model_ref: str, pattern: str) -> bool:
    """A pattern matches the provider/model ref or the bare model ID.

    A bare ID (an ad hoc --base-url endpoint) has no provider, so a pattern whose
    provider part is `*` is also tried on the model part alone.
    """
    bare = model_ref.split("/", 1)[1] if "/" in model_ref else model_ref
    candidates = [pattern]
    if pattern.startswith("*/"):
        candidates.append(pattern[2:])
    return any(
        fnmatch.fnmatchcase(model_ref, p) or fnmatch.fnmatchcase(bare, p) for p in candidates
    )
