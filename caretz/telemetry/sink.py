"""The telemetry sink: one more listener on the session's event log.

Every record the session writes passes here as the views see it, so nothing in the loop,
the tools or the guard knows about telemetry. The records become a span tree (the
session, its turns, each turn's model calls, tool calls and judge calls; a subagent's
turn under the tool call that started it), the loop guard's events on the turn's span,
and metric points. Spans take the records' own times.

What is sent is names, counts, times and outcomes. The prompt's text and a call's
arguments (and the guard's headlines and the judge's reasons, which quote them) only
when the user opted in, and then through `secrets.redact`, so keys never leave.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

from caretz import secrets
from caretz.messages import Usage
from caretz.pricing import Price, cost_usd
from caretz.session.records import guard, loop
from caretz.session.records.base import LoopGuardRecord, Record
from caretz.session.records.goal import GoalEvaluated
from caretz.session.records.session import (
    ModelSummary,
    SessionOpened,
    SessionResumed,
    SessionStarted,
)
from caretz.telemetry.attributes import (
    guard_attributes,
    model_of,
    provider_of,
    usage_attributes,
    verdict_attributes,
)
from caretz.telemetry.export import Exporters
from caretz.telemetry.instruments import Instruments
from caretz.telemetry.settings import TelemetryOptions

MAIN = "main"
TASK_TOOL = "task"  # the tool that starts a subagent (agent/subagents.py)
# The guard's records, as the event names on the turn's span.
GUARD_EVENTS: dict[type[Record], str] = {
    guard.LoopGuardFired: "caretz.guard.fired",
    guard.LoopGuardJudged: "caretz.guard.judged",
    guard.LoopGuardRedirected: "caretz.guard.redirected",
    guard.LoopGuardStopped: "caretz.guard.stopped",
    guard.LoopGuardWarned: "caretz.guard.warned",
    guard.LoopGuardBlocked: "caretz.guard.blocked",
    guard.LoopGuardCut: "caretz.guard.cut",
    guard.LoopGuardResuming: "caretz.guard.resuming",
}


def ns(seconds: float | None) -> int | None:
    """A record's time as a span's (None: now)."""
    return None if seconds is None else int(seconds * 1_000_000_000)


class TelemetrySink:
    """Records in (`on_event`, any thread), spans and metric points out; `close` ends
    what is open and sends the rest."""

    def __init__(
        self,
        exporters: Exporters,
        prices: Mapping[str, Price],
        warn: Callable[[str], None],
    ):
        self.exporters = exporters
        self.options = exporters.options
        self.tracer = exporters.tracer
        self.metrics = Instruments(exporters.meter)
        self.prices = prices
        self.warn = warn
        self._lock = threading.Lock()
        self._session: Span | None = None
        self._session_id = ""
        self._turns: dict[str, Span] = {}  # by agent
        self._requests: dict[str, tuple[Span, str]] = {}  # by agent: the span, its model
        # The calls running, by ID: their agent, span, and a `task` call's arguments.
        self._tools: dict[str, tuple[str, Span, dict[str, Any] | None]] = {}
        self._judge: Span | None = None
        self._agent = MAIN  # the agent whose record came last: the guard's are of its turn
        self._closed = False
        self._broken = ""  # why the sink stopped reading records (said at the end)

    # -- the listener --------------------------------------------------------------------
    def on_event(self, record: Record) -> None:
        handler = HANDLERS.get(type(record))
        if handler is None and isinstance(record, LoopGuardRecord):
            handler = TelemetrySink._guard_event
        if handler is None:
            return
        with self._lock:
            if self._closed or self._broken:
                return
            try:
                handler(self, record)
            except Exception as error:  # an observer never ends the run it watches
                self._broken = f"{record.type}: {type(error).__name__}: {error}"

    def close(self) -> None:
        """Ends the spans still open (a turn cut short, the session), then sends what is
        left within the options' time (export.py)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for _, span, _ in self._tools.values():
                span.end()
            for span, _ in self._requests.values():
                span.end()
            if self._judge is not None:
                self._judge.end()
            for span in self._turns.values():
                span.end()
            if self._session is not None:
                self._session.end()
        if self._broken:
            self.warn(f"telemetry: stopped at an event it could not read ({self._broken})")
        self.exporters.close(self.warn)

    # -- the session and its turns ---------------------------------------------------------
    def _opened(self, record: SessionOpened) -> None:
        resumed = isinstance(record, SessionResumed)
        self.metrics.sessions.add(1, {"start_type": "resume" if resumed else "fresh"})
        if self._session is not None:
            return
        self._session_id = record.session_id
        self._session = self.tracer.start_span(
            "caretz.session",
            context=self.exporters.caller_context(),
            start_time=ns(record.ts),
            attributes={
                "session.id": record.session_id,
                "gen_ai.conversation.id": record.session_id,
                "gen_ai.request.model": model_of(record.model),
                "gen_ai.provider.name": provider_of(record.model),
                "caretz.model": record.model,
                "caretz.loop_guard.mode": record.loop_guard,
                "caretz.permission_mode": record.permission_mode,
                "caretz.version": record.version,
                "caretz.resumed": resumed,
            },
        )

    def _turn_started(self, record: loop.TurnStarted) -> None:
        agent = record.agent
        self._agent = agent
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
            "caretz.turn": record.turn,
            "caretz.turn.from_user": record.from_user,
        }
        if self._session_id:
            attributes["gen_ai.conversation.id"] = self._session_id
        if self.options.log_user_prompts:
            attributes["caretz.prompt"] = secrets.redact(record.prompt)
        previous = self._turns.pop(agent, None)
        if previous is not None:
            previous.end(ns(record.ts))
        self._turns[agent] = self.tracer.start_span(
            "caretz.turn" if agent == MAIN else f"caretz.turn {agent}",
            context=self._context(self._turn_parent(agent)),
            start_time=ns(record.ts),
            attributes=attributes,
        )

    def _turn_ended(self, record: loop.TurnEnded) -> None:
        span = self._turns.pop(record.agent, None)
        if span is None:
            return
        usage = Usage.from_dict(record.usage)
        span.set_attributes(
            {
                "caretz.turn.status": record.status,
                "caretz.turn.exit_code": record.exit_code,
                "caretz.turn.tool_calls": record.tool_calls,
                "gen_ai.usage.input_tokens": usage.input_tokens,
                "gen_ai.usage.output_tokens": usage.output_tokens,
            }
        )
        if record.cost_usd is not None:
            span.set_attribute("caretz.cost_usd", record.cost_usd)
        if record.exit_code != 0:
            span.set_status(Status(StatusCode.ERROR, record.status))
        span.end(ns(record.ts))

    def _turn_parent(self, agent: str) -> Span | None:
        """A subagent's turn hangs under the `task` call that started it (the open one
        that names it, else the latest open one); the main agent's under the session."""
        if agent != MAIN:
            calls: list[tuple[dict[str, Any], Span]] = [
                (args, span) for _, span, args in self._tools.values() if args is not None
            ]
            named = [
                span
                for args, span in calls
                if agent in (args.get("agent"), args.get("subagent_type"))
            ]
            if named:
                return named[-1]
            if calls:
                return calls[-1][1]
            return self._turns.get(MAIN, self._session)
        return self._session

    # -- model calls -------------------------------------------------------------------------
    def _request(self, record: loop.ModelRequested) -> None:
        self._agent = record.agent
        model = model_of(record.model)
        span = self.tracer.start_span(
            f"chat {model}",
            context=self._context(self._turns.get(record.agent, self._session)),
            start_time=ns(record.ts),
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": provider_of(record.model),
                "gen_ai.system": provider_of(record.model),
                "gen_ai.request.model": model,
                "gen_ai.agent.name": record.agent,
                "caretz.query_source": self._source(record.agent),
                "caretz.request.messages": record.messages,
                "caretz.request.tools": record.tools,
            },
        )
        self._requests[record.agent] = (span, record.model)

    def _response(self, record: loop.ModelReplied) -> None:
        opened = self._requests.pop(record.agent, None)
        model_ref = opened[1] if opened is not None else record.model
        usage = Usage.from_dict(record.usage)
        source = self._source(record.agent)
        self._model_call(usage, record.cost_usd, record.latency_s, model_ref, source, record.agent)
        if opened is None:
            return
        span = opened[0]
        span.set_attributes(usage_attributes(usage, record.cost_usd))
        span.set_attribute("gen_ai.response.model", record.model)
        if record.stop_reason:
            span.set_attribute("gen_ai.response.finish_reasons", [record.stop_reason])
        span.end(ns(record.ts))

    def _request_failed(self, record: loop.ProviderFailed | loop.ModelPromptTooLong) -> None:
        opened = self._requests.pop(record.agent, None)
        if opened is not None:
            span = opened[0]
            span.set_status(Status(StatusCode.ERROR, secrets.redact_shapes(record.error)))
            if record.status is not None:
                span.set_attribute("error.type", str(record.status))
            span.end(ns(record.ts))

    def _summary(self, record: ModelSummary) -> None:
        """A compaction's summary call: its tokens and cost, no span of its own."""
        usage = Usage.from_dict(record.usage)
        cost = cost_usd(record.model, usage, self.prices)
        self._model_call(usage, cost, 0.0, record.model, "compaction", record.agent)

    def _evaluated(self, record: GoalEvaluated) -> None:
        """A goal's evaluator call: its tokens and cost, no span of its own."""
        usage = Usage.from_dict(record.usage)
        agent = self._agent
        self._model_call(usage, record.cost_usd, record.latency_s, record.model, "goal", agent)

    def _model_call(
        self,
        usage: Usage,
        cost: float | None,
        latency: float,
        model_ref: str,
        source: str,
        agent: str,
    ) -> None:
        attributes = {"model": model_ref, "query_source": source, "agent.name": agent}
        semconv = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider_of(model_ref),
            "gen_ai.request.model": model_of(model_ref),
        }
        self.metrics.model_call(usage, cost, latency, attributes, semconv)

    # -- tool calls --------------------------------------------------------------------------
    def _tool_called(self, record: loop.ToolCalled) -> None:
        self._agent = record.agent
        call = record.call
        name, call_id = str(call.get("name", "")), str(call.get("id", ""))
        arguments = call.get("arguments")
        args = arguments if isinstance(arguments, dict) else {}
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.agent.name": record.agent,
        }
        if name == TASK_TOOL:  # which subagent: a name the model chose, never a file's text
            for key in ("agent", "subagent_type"):
                if isinstance(args.get(key), str):
                    attributes[f"caretz.task.{key}"] = args[key]
        if self.options.log_tool_details:
            text = json.dumps(arguments, ensure_ascii=False, default=str)
            attributes["gen_ai.tool.call.arguments"] = secrets.redact(text)
        span = self.tracer.start_span(
            f"execute_tool {name}",
            context=self._context(self._turns.get(record.agent, self._session)),
            start_time=ns(record.ts),
            attributes=attributes,
        )
        self._tools[call_id] = (record.agent, span, args if name == TASK_TOOL else None)

    def _tool_result(self, record: loop.ToolReturned) -> None:
        outcome = "success" if record.ok else "failure"
        self.metrics.tool_calls.add(1, {"tool_name": record.name, "outcome": outcome})
        opened = self._tools.pop(record.call_id, None)
        if opened is None:
            return
        span = opened[1]
        span.set_attribute("caretz.tool.ok", record.ok)
        if record.exit_code is not None:
            span.set_attribute("caretz.tool.exit_code", record.exit_code)
        if record.ended_by:
            span.set_attribute("caretz.tool.ended_by", record.ended_by)
        if not record.ok:
            span.set_status(Status(StatusCode.ERROR, "the call failed"))
        span.end(ns(record.ts))

    # -- the loop guard ----------------------------------------------------------------------
    def _judging(self, record: guard.LoopGuardJudging) -> None:
        if self._judge is not None:
            self._judge.end(ns(record.ts))
        self._judge = self.tracer.start_span(
            "caretz.judge",
            context=self._context(self._turns.get(self._agent, self._session)),
            start_time=ns(record.ts),
            attributes={
                "gen_ai.operation.name": "chat",
                "caretz.query_source": "judge",
                "caretz.guard.trigger": record.trigger,
                "gen_ai.agent.name": self._agent,
            },
        )

    def _judged(self, record: guard.LoopGuardJudged) -> None:
        usage = Usage.from_dict(record.usage)
        cost = cost_usd(record.model, usage, self.prices) if record.model else None
        self._model_call(usage, cost, record.latency_s, record.model, "judge", self._agent)
        span, self._judge = self._judge, None
        if span is None:  # a judge asked without its `Judging` record: its time from latency
            span = self.tracer.start_span(
                "caretz.judge",
                context=self._context(self._turns.get(self._agent, self._session)),
                start_time=ns((record.ts or time.time()) - record.latency_s),
                attributes={"gen_ai.operation.name": "chat", "caretz.query_source": "judge"},
            )
        span.set_attributes(
            {
                "gen_ai.request.model": model_of(record.model),
                "gen_ai.provider.name": provider_of(record.model),
                **usage_attributes(usage, cost),
                **verdict_attributes(record),
            }
        )
        if record.error:
            span.set_status(Status(StatusCode.ERROR, secrets.redact_shapes(record.error)))
        span.end(ns(record.ts))
        self._guard_event(record)

    def _guard_event(self, record: Record) -> None:
        name = GUARD_EVENTS.get(type(record))
        if name is None:
            return
        attributes = guard_attributes(record, self.options.log_tool_details)
        if isinstance(record, guard.LoopGuardFired):
            self.metrics.guard_firings.add(
                1, {"detector": record.detector, "action": record.action, "mode": record.mode}
            )
        if isinstance(record, guard.LoopGuardStopped):
            self.metrics.guard_stops.add(1, {"detector": record.detector, "mode": record.mode})
        span = self._turns.get(self._agent) or self._turns.get(MAIN) or self._session
        if span is not None:
            span.add_event(name, attributes, ns(record.ts))

    # -- helpers -----------------------------------------------------------------------------
    def _context(self, parent: Span | None) -> Any:
        if parent is None:
            return self.exporters.caller_context()
        return trace.set_span_in_context(parent)

    def _source(self, agent: str) -> str:
        return "main" if agent == MAIN else "subagent"


