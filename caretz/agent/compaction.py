"""Compaction: keep a long conversation inside the model's context window.

Cheapest first. Older tool traffic (tool outputs, and long arguments such as a
written file's content) is cut to its head and tail around a marker; if the
conversation is still too big, the older turns are replaced by a summary the
model writes, while the most recent turns stay exactly as they were.

The system prompt (caretz's instructions and the project's AGENTS.md) is not
part of the conversation, so it is never trimmed or summarized: every request
after a compaction carries it intact. Each compaction is a `Session.Compacted`
event holding the resulting conversation, so a resumed session carries on from
the compacted conversation.

The functions here take the conversation, the system prompt and a way to get
a summary; `Agent.compact` applies the result to the agent and logs it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from caretz.messages import Message, ModelRequest, ModelResponse, ToolCall, Usage
from caretz.providers.base import ProviderError

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4  # role markers and framing, per message
DEFAULT_CONTEXT_WINDOW = 200_000

SUMMARY_HEADER = (
    "[This session was compacted to fit the model's context window. "
    "What happened before the messages below, as summarized then:]"
)
SUMMARY_ACK = "Understood. I will carry on from this summary and the messages that follow."
TRIM_MARKER = "[… {count} characters trimmed here to save context …]"

SUMMARY_SYSTEM = """\
You summarize a coding session between a user and caretz, a coding agent working in the \
user's project, so that the agent can carry on the work from your summary alone.

Write Markdown with these parts:
- Goal: what the user asked for (their words where they matter) and any later changes.
- Done so far: what was changed (files, functions, commands run) and what was learned.
- Current state: what works and what fails, with exact error messages, paths and test names.
- Next steps: what was about to happen, open questions, anything promised to the user.

Keep names, paths, commands and numbers exact. Leave out pleasantries and tool output that \
no longer matters. Project instructions are kept separately: do not repeat them."""

Reason = Literal["auto", "manual"]
# Summarizes older messages (the session's model writes it); raises ProviderError.
Summarize = Callable[[list[Message]], str]


@dataclass(frozen=True)
class CompactionPolicy:
    """When to compact and how much to keep."""

    context_window: int = DEFAULT_CONTEXT_WINDOW
    trigger_ratio: float = 0.8  # compact once the estimate passes this share of the window
    target_ratio: float = 0.5  # trimming alone is enough when it gets below this share
    keep_recent_turns: int = 2  # the newest turns are kept as they are
    keep_chars: int = 2_000  # an older tool output or argument keeps this many characters
    summary_max_tokens: int = 4_096

    @property
    def trigger_tokens(self) -> int:
        return int(self.context_window * self.trigger_ratio)

    @property
    def target_tokens(self) -> int:
        return int(self.context_window * self.target_ratio)

    @property
    def transcript_chars(self) -> int:
        """The most of the old conversation sent to be summarized (half the window)."""
        return self.context_window * CHARS_PER_TOKEN // 2


@dataclass(frozen=True)
class Compaction:
    """What one compaction did."""

    reason: Reason
    trimmed: int  # tool outputs and arguments cut to head and tail
    summarized: int  # messages replaced by the summary
    tokens_before: int
    tokens_after: int
    summary_error: str | None = None  # the summary was wanted but the request failed
    conversation: list[Message] = field(default_factory=list)  # the result

    @property
    def changed(self) -> bool:
        return bool(self.trimmed or self.summarized)


# -- estimating ---------------------------------------------------------------------


def message_chars(message: Message) -> int:
    chars = len(message.content) + len(message.thinking)
    for call in message.tool_calls:
        chars += len(call.name) + len(json.dumps(call.arguments, ensure_ascii=False))
    return chars


def estimate_tokens(system: str, conversation: list[Message]) -> int:
    """A rough count: four characters a token, plus a little per message."""
    chars = len(system) + sum(message_chars(m) for m in conversation)
    return chars // CHARS_PER_TOKEN + MESSAGE_OVERHEAD_TOKENS * len(conversation)


class ContextMeter:
    """How full the context is: the last response's real token count, plus an
    estimate for the messages added after it (tool results, the next prompt)."""

    def __init__(self) -> None:
        self._tokens = 0
        self._index = 0
        self._conversation: list[Message] | None = None

    def measured(self, usage: dict[str, Any], conversation: list[Message]) -> None:
        """Record a `Model.Response`'s usage; `conversation` does not hold its message yet."""
        used = Usage.from_dict(usage)
        self._tokens = (
            used.input_tokens
            + used.cache_read_tokens
            + used.cache_write_tokens
            + used.output_tokens
        )
        self._index = len(conversation)
        self._conversation = conversation

    def set(self, tokens: int, conversation: list[Message]) -> None:
        """The context is `tokens` now, with `conversation` as it stands."""
        # As if the last message were the measured response: later ones are estimated.
        self._tokens, self._index = tokens, len(conversation) - 1
        self._conversation = conversation

    def forget(self) -> None:
        self._tokens, self._conversation = 0, None

    def estimate(self, system: str, conversation: list[Message]) -> int:
        rough = estimate_tokens(system, conversation)
        known = self._tokens > 0 and conversation is self._conversation
        if not known or len(conversation) <= self._index:
            return rough
        return self._tokens + estimate_tokens("", conversation[self._index + 1 :])


def needs_compaction(tokens: int, policy: CompactionPolicy) -> bool:
    return tokens >= policy.trigger_tokens


# -- trimming ---------------------------------------------------------------------------


