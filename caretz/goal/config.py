"""The `goal` section of a profile."""

from __future__ import annotations

from pydantic import Field

from caretz.config_base import parse_duration
from caretz.config_section import PositiveDuration, Section
from caretz.messages import Reasoning

DEFAULT_MAX_TURNS = 20


class EvaluatorConfig(Section):
    model: str | None = None  # provider/model; None: the loop guard's judge, else the session's
    reasoning: Reasoning | None = None


class GoalConfig(Section):
    max_turns: int = Field(DEFAULT_MAX_TURNS, ge=1)
    judge: EvaluatorConfig = Field(default_factory=EvaluatorConfig)
    judge_timeout: PositiveDuration = "60s"

    @property
    def judge_timeout_s(self) -> float:
        return parse_duration(self.judge_timeout)
