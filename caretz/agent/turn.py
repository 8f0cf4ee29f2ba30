"""The turn loop: model ↔ tools until the model answers without tool calls.

The loop knows nothing of detectors or terminals. It streams each response,
hands plain observations to the guard and acts on the decision that comes back:
a tool result goes to `Guard.after_tool`, and what the decision carries (the
redirect note, a warning, the stop and its report instruction) stays here, in
the turn's own state, until the requests that send it. Everything that happens
is an event in the session log.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from caretz.agent import output_limit
from caretz.agent.limits import UsageReport, usage_report
from caretz.agent.outcomes import (
    INTERRUPTED_UNKNOWN,
    REFUSING_STATUSES,
    SKIPPED_AFTER_INTERRUPT,
    SKIPPED_AFTER_STOP,
    Done,
    Interrupted,
    LimitReached,
    Outcome,
    ProviderRefused,
    RuntimeFailure,
    StoppedByGuard,
    StoppedByHook,
    TurnEnd,
    internal_failure,
)
from caretz.agent.parts import AgentConfig, AgentParts, Conversation
from caretz.agent.request import turn_request
from caretz.agent.result_room import tool_context
from caretz.agent.signals import interrupted_by
from caretz.agent.tool_batch import run_parallel
from caretz.agent.turn_stream import (
    ABORTED,
    PromptTooLong,
    StreamCut,
    TextLoopCut,
    close_stream,
    retrying_record,
)
from caretz.guard.model import ToolObservation, TurnContext
from caretz.guard.seam import Block, Cut, Decision, Redirect, Stop, Warn
from caretz.messages import (
    Image,
    Message,
    ModelRequest,
    ModelResponse,
    ToolCall,
    Usage,
    answer_dangling_calls,
)
from caretz.private_data import DataWriteFailed
from caretz.providers.base import (
    Completed,
    ProviderError,
    Retrying,
    TextDelta,
    ThinkingDelta,
    Waiting,
    is_prompt_too_long,
)
from caretz.session.records import loop as records
from caretz.session.records.base import LoopRecord
from caretz.tools.base import ToolContext, ToolInterrupted, ToolResult, interrupted_result
from caretz.tools.parallel import MAX_PARALLEL_CALLS
from caretz.tools.policy import CancelToolCall, EndTurn
from caretz.tools.registry import ReadyCall, ToolCrash
from caretz.tools.todo import latest_plan


class Turn:
    """One turn: the user's prompt in, its `Outcome` out."""

    def __init__(
        self,
        config: AgentConfig,
        parts: AgentParts,
        conversation: Conversation,
        number: int,
        prompt: str,
        *,
        images: Sequence[Image] = (),
        from_user: bool = True,
        continuation: bool = False,
        before_request: Callable[[], None] = lambda: None,
        after_overflow: Callable[[str, int], bool] = lambda error, attempt: False,
    ):
        self.config = config
        self.parts = parts
        self.conversation = conversation
        self.number = number
        self.prompt = prompt
        self.images = list(images)  # attached to the prompt (--image, @shot.png)
        self.from_user = from_user
        self.continuation = continuation  # a goal's next turn (see TurnContext)
        self.before_request = before_request  # compaction, for long turns
        # "Prompt is too long" (the Nth time): compact; True when it got smaller (a retry).
        self.after_overflow = after_overflow
        self.tool_calls = 0
        self.last_text = ""
        self.started = parts.clock()
        # What the guard's decisions asked for, for the rest of this turn:
        self.note: str | None = None  # sent at the end of every remaining request
        self.warnings: list[str] = []  # sent once, with the next request
        self.stopping: Stop | None = None  # one last request, without tools, for the report
        self.cut_replies = output_limit.CutReplies(config.max_tokens)  # replies at max_tokens
        self.text_loop = TextLoopCut(config.text_loop)  # a reply repeating itself, any mode

    # -- the loop -----------------------------------------------------------
    def run(self) -> Outcome:
        if self.parts.price(self.config.model_ref, Usage()) is None:
            self.conversation.totals.price_unknown()  # even a turn that fails before a reply
        prompt = Message(role="user", content=self.prompt, images=self.images)
        self.conversation.messages.append(prompt)
        sent: dict[str, Any] = {
            "from_user": self.from_user,
            "images": [i.ref() for i in self.images] or None,
        }
        try:  # a data folder that cannot take the start ends the turn as any failure does
            self.parts.log.keep_images(self.images)
            self.emit(records.TurnStarted(prompt=self.prompt, model=self.config.model_ref, **sent))
            self.parts.guard.begin_turn(self.context())
            while True:
                self.step()
        except TurnEnd as end:
            return self.finish(end)
        except KeyboardInterrupt as interrupt:  # Ctrl-C, or SIGTERM / SIGHUP (agent/signals.py)
            if isinstance(interrupt, ToolInterrupted) and interrupt.cause is not None:
                interrupt = interrupt.cause  # a tool stopped by it: the signal decides the code
            return self.finish(interrupted_by(interrupt))
        except Exception as error:  # a fault no check turned into a result: the turn still ends
            return self.finish(internal_failure(error))

    def step(self) -> None:
        self.config.limits.check_before_request(self.conversation.totals)
        self.before_request()
        final_report = self.stopping is not None
        response = self.request(final_report)
        message = self.cut_replies.keep(self.conversation.messages, response.message)
        self.last_text = message.content or self.last_text
        if final_report and self.stopping is not None:
            raise StoppedByGuard(self.stopping.notice)
        if response.stop_reason == ABORTED:
            self.text_loop.end_turn(self.parts.log.emit, self.parts.guard.mode)
            return  # the guard cut a looping stream: ask again with its note
        self.act(self.parts.guard.after_response(message, response.usage))
        if response.stop_reason == output_limit.MAX_TOKENS:
            self.on_output_limit(message)
            return
        if not message.tool_calls:
            self.end_turn(message.content)
            raise Done()
        self.run_tools(message.tool_calls)

    def on_output_limit(self, message: Message) -> None:
        """The reply ended on max_tokens: never done (see output_limit.py)."""
        outcome = self.cut_replies.on_limit(message)
        self.emit(outcome.record)
        self.conversation.messages += outcome.results
        if outcome.ended is not None:
            self.last_text = message.content  # the cut-off answer, never an older step's
            raise LimitReached(outcome.ended)

    def finish(self, end: TurnEnd) -> Outcome:
        skipped = SKIPPED_AFTER_INTERRUPT if isinstance(end, Interrupted) else SKIPPED_AFTER_STOP
        answer_dangling_calls(self.conversation.messages, skipped)
        stopped = isinstance(end, StoppedByGuard) and self.stopping is not None
        resume = self.stopping.resume if stopped and self.stopping is not None else None
        used = usage_report(self.conversation.totals)  # the session's, the judge's share in
        try:
            self.emit_end(end, used)
        except DataWriteFailed as failed:  # the folder filled as the turn ended: it ends so
            end, resume = internal_failure(failed), None
        return dataclasses.replace(
            end.outcome, text=self.last_text, tool_calls=self.tool_calls, resume=resume
        )

    def emit_end(self, end: TurnEnd, used: UsageReport) -> None:
        self.emit(
            records.TurnEnded(
                status=end.outcome.status,
                exit_code=end.outcome.exit_code,
                message=end.outcome.message,
                text=self.last_text,
                tool_calls=self.tool_calls,
                duration_s=round(self.parts.clock() - self.started, 3),
                usage=used.usage_dict(),
                cost_usd=used.cost_usd,
            )
        )

    # -- model requests -------------------------------------------------------
    def request(self, final_report: bool) -> ModelResponse:
        trailing = self.trailing_messages(final_report)
        for attempt in range(2):  # compacted, then the newest results shortened too
            try:
                return self.send(trailing, final_report, may_overflow=True)
            except PromptTooLong as overflow:
                error = overflow.error
                self.emit(records.ModelPromptTooLong(error=str(error), status=error.status))
                if not self.after_overflow(str(error), attempt):
                    self.record_provider_error(error)
                    raise RuntimeFailure(str(error)) from None
        return self.send(trailing, final_report, may_overflow=False)

    def send(
        self, trailing: list[Message], final_report: bool, *, may_overflow: bool
    ) -> ModelResponse:
        config, parts, conversation = self.config, self.parts, self.conversation
        request, record = turn_request(config, parts, conversation, trailing, final_report)
        self.emit(record)
        started = parts.clock()
        response = self.stream(request, may_overflow)
        latency = parts.clock() - started
        cost = parts.price(config.model_ref, response.usage)
        conversation.context.measured(response.usage.to_dict(), conversation.messages)
        conversation.totals.add_response(response.usage, cost, config.name, config.model_ref)
        self.emit(
            records.ModelReplied(
                model=response.model,
                message=response.message.to_dict(),
                usage=response.usage.to_dict(),
                stop_reason=response.stop_reason,
                latency_s=round(latency, 3),
                cost_usd=cost,
            )
        )
        return response

    def trailing_messages(self, final_report: bool) -> list[Message]:
        """The guard's messages: sent after the conversation, never stored in it."""
        texts = [self.note] if self.note else []
        texts += self.warnings
        self.warnings = []
        texts += self.cut_replies.take_note()
        if final_report and self.stopping is not None:
            texts.append(self.stopping.report_instruction)
        return [Message(role="user", content=text) for text in texts]

    def stream(self, request: ModelRequest, may_overflow: bool = False) -> ModelResponse:
        self.parts.listener.on_response_start()
        events = self.parts.provider.stream(request)
        partial = ""
        self.text_loop.watch.reset()
        try:
            for event in events:
                if isinstance(event, Completed):
                    return event.response
                partial = self.on_stream_event(event, partial)
        except ProviderError as error:
            if may_overflow and is_prompt_too_long(error):
                raise PromptTooLong(error) from None
            self.record_provider_error(error)
            refused = error.status in REFUSING_STATUSES or error.images_refused
            raise (ProviderRefused if refused else RuntimeFailure)(str(error)) from error
        except StreamCut as cut:
            return cut.response(request.model)
        finally:
            close_stream(events)
        raise RuntimeFailure("the model's stream ended without a final response")

    def on_stream_event(self, event: object, partial: str) -> str:
        listener, guard = self.parts.listener, self.parts.guard
        if isinstance(event, TextDelta):
            listener.on_text(event.text)
            self.check_stream(guard.on_text(event.text), partial + event.text)
            self.text_loop.check(event.text, partial + event.text)
            return partial + event.text
        if isinstance(event, ThinkingDelta):
            listener.on_thinking(event.text)
            self.check_stream(guard.on_thinking(event.text), partial)
        elif isinstance(event, Waiting):
            listener.on_waiting(event)  # no answer yet: a view may say so
        elif isinstance(event, Retrying):
            listener.on_retry(event)
            self.emit(retrying_record(event))
            self.text_loop.watch.reset()
            return ""  # the next attempt streams the reply from its start
        return partial

    def check_stream(self, decision: Decision, partial: str) -> None:
        if isinstance(decision, Cut):
            self.act(decision.then)
            raise StreamCut(partial, decision.reason)
        self.act(decision)

    def record_provider_error(self, error: ProviderError) -> None:
        partial = error.partial.to_dict() if error.partial is not None else None
        self.emit(records.ProviderFailed(error=str(error), status=error.status, partial=partial))

    # -- tools ----------------------------------------------------------------
    def run_tools(self, calls: list[ToolCall]) -> None:
        """The reply's calls in order; each run of consecutive read-only calls (read, grep,
        glob, MCP tools marked read-only) runs at the same time (tools/parallel.py), so a
        call that edits or runs bash never overlaps another and sees the ones before it."""
        position = 0
        while position < len(calls) and self.stopping is None:
            batch = [calls[position]]
            while (
                position + len(batch) < len(calls)
                and len(batch) < MAX_PARALLEL_CALLS
                and self.parts.tools.runs_in_parallel(batch[0])
                and self.parts.tools.runs_in_parallel(calls[position + len(batch)])
            ):
                batch.append(calls[position + len(batch)])
            position += len(batch)
            if len(batch) == 1:
                self.config.limits.check_before_tool_call(self.conversation.totals)
                self.record(self.tool_calls, batch[0], self.run_tool(batch[0]))
            else:
                run_parallel(self, batch)
        answer_dangling_calls(self.conversation.messages, SKIPPED_AFTER_STOP)

    def record(self, index: int, call: ToolCall, result: ToolResult) -> None:
        self.conversation.messages.append(result.message(call.id))
        self.observe(index, call, result)

    def start_tool(
        self, call: ToolCall, batch: int = 1
    ) -> tuple[int, ToolCall, ReadyCall | ToolResult]:
        index = self.tool_calls
        self.tool_calls += 1
        self.conversation.totals.add_tool_call()
        self.emit(records.ToolCalled(index=index, call=call.to_dict()))
        try:
            ready = self.parts.tools.start(call, tool_context(self, batch), (self.guard_check,))
        except EndTurn as end:
            self.end_by_hook(index, call, end)
        return index, call, ready

    def end_by_hook(self, index: int, call: ToolCall, end: EndTurn) -> NoReturn:
        """A hook's `continue: false`, before or after the call ran: the turn ends; or
        a tool's end with an answer (a headless plan): the turn is done with it."""
        result = end.result or ToolResult(ok=False, output=f"Not run: {end.reason}")
        self.emit_result(index, call, result)
        self.conversation.messages.append(result.message(call.id))
        if end.answer is not None:  # shown as the turn's answer, as if the model wrote it
            self.parts.listener.on_response_start()
            self.parts.listener.on_text(end.answer)
            self.last_text = end.answer
            raise Done() from None
        raise StoppedByHook(end.reason) from None

    def run_tool(self, call: ToolCall) -> ToolResult:
        parts = self.parts
        index = self.tool_calls
        self.tool_calls += 1
        self.conversation.totals.add_tool_call()
        self.emit(records.ToolCalled(index=index, call=call.to_dict()))
        started = parts.clock()
        try:
            # The registry's own checks (the tool policy) come first, then the guard's.
            result = parts.tools.run(call, tool_context(self), before_call=(self.guard_check,))
        except ToolCrash as crash:
            self.emit_result(index, call, ToolResult(ok=False, output=str(crash)))
            raise RuntimeFailure(str(crash)) from crash
        except KeyboardInterrupt as interrupt:
            # The call started: the model learns what it did so far, never "Not run".
            self.record_interrupted(index, call, interrupt, parts.clock() - started)
            raise
        except EndTurn as end:  # a hook's `continue: false`, before or after the call ran
            self.end_by_hook(index, call, end)
        self.emit_result(index, call, result)
        return result

    def record_interrupted(
        self, index: int, call: ToolCall, interrupt: KeyboardInterrupt, seconds: float
    ) -> None:
        if isinstance(interrupt, ToolInterrupted):
            result = interrupt.result
        else:
            result = interrupted_result(seconds, INTERRUPTED_UNKNOWN)
        self.emit_result(index, call, result)
        self.conversation.messages.append(
            Message(role="tool", content=result.output, tool_call_id=call.id, is_error=True)
        )

    def guard_check(self, call: ToolCall, ctx: ToolContext) -> None:
        decision = self.parts.guard.before_tool(call)
        if isinstance(decision, Block):
            raise CancelToolCall(decision.reason)

    def emit_result(self, index: int, call: ToolCall, result: ToolResult) -> None:
        self.parts.log.keep_images(result.images)  # the event names them by digest
        fields = result.to_dict()
        self.emit(
            records.ToolReturned(
                index=index, call_id=call.id, name=call.name, **fields, diff=result.diff
            )
        )

    def observe(self, index: int, call: ToolCall, result: ToolResult) -> None:
        observation = ToolObservation(
            index=index,
            tool=call.name,
            args=call.arguments,
            output=result.output,
            failed=not result.ok,
            exit_code=result.exit_code,
            duration_s=result.duration_s,
            files_changed=tuple(result.files_changed),
        )
        self.act(self.parts.guard.after_tool(observation))

    # -- the guard ------------------------------------------------------------
    def context(self) -> TurnContext:
        return TurnContext(
            task=self.prompt,
            model_ref=self.config.model_ref,
            previous_request=self.conversation.last_request,
            previous_answer=self.conversation.last_answer,
            from_user=self.from_user,
            agent_name=self.config.name,
            depth=self.config.depth,
            plan=latest_plan(self.conversation.messages),
            continuation=self.continuation,
        )

    def end_turn(self, final_text: str) -> None:
        decision = self.parts.guard.end_turn(final_text)
        if isinstance(decision, Stop):
            raise StoppedByGuard(decision.notice)

    def act(self, decision: Decision) -> None:
        """Keep what a decision asks for; the requests that follow send it."""
        if isinstance(decision, Redirect):
            self.note = decision.note
        elif isinstance(decision, Warn):
            self.warnings.append(decision.message)
        elif isinstance(decision, Stop) and self.stopping is None:
            self.stopping = decision

    def emit(self, record: LoopRecord) -> None:
        """Log `record` as this turn's, of this agent."""
        self.parts.log.emit(dataclasses.replace(record, turn=self.number, agent=self.config.name))