def head_and_tail(text: str, keep: int) -> str:
    """`text` cut to about `keep` characters: its start, a marker, its end."""
    if len(text) <= keep + len(TRIM_MARKER) + 16:
        return text
    head = keep * 2 // 5  # errors and summaries sit at the end: the tail gets more
    tail = keep - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n{TRIM_MARKER.format(count=cut)}\n{text[len(text) - tail :]}"


def trim_tool_traffic(
    conversation: list[Message], start: int, end: int, keep: int
) -> tuple[list[Message], int]:
    """A copy of `conversation` with tool outputs and long string arguments in
    [start, end) cut to head and tail; also how many were cut."""
    trimmed = 0
    result = list(conversation)
    for index in range(start, min(end, len(result))):
        message = result[index]
        if message.role == "tool":
            content = head_and_tail(message.content, keep)
            if content != message.content:
                result[index] = dataclasses.replace(message, content=content)
                trimmed += 1
        elif message.tool_calls:
            calls, count = _trim_calls(message.tool_calls, keep)
            if count:
                result[index] = dataclasses.replace(message, tool_calls=calls)
                trimmed += count
    return result, trimmed


def _trim_calls(calls: list[ToolCall], keep: int) -> tuple[list[ToolCall], int]:
    trimmed = 0
    result = []
    for call in calls:
        arguments = dict(call.arguments)
        for key, value in call.arguments.items():
            if isinstance(value, str):
                arguments[key] = head_and_tail(value, keep)
                trimmed += arguments[key] != value
        result.append(dataclasses.replace(call, arguments=arguments))
    return result, trimmed


def recent_start(conversation: list[Message], keep_turns: int) -> int:
    """Where the newest `keep_turns` turns begin (0: the conversation has no older turns)."""
    starts = [i for i, message in enumerate(conversation) if message.role == "user"]
    if keep_turns <= 0:
        return len(conversation)
    if len(starts) <= keep_turns:
        return 0
    return starts[-keep_turns]


# -- summarizing ---------------------------------------------------------------------


def render_transcript(messages: list[Message], max_chars: int, keep: int) -> str:
    """The older conversation as plain text for the summarizing request."""
    parts = []
    for message in messages:
        if message.role == "user":
            parts.append(f"## User\n{message.content}")
        elif message.role == "assistant":
            lines = [message.content] if message.content else []
            for call in message.tool_calls:
                arguments = json.dumps(call.arguments, ensure_ascii=False)
                lines.append(f"→ {call.name} {head_and_tail(arguments, keep)}")
            parts.append("## Assistant\n" + "\n".join(lines))
        else:
            label = "Tool result (failed)" if message.is_error else "Tool result"
            parts.append(f"## {label}\n{head_and_tail(message.content, keep)}")
    return head_and_tail("\n\n".join(parts), max_chars)


def summary_messages(summary: str) -> list[Message]:
    """The pair that stands in for the summarized turns (roles keep alternating)."""
    return [Message("user", f"{SUMMARY_HEADER}\n\n{summary}"), Message("assistant", SUMMARY_ACK)]


def summary_request(
    messages: list[Message], policy: CompactionPolicy, model_id: str
) -> ModelRequest:
    """The request that asks the session's model for a summary of `messages`."""
    transcript = render_transcript(messages, policy.transcript_chars, policy.keep_chars)
    return ModelRequest(
        model=model_id,
        system=SUMMARY_SYSTEM,
        messages=[Message("user", f"Summarize this session so far:\n\n{transcript}")],
        max_tokens=policy.summary_max_tokens,
    )


def read_summary(response: ModelResponse) -> str:
    summary = response.message.content.strip()
    if not summary:
        raise ProviderError("the model sent an empty summary")
    return summary


# -- the whole step ----------------------------------------------------------------------


def compact(
    conversation: list[Message],
    system: str,
    policy: CompactionPolicy,
    summarize: Summarize,
    *,
    tokens_before: int | None = None,
    reason: Reason = "auto",
) -> Compaction | None:
    """A smaller copy of `conversation`; None when there was nothing to do.

    "auto" trims older tool traffic and summarizes only if that is not enough;
    "manual" (/compact) always summarizes the older turns. When even the newest
    turns are over the limit, their tool traffic is trimmed too. A failed summary
    request leaves the trimming in place and says why in `summary_error`.
    """
    original = conversation
    rough_before = estimate_tokens(system, original)
    before = tokens_before if tokens_before is not None else rough_before
    scale = before / rough_before if rough_before else 1.0  # how far chars/4 is off here

    def tokens(messages: list[Message]) -> int:
        return int(estimate_tokens(system, messages) * scale)

    split = recent_start(original, policy.keep_recent_turns)
    conversation, trimmed = trim_tool_traffic(original, 0, split, policy.keep_chars)
    summarized, error = 0, None
    if split and (reason == "manual" or tokens(conversation) > policy.target_tokens):
        try:
            summary = summarize(conversation[:split])
        except ProviderError as failure:
            error = str(failure)
        else:
            conversation = summary_messages(summary) + conversation[split:]
            summarized = split
    if tokens(conversation) > policy.trigger_tokens:
        conversation, more = trim_tool_traffic(
            conversation, 0, len(conversation), policy.keep_chars
        )
        trimmed += more
    if not trimmed and not summarized:
        if error is None:
            return None
        return Compaction(reason, 0, 0, before, before, error, original)
    return Compaction(
        reason, trimmed, summarized, before, tokens(conversation), error, conversation
    )
