"""A reply that ended on the output limit (Anthropic `stop_reason: max_tokens`, OpenAI
`finish_reason: length`, both read as "max_tokens") is never taken as done.

- A reply with tool calls: none of them runs (the last one's arguments were cut off);
  each gets a failed result telling the model its reply hit the N-token limit and to
  write smaller pieces.
- A text reply (or one with no text at all: the reasoning used the whole budget) is
  continued: the next request asks the model to carry on where it stopped, and the
  pieces are joined into one reply. After `MAX_CONTINUATIONS` the turn ends with the
  limit's exit code (4) and says so.

The turn loop (turn.py) decides when; this module holds what is said and how the
pieces join.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import Message
from caretz.session.records.loop import ModelOutputLimit

Action = Literal["calls_not_run", "continued", "ended"]

MAX_TOKENS = "max_tokens"  # the stop reason both protocols' parsers normalize to
MAX_CONTINUATIONS = 2

CUT_CALL = (
    "Not run: your reply hit the {limit:,}-token output limit while writing this call, "
    "so its arguments were cut off. Write smaller pieces: split a big file into a `write` "
    "of its first part and `edit` calls that add the rest, a long command into several."
)
CALL_IN_CUT_REPLY = (
    "Not run: your reply hit the {limit:,}-token output limit (a later call in it was cut "
    "off), so none of its calls ran. Send this call again in a shorter reply."
)
CONTINUE_TEXT = (
    "Your reply hit the {limit:,}-token output limit and was cut off. Continue exactly "
    "where it stopped, without repeating what you already wrote."
)
CONTINUE_EMPTY = (
    "Your reply hit the {limit:,}-token output limit before it said anything: the "
    "reasoning used the whole budget. Think less and answer now; split a long answer "
    "into smaller pieces."
)
ENDED = (
    "the reply hit the {limit:,}-token output limit {times} times and is cut off; raise "
    "maxTokens in the profile or ask for a shorter answer"
)


def cut_call_results(message: Message, limit: int) -> list[Message]:
    """A failed result for each call of a cut-off reply; none of them ran."""
    calls = message.tool_calls
    return [
        Message(
            role="tool",
            content=(CUT_CALL if call is calls[-1] else CALL_IN_CUT_REPLY).format(limit=limit),
            tool_call_id=call.id,
            is_error=True,
        )
        for call in calls
    ]


def continue_note(message: Message, limit: int) -> str:
    empty = not message.content.strip()
    return (CONTINUE_EMPTY if empty else CONTINUE_TEXT).format(limit=limit)


def joined(first: Message, more: Message) -> Message:
    """A cut-off reply and its continuation as one reply. The thinking kept is the one
    that goes with the tool calls, if the continuation has any."""
    own = more if more.tool_calls or not first.thinking else first
    return dataclasses.replace(
        more,
        content=first.content + more.content,
        thinking=own.thinking,
        thinking_signature=own.thinking_signature,
    )


@lazy_dataclass(frozen=True)
class LimitAction:
    record: ModelOutputLimit
    results: list[Message]  # failed results for the calls that did not run
    ended: str | None  # the turn ends at the limit, saying this


@lazy_dataclass
class CutReplies:
    """One turn's replies cut off at the output limit: the one being continued and the
    note that asks for the rest (sent once, with the next request)."""

    limit: int  # the requests' max_tokens
    cut: Message | None = None
    note: str | None = None
    continuations: int = 0

    def keep(self, messages: list[Message], message: Message) -> Message:
        """Store a reply in `messages`; the continuation of a cut-off reply joins it."""
        if self.cut is None:
            messages.append(message)
            return message
        message = joined(self.cut, message)
        self.cut = None
        messages[-1] = message
        return message

    def take_note(self) -> list[str]:
        note, self.note = self.note, None
        return [note] if note else []

    def on_limit(self, message: Message) -> LimitAction:
        """What becomes of a reply that ended on the limit."""
        action: Action = "continued"
        results: list[Message] = []
        if message.tool_calls:
            action, results = "calls_not_run", cut_call_results(message, self.limit)
        elif self.continuations >= MAX_CONTINUATIONS:
            action = "ended"
        else:
            self.continuations += 1
            self.cut = message
            self.note = continue_note(message, self.limit)
        record = ModelOutputLimit(
            action=action,
            max_tokens=self.limit,
            continuation=self.continuations,
            tool_calls=[call.name for call in message.tool_calls],
        )
        ended = self.ended() if action == "ended" else None
        return LimitAction(record, results, ended)

    def ended(self) -> str:
        return ENDED.format(limit=self.limit, times=self.continuations + 1)
