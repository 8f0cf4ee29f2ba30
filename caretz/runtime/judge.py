"""The loop guard's judge and the guard itself, built from settings.

The judge is the configured judge model, else the model the session runs now; a
guard is built only when the mode is not off (otherwise the agent runs on NullGuard).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from caretz.config.settings import resolve_goal_model, resolve_judge_model
from caretz.config_base import ConfigError
from caretz.guard.model import JudgeResult
from caretz.lazy import lazy_module
from caretz.pricing import cost_usd
from caretz.providers.base import collect
from caretz.runtime.models import open_provider, request_limits
from caretz.session.events import Emit

if TYPE_CHECKING:
    from caretz.goal import evaluator as goal_evaluator
    from caretz.guard import guard as guarding
    from caretz.guard import judge as guard_judge
else:
    guard_judge = lazy_module("caretz.guard.judge")  # the judge's prompt: only when one is built
    goal_evaluator = lazy_module("caretz.goal.evaluator")  # the goal's modules: only with a goal
    # The guard's modules (pydantic among them): only with a guard on.
    guarding = lazy_module("caretz.guard.guard")

if TYPE_CHECKING:
    from caretz.agent.limits import RunTotals
    from caretz.config.settings import Settings
    from caretz.goal.evaluator import ModelEvaluator
    from caretz.guard.config import LoopGuardConfig
    from caretz.guard.guard import LoopGuard
    from caretz.guard.judge import Complete, ModelJudge
    from caretz.guard.model import Judge
    from caretz.messages import ModelRequest, ModelResponse, Reasoning
    from caretz.providers.base import Provider
    from caretz.providers.resolve import ResolvedModel


def completion(provider: Provider) -> Complete:
    """`provider` as the plain callable a judge or evaluator asks: a request in, the
    collected response out; a set `cancelled` closes the stream at its next event."""

    def complete(request: ModelRequest, cancelled: threading.Event) -> ModelResponse:
        return collect(provider.stream(request), cancelled)

    return complete


def model_judge(
    provider: Provider,
    model_id: str,
    model_ref: str,
    reasoning: Reasoning = "off",
    clock: Callable[[], float] = time.monotonic,
) -> ModelJudge:
    """A judge that asks `provider`'s model; a timed-out request is closed at its next event."""
    return guard_judge.ModelJudge(completion(provider), model_id, model_ref, reasoning, clock)


def build_evaluator(settings: Settings, env: Mapping[str, str]) -> ModelEvaluator:
    """The goal's evaluator: `goal.judge.model`, else the loop guard's judge, else the
    session's model. Raises ConfigError (an unknown model, a missing key) before any call."""
    model = resolve_goal_model(settings) or settings.model
    configured = settings.goal.judge
    reasoning = configured.reasoning
    if reasoning is None and configured.model is None:
        reasoning = settings.loop_guard.judge.reasoning  # the guard's judge evaluates
    provider = open_provider(
        model,
        env,
        request_limits(settings),
        role="the goal's evaluator",
        choose_with="goal.judge.model",
    )
    return goal_evaluator.ModelEvaluator(
        completion(provider), model.model_id, model.ref, reasoning or "off"
    )


def build_judge(settings: Settings, session_model: ResolvedModel, env: Mapping[str, str]) -> Judge:
    """The configured judge model, or the session's own model when none is set."""
    judge_model = resolve_judge_model(settings) or session_model
    reasoning = settings.loop_guard.judge.reasoning or "off"
    provider = open_provider(
        judge_model,
        env,
        request_limits(settings),
        role="the loop guard's judge",
        choose_with="--loop-guard-model or loopGuard.judge.model",
    )
    return model_judge(provider, judge_model.model_id, judge_model.ref, reasoning)


class SessionJudge:
    """The loop guard's judge: the configured judge model, else the model the session runs now.

    Built on first use and rebuilt when the session's model changes (`follow`), so a
    guard switched on mid-session, or after a /model switch, always has a judge.
    A judge that cannot be built (a missing key) answers "not stuck" with the reason.
    Each call it makes is charged to the session's `totals` (priced by the settings'
    prices), which is how every usage report counts the judge's share.
    """

    def __init__(
        self,
        settings: Settings,
        env: Mapping[str, str],
        session_model: ResolvedModel,
        totals: RunTotals | None = None,
    ):
        self.settings = settings
        self.env = env
        self.session_model = session_model
        self.totals = totals
        self._built: tuple[str, Judge] | None = None

    @property
    def model_ref(self) -> str:
        ref = self.settings.loop_guard.judge.model
        return ref if ref is not None else self.session_model.ref

    def follow(self, session_model: ResolvedModel) -> None:
        self.session_model = session_model

    def ensure(self) -> Judge:
        """The judge, built now if needed; raises ConfigError when it cannot be."""
        ref = self.model_ref
        if self._built is None or self._built[0] != ref:
            self._built = (ref, build_judge(self.settings, self.session_model, self.env))
        return self._built[1]

    def __call__(self, summary: str, timeout_s: float) -> JudgeResult:
        try:
            judge = self.ensure()
        except ConfigError as error:
            return JudgeResult.no_verdict(self.model_ref, 0.0, f"error: {error}")
        result = judge(summary, timeout_s)
        if self.totals is not None:
            cost = cost_usd(result.model, result.usage, self.settings.prices)
            self.totals.add_judge_call(result.usage, cost)
        return result


def build_loop_guard(config: LoopGuardConfig, emit: Emit, judge: SessionJudge) -> LoopGuard:
    """The session's loop guard, built only once its mode is not off (off, the agent runs
    on NullGuard and none of the guard's modules is imported); its judge is checked at
    once, so a missing key fails before anything starts."""
    judge.ensure()
    return guarding.LoopGuard(config, judge, emit)