HANDLERS: dict[type[Record], Callable[[TelemetrySink, Any], None]] = {
    SessionStarted: TelemetrySink._opened,
    SessionResumed: TelemetrySink._opened,
    loop.TurnStarted: TelemetrySink._turn_started,
    loop.TurnEnded: TelemetrySink._turn_ended,
    loop.ModelRequested: TelemetrySink._request,
    loop.ModelReplied: TelemetrySink._response,
    loop.ProviderFailed: TelemetrySink._request_failed,
    loop.ModelPromptTooLong: TelemetrySink._request_failed,
    ModelSummary: TelemetrySink._summary,
    GoalEvaluated: TelemetrySink._evaluated,
    loop.ToolCalled: TelemetrySink._tool_called,
    loop.ToolReturned: TelemetrySink._tool_result,
    guard.LoopGuardJudging: TelemetrySink._judging,
    guard.LoopGuardJudged: TelemetrySink._judged,
}


def open_sink(options: TelemetryOptions, prices: Mapping[str, Price]) -> TelemetrySink:
    """A session's sink, its exporters started (their threads wait for data)."""
    return TelemetrySink(Exporters(options), prices, say)


def say(line: str) -> None:
    """The one line a collector that could not be reached is worth, on stderr."""
    sys.stderr.write(f"caretz: {line}\n")
    sys.stderr.flush()
