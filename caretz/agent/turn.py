"""The turn loop: model ↔ tools until the model answers without tool calls.

The loop knows nothing of detectors or terminals. It streams each response,
hands plain observations to the guard and acts on the decision that comes back;
everything that happens is an event in the session log.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from caretz.agent.compaction import ContextMeter
from caretz.agent.limits import RunTotals, UsageLimits
from caretz.agent.outcomes import (
    Done,
    Interrupted,
    LoopGuardStopped,
    RuntimeFailure,
    TurnEnd,
)
from caretz.guard.model import (
    AbortStream,
    Block,
    Continue,
    Decision,
    Stop,
    ToolObservation,
    TurnContext,
    Warn,
)
from caretz.messages import (
    Message,
    ModelRequest,
    ModelResponse,
    Reasoning,
    ToolCall,
    Usage,
    answer_dangling_calls,
)
from caretz.providers.base import (
    Completed,
    Provider,
    ProviderError,
    Retrying,
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
)
from caretz.session.events import EventLog
from caretz.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from caretz.guard.guard import LoopGuard
    from caretz.tools.registry import ToolRegistry

ABORTED = "aborted"
SKIPPED_AFTER_STOP = "Not run: the loop guard ended this turn."
SKIPPED_AFTER_INTERRUPT = "Not run: the user interrupted the turn."


class TurnListener(Protocol):
    def on_text(self, text: str) -> None: ...
    def on_thinking(self, text: str) -> None: ...
    def on_retry(self, event: Retrying) -> None: ...
    def on_response_start(self) -> None: ...


class QuietListener:
    def on_text(self, text: str) -> None:
        pass

    def on_thinking(self, text: str) -> None:
        pass

    def on_retry(self, event: Retrying) -> None:
        pass

    def on_response_start(self) -> None:
        pass


@dataclass
class TurnResult:
    status: str
    exit_code: int
    message: str  # why the turn ended, for people ("" when done)
    text: str  # the agent's last answer (or its report after a loop-guard stop)
    tool_calls: int


@dataclass
class Agent:
    """A conversation with one model and one set of tools; runs turns on it."""

    provider: Provider
    model_id: str
    model_ref: str
    tools: ToolRegistry
    tool_ctx: ToolContext
    log: EventLog
    system: str
    guard: LoopGuard | None = None
    limits: UsageLimits = field(default_factory=UsageLimits)
    totals: RunTotals = field(default_factory=RunTotals)
    reasoning: Reasoning = "off"
    max_tokens: int = 8192
    price: Callable[[str, Usage], float | None] = lambda ref, usage: None
    listener: TurnListener = field(default_factory=QuietListener)
    clock: Callable[[], float] = time.monotonic
    conversation: list[Message] = field(default_factory=list)
    turns: int = 0
    agent_name: str = "main"
    depth: int = 0
    last_request: str | None = None
    last_answer: str | None = None
    # How full the context is, measured from each response's usage.
    context: ContextMeter = field(default_factory=ContextMeter)
    # Called before each model request (context compaction for long turns).
    before_request: Callable[[Agent], None] | None = None

    def run_turn(self, prompt: str, *, from_user: bool = True) -> TurnResult:
        self.turns += 1
        turn = _Turn(self, self.turns, prompt, from_user)
        result = turn.run()
        self.last_request, self.last_answer = prompt, result.text
        return result


class _Turn:
    def __init__(self, agent: Agent, number: int, prompt: str, from_user: bool):
        self.agent = agent
        self.number = number
        self.prompt = prompt
        self.from_user = from_user
        self.tool_calls = 0
        self.warnings: list[str] = []
        self.stopping: Stop | None = None
        self.last_text = ""
        self.started = agent.clock()

    # -- the loop -----------------------------------------------------------
    def run(self) -> TurnResult:
        agent = self.agent
        agent.conversation.append(Message("user", self.prompt))
        self.emit(
            "Turn.Started", prompt=self.prompt, model=agent.model_ref, from_user=self.from_user
        )
        self.begin_guard()
        try:
            while True:
                self.step()
        except TurnEnd as end:
            return self.finish(end)
        except KeyboardInterrupt:
            return self.finish(Interrupted("interrupted by the user"))

    def step(self) -> None:
        agent = self.agent
        agent.limits.check_before_request(agent.totals)
        if agent.before_request is not None:
            agent.before_request(agent)
        final_report = self.stopping is not None
        response = self.request(final_report)
        message = response.message
        agent.conversation.append(message)
        self.last_text = message.content or self.last_text
        if final_report:
            raise LoopGuardStopped(self.stopping.notice if self.stopping else "")
        if response.stop_reason == ABORTED:
            return  # the guard stopped a looping stream: ask again with its note
        self.act(self.guard_call("after_response", message, response.usage))
        if not message.tool_calls:
            self.end_guard_turn(message.content)
            raise Done()
        self.run_tools(message.tool_calls)

    def finish(self, end: TurnEnd) -> TurnResult:
        self.pad_unanswered_calls(
            SKIPPED_AFTER_INTERRUPT if isinstance(end, Interrupted) else SKIPPED_AFTER_STOP
        )
        totals = self.agent.totals
        result = TurnResult(end.status, end.exit_code, end.message, self.last_text, self.tool_calls)
        self.emit(
            "Turn.Ended",
            status=end.status,
            exit_code=end.exit_code,
            message=end.message,
            text=self.last_text,
            tool_calls=self.tool_calls,
            duration_s=round(self.agent.clock() - self.started, 3),
            usage=totals.usage.to_dict(),
            cost_usd=totals.cost_usd,
        )
        return result

    # -- model requests -------------------------------------------------------
    def request(self, final_report: bool) -> ModelResponse:
        agent = self.agent
        trailing = self.trailing_messages(final_report)
        request = ModelRequest(
            model=agent.model_id,
            system=agent.system,
            messages=[*agent.conversation, *trailing],
            # The final report may not call tools. Anthropic still needs the tools
            # declared when the history holds tool calls, so they are forbidden
            # with tool_choice "none" rather than left out (OpenAI leaves them out).
            tools=agent.tools.specs(),
            tool_choice="none" if final_report else None,
            reasoning=agent.reasoning,
            max_tokens=agent.max_tokens,
        )
        self.emit(
            "Model.Request",
            model=agent.model_ref,
            messages=len(request.messages),
            tools=len(request.tools),
            trailing=[m.content for m in trailing],
        )
        started = agent.clock()
        response = self.stream(request)
        latency = agent.clock() - started
        cost = agent.price(agent.model_ref, response.usage)
        agent.context.measured(response.usage.to_dict(), agent.conversation)
        agent.totals.add_response(response.usage, cost)
        self.emit(
            "Model.Response",
            model=response.model,
            message=response.message.to_dict(),
            usage=response.usage.to_dict(),
            stop_reason=response.stop_reason,
            latency_s=round(latency, 3),
            cost_usd=cost,
        )
        return response

    def trailing_messages(self, final_report: bool) -> list[Message]:
        """Guard messages sent after the conversation but never stored in it."""
        guard = self.active_guard()
        trailing = []
        if guard is not None and guard.note:
            trailing.append(Message("user", guard.note))
        trailing.extend(Message("user", text) for text in self.warnings)
        self.warnings = []
        if final_report and guard is not None:
            trailing.append(Message("user", guard.stop_instruction()))
        return trailing

    def stream(self, request: ModelRequest) -> ModelResponse:
        listener = self.agent.listener
        listener.on_response_start()
        events = self.agent.provider.stream(request)
        partial = ""
        try:
            for event in events:
                if isinstance(event, Completed):
                    return event.response
                partial = self.on_stream_event(event, partial)
        except ProviderError as error:
            self.record_provider_error(error)
            raise RuntimeFailure(str(error)) from error
        except _StreamAborted as aborted:
            return aborted.response(request.model)
        finally:
            _close(events)
        raise RuntimeFailure("the model's stream ended without a final response")

    def on_stream_event(self, event: object, partial: str) -> str:
        listener = self.agent.listener
        if isinstance(event, TextDelta):
            listener.on_text(event.text)
            self.check_stream(self.guard_call("on_text", event.text), partial + event.text)
            return partial + event.text
        if isinstance(event, ThinkingDelta):
            listener.on_thinking(event.text)
            self.check_stream(self.guard_call("on_thinking", event.text), partial)
        elif isinstance(event, Retrying):
            listener.on_retry(event)
            self.emit(
                "Provider.Retrying",
                attempt=event.attempt,
                delay_s=event.delay_s,
                reason=event.reason,
            )
        elif isinstance(event, ToolCallStarted):
            pass
        return partial

    def check_stream(self, decision: Decision, partial: str) -> None:
        if isinstance(decision, AbortStream):
            self.act(decision.then)
            raise _StreamAborted(partial, decision.reason)
        self.act(decision)

    def record_provider_error(self, error: ProviderError) -> None:
        partial = error.partial.to_dict() if error.partial is not None else None
        self.emit("Provider.Error", error=str(error), status=error.status, partial=partial)

    # -- tools ----------------------------------------------------------------
    def run_tools(self, calls: list[ToolCall]) -> None:
        for call in calls:
            if self.stopping is not None:
                break
            self.agent.limits.check_before_tool_call(self.agent.totals)
            result = self.run_tool(call)
            self.agent.conversation.append(
                Message("tool", result.output, tool_call_id=call.id, is_error=not result.ok)
            )
            self.observe(call, result)
        self.pad_unanswered_calls(SKIPPED_AFTER_STOP)

    def run_tool(self, call: ToolCall) -> ToolResult:
        from caretz.tools.registry import ToolCrash

        agent = self.agent
        index = self.tool_calls
        self.tool_calls += 1
        agent.totals.tool_calls += 1
        self.emit("Tool.Called", index=index, call=call.to_dict())
        decision = self.guard_call("before_tool", call)
        if isinstance(decision, Block):
            result = ToolResult(ok=False, output=decision.reason)
        else:
            try:
                result = agent.tools.run(call, agent.tool_ctx)
            except ToolCrash as crash:
                self.emit_result(index, call, ToolResult(ok=False, output=str(crash)))
                raise RuntimeFailure(str(crash)) from crash
        self.emit_result(index, call, result)
        return result

    def emit_result(self, index: int, call: ToolCall, result: ToolResult) -> None:
        self.emit(
            "Tool.Result",
            index=index,
            call_id=call.id,
            name=call.name,
            **result.to_dict(),
            diff=result.diff,
        )

    def observe(self, call: ToolCall, result: ToolResult) -> None:
        observation = ToolObservation(
            index=self.tool_calls - 1,
            tool=call.name,
            args=call.arguments,
            output=result.output,
            failed=not result.ok,
            exit_code=result.exit_code,
            duration_s=result.duration_s,
            files_changed=tuple(result.files_changed),
        )
        self.act(self.guard_call("after_tool", observation))

    def pad_unanswered_calls(self, text: str) -> None:
        answer_dangling_calls(self.agent.conversation, text)

    # -- the guard ------------------------------------------------------------
    def active_guard(self) -> LoopGuard | None:
        return self.agent.guard

    def begin_guard(self) -> None:
        guard = self.active_guard()
        if guard is None:
            return
        agent = self.agent
        guard.begin_turn(
            TurnContext(
                task=self.prompt,
                model_ref=agent.model_ref,
                previous_request=agent.last_request,
                previous_answer=agent.last_answer,
                from_user=self.from_user,
                agent_name=agent.agent_name,
                depth=agent.depth,
            )
        )

    def guard_call(self, hook: str, *args: object) -> Decision:
        guard = self.active_guard()
        if guard is None:
            return Continue()
        return getattr(guard, hook)(*args)

    def end_guard_turn(self, final_text: str) -> None:
        guard = self.active_guard()
        if guard is None:
            return
        decision = guard.end_turn(final_text)
        if isinstance(decision, Stop):
            raise LoopGuardStopped(decision.notice)

    def act(self, decision: Decision) -> None:
        if isinstance(decision, Warn):
            self.warnings.append(decision.message)
        elif isinstance(decision, Stop) and self.stopping is None:
            self.stopping = decision
        # Redirect: the guard keeps the note and `trailing_messages` sends it.

    def emit(self, type: str, **fields: object) -> None:
        self.agent.log.emit(type, turn=self.number, agent=self.agent.agent_name, **fields)


class _StreamAborted(Exception):
    """The guard stopped a looping stream; what streamed so far is kept."""

    def __init__(self, partial: str, reason: str):
        super().__init__(reason)
        self.partial = partial
        self.reason = reason

    def response(self, model: str) -> ModelResponse:
        text = f"{self.partial}\n[stream stopped by the loop guard: {self.reason}]"
        return ModelResponse(Message("assistant", text), Usage(), ABORTED, model)


def _close(events: Iterator[object]) -> None:
    close = getattr(events, "close", None)
    if close is not None:
        close()
