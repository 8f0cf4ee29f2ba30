"""An agent in three parts: what settings decide, what it works with, what it remembers.

- `AgentConfig` (frozen): the model, prompt, reasoning, limits, name and depth.
- `AgentParts` (frozen): the collaborators: provider, tools, guard, session log,
  pricing, the view that listens, the clock, the compaction policy.
- `Conversation`: the messages and what the run has used so far.

A /model or /profile switch replaces the first two whole (see `runtime.wire_agent`)
and keeps the conversation; a subagent gets its own conversation and shares the
run's totals.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Protocol

from caretz.agent.compaction import CompactionPolicy, ContextMeter
from caretz.agent.limits import RunTotals, UsageLimits
from caretz.guard.seam import Guard, NullGuard
from caretz.guard.text_loop import TextLoopSettings
from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import Message, Reasoning, Usage
from caretz.providers.base import Provider, Retrying, Waiting
from caretz.session.events import EventLog
from caretz.tools.base import ToolContext

if TYPE_CHECKING:
    from caretz.agent.turn_hooks import TurnHooks
    from caretz.tools.registry import ToolRegistry

Price = Callable[[str, Usage], float | None]


class TurnListener(Protocol):
    def on_text(self, text: str) -> None: ...
    def on_thinking(self, text: str) -> None: ...
    def on_retry(self, event: Retrying) -> None: ...
    def on_response_start(self) -> None: ...
    def on_waiting(self, event: Waiting) -> None: ...


class QuietListener:
    def on_text(self, text: str) -> None:
        pass

    def on_thinking(self, text: str) -> None:
        pass

    def on_retry(self, event: Retrying) -> None:
        pass

    def on_response_start(self) -> None:
        pass

    def on_waiting(self, event: Waiting) -> None:
        pass


def no_price(model_ref: str, usage: Usage) -> float | None:
    return None


@lazy_dataclass(frozen=True, kw_only=True)
class AgentConfig:
    model_id: str  # as the provider names it
    model_ref: str  # provider/model, as the user names it
    system: str  # the system prompt (caretz's instructions, AGENTS.md)
    reasoning: Reasoning = "off"
    max_tokens: int = 8192
    limits: UsageLimits = field(default_factory=UsageLimits)
    name: str = "main"  # a subagent's role name
    depth: int = 0  # subagent nesting depth
    # loopGuard.detectors.streamText: the turn cuts a reply that repeats itself, any mode.
    text_loop: TextLoopSettings = TextLoopSettings()


@lazy_dataclass(frozen=True, kw_only=True)
class AgentParts:
    provider: Provider
    tools: ToolRegistry
    tool_ctx: ToolContext
    log: EventLog
    guard: Guard = field(default_factory=NullGuard)
    price: Price = no_price
    listener: TurnListener = field(default_factory=QuietListener)
    clock: Callable[[], float] = time.monotonic
    # Compact before each request once the context nears the window; None: never.
    compaction: CompactionPolicy | None = None
    # The user's hooks around the main agent's turns (agent/turn_hooks.py); None: none.
    hooks: TurnHooks | None = None


@lazy_dataclass(kw_only=True)
class Conversation:
    messages: list[Message] = field(default_factory=list)
    turns: int = 0
    last_request: str | None = None  # the previous turn's prompt and answer, for the guard
    last_answer: str | None = None
    totals: RunTotals = field(default_factory=RunTotals)  # shared with subagents
    context: ContextMeter = field(default_factory=ContextMeter)  # how full the context is
