"""The Agent: one conversation with one model and one set of tools; runs turns on it."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import field
from typing import TYPE_CHECKING

from caretz.agent import compaction
from caretz.agent.compaction import Compaction, CompactionPolicy, Reason, needs_compaction
from caretz.agent.outcomes import Outcome, PromptTooLarge, StoppedByHook
from caretz.agent.parts import AgentConfig, AgentParts, Conversation
from caretz.agent.prompt_room import prompt_too_large
from caretz.agent.turn import Turn
from caretz.agent.turn_hooks import TurnHooks
from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import Image, Message, ModelRequest, ModelResponse
from caretz.providers.base import ProviderError, collect, reported_prompt_tokens
from caretz.session.records.session import ModelSummary, SessionCompacted

if TYPE_CHECKING:
    from caretz.session.records import hooks as hook_records
else:
    # The hooks' records: only a session with hooks writes one.
    hook_records = lazy_module("caretz.session.records.hooks")


@lazy_dataclass
class Agent:
    config: AgentConfig
    parts: AgentParts
    conversation: Conversation = field(default_factory=Conversation)

    def run_turn(
        self,
        prompt: str,
        *,
        images: Sequence[Image] = (),
        from_user: bool = True,
        continuation: bool = False,
    ) -> Outcome:
        """One turn on the conversation, with `images` attached to the prompt.
        `continuation`: an automated turn that carries on the same piece of work (a
        goal's next turn; see `TurnContext`).

        The main agent's hooks see the user's prompt first (it may be blocked, or get
        context added) and the answer that would end the turn (a Stop hook may carry
        the work on, in automated turns it bounds)."""
        if self.config.depth > 0:
            return self.run_subagent_turn(prompt, from_user, continuation)
        hooks = self.hooks
        if hooks is None:
            return self.run_one_turn(prompt, from_user, continuation, images)
        if from_user:
            submitted = hooks.prompt_submitted(prompt)
            if submitted.blocked is not None:
                return self.prompt_blocked(prompt, submitted.blocked)
            prompt = submitted.prompt
        result = self.run_one_turn(prompt, from_user, continuation, images)
        return self.carry_on(result, hooks.stopping)

    def run_subagent_turn(self, prompt: str, from_user: bool, continuation: bool) -> Outcome:
        """A subagent's turn; the session's SubagentStop hooks may carry its work on."""
        result = self.run_one_turn(prompt, from_user, continuation)
        hooks = self.parts.hooks
        if hooks is None:
            return result
        name, agent_id = self.config.name, uuid.uuid4().hex[:12]
        return self.carry_on(
            result, lambda answer, count: hooks.subagent_stopping(name, agent_id, answer, count)
        )

    def carry_on(self, result: Outcome, stopping: Callable[[str, int], str | None]) -> Outcome:
        """While a stop hook sends a message back, the work goes on with it, in automated
        turns (the hooks bound how many)."""
        continuations = 0
        while result.status == "done":
            message = stopping(result.text, continuations)
            if message is None:
                break
            continuations += 1
            result = self.run_one_turn(message, False, True)
        return result

    @property
    def hooks(self) -> TurnHooks | None:
        """The user's hooks, for the main agent only (subagents have none of their own)."""
        return self.parts.hooks if self.config.depth == 0 else None

    def prompt_blocked(self, prompt: str, reason: str) -> Outcome:
        message = f"a UserPromptSubmit hook blocked the prompt; it was not sent: {reason}"
        self.parts.log.emit(hook_records.HookPromptBlocked(prompt=prompt, reason=reason))
        return StoppedByHook(message).outcome

    def run_one_turn(
        self, prompt: str, from_user: bool, continuation: bool, images: Sequence[Image] = ()
    ) -> Outcome:
        too_large = prompt_too_large(self.config, self.parts, prompt, images)
        if too_large is not None:
            return PromptTooLarge(too_large).outcome
        state = self.conversation
        state.turns += 1
        turn = Turn(
            self.config,
            self.parts,
            state,
            state.turns,
            prompt,
            images=images,
            from_user=from_user,
            continuation=continuation,
            after_overflow=self.compact_after_overflow,
        )
        turn.before_request = lambda: self.before_request(turn)
        result = turn.run()
        state.last_request, state.last_answer = prompt, result.text
        return result

    def before_request(self, turn: Turn) -> None:
        """Before each request of `turn`: a switch made while it ran (a plan approved
        during the turn) holds from now on; then compaction, when due."""
        turn.config, turn.parts = self.config, self.parts
        self.compact_if_due()

    # -- compaction ------------------------------------------------------------------
    def compact_if_due(self) -> None:
        """Before each request: compact once the context nears the window, so one
        long turn cannot outgrow it either."""
        policy = self.parts.compaction
        if policy is None:
            return
        state = self.conversation
        tokens = state.context.estimate(self.config.system, state.messages)
        if needs_compaction(tokens, policy):
            self.compact(policy, tokens_before=tokens, reason="auto")

    def compact_after_overflow(self, error: str, attempt: int = 0) -> bool:
        """The provider said the prompt is too long: compact now, whatever the estimate
        says; True when the conversation got smaller (the request is then retried). The
        newest step's results are shortened only when that is all that is left: on the
        second refusal, or when nothing older could be made smaller."""
        policy = self.parts.compaction
        if policy is None:
            return False
        state = self.conversation
        estimate = state.context.estimate(self.config.system, state.messages)
        tokens = max(estimate, reported_prompt_tokens(error) or 0)
        for shorten in (False, True)[min(attempt, 1) :]:
            result = self.compact(policy, tokens_before=tokens, reason="overflow", shorten=shorten)
            if result is not None and result.changed and result.tokens_after < tokens:
                return True
            tokens = result.tokens_after if result is not None and result.changed else tokens
        return False

    def compact(
        self,
        policy: CompactionPolicy,
        *,
        tokens_before: int | None = None,
        reason: Reason = "auto",
        shorten: bool = False,
    ) -> Compaction | None:
        """Compact the conversation (see `compaction.compact`); a change is logged as a
        `Session.Compacted` event holding the new conversation, which resume replays."""
        state = self.conversation
        trigger = "manual" if reason == "manual" else "auto"  # the hooks' two triggers
        blocked = self.hooks.compacting(trigger) if self.hooks is not None else None
        if blocked is not None:
            before = tokens_before or 0
            why = f"a PreCompact hook blocked it: {blocked}"
            return Compaction(
                reason=reason,
                trimmed=0,
                summarized=0,
                tokens_before=before,
                tokens_after=before,
                summary_error=why,
                conversation=state.messages,
            )
        result = compaction.compact(
            state.messages,
            self.config.system,
            policy,
            lambda messages: self.summarize(messages, policy),
            tokens_before=tokens_before,
            reason=reason,
            shorten_newest=shorten,
        )
        if result is None or not result.changed:
            return result
        state.messages = result.conversation
        state.context.set(result.tokens_after, result.conversation)
        self.parts.log.emit(
            SessionCompacted(
                agent=self.config.name,
                reason=reason,
                trimmed=result.trimmed,
                summarized=result.summarized,
                tokens_before=result.tokens_before,
                tokens_after=result.tokens_after,
                summary_error=result.summary_error,
                conversation=[message.to_dict() for message in result.conversation],
                shortened=result.shortened or None,
            )
        )
        return result

    def summarize(self, messages: list[Message], policy: CompactionPolicy) -> str:
        """The session's model summarizes `messages`; its cost counts in the totals."""
        config, parts = self.config, self.parts
        request = summary_request(messages, policy, config.model_id)
        response = collect(parts.provider.stream(request))
        usage = response.usage
        cost = parts.price(config.model_ref, usage)
        self.conversation.totals.add_response(usage, cost, config.name, config.model_ref)
        parts.log.emit(
            ModelSummary(
                agent=config.name,
                model=config.model_ref,
                usage=usage.to_dict(),
                messages=len(messages),
            )
        )
        return read_summary(response)


def summary_request(
    messages: list[Message], policy: CompactionPolicy, model_id: str
) -> ModelRequest:
    """The request that asks the session's model for a summary of `messages`."""
    transcript = compaction.render_transcript(messages, policy.transcript_chars, policy.keep_chars)
    return ModelRequest(
        model=model_id,
        system=compaction.SUMMARY_SYSTEM,
        messages=[Message(role="user", content=f"Summarize this session so far:\n\n{transcript}")],
        max_tokens=policy.summary_max_tokens,
    )


def read_summary(response: ModelResponse) -> str:
    summary = response.message.content.strip()
    if not summary:
        raise ProviderError("the model sent an empty summary")
    return summary
