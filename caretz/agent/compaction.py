"""Compaction: keep a long conversation inside the model's context window.

Summarize first, trim only what is still too big. The older steps (each model reply with
its tool results, and the user's messages) are replaced by a summary the session's model
writes; the newest steps stay exactly as they were, the newest tool results always. The
summary message also carries, word for word, what must not be lost: the task the kept
steps work on (the user's prompt, when the kept part starts inside a turn), the plan as
last set with `todo`, the files changed so far, and the instructions of every skill
loaded (each `<skill_content>` block, once). Only if the result is still over the trigger
(or the summary request failed) are older tool outputs and long arguments cut to their
head and tail; the newest step is cut only when the provider refused the prompt and
nothing else was enough (`shorten_newest`, agent/overflow.py).

The system prompt (caretz's instructions, the project's AGENTS.md, the skills' catalog) is
not part of the conversation, so it is never trimmed or summarized: every request after
a compaction carries it intact. Each compaction is a `Session.Compacted` event holding
the resulting conversation, so a resumed session carries on from it. The functions here
take the conversation, the system prompt and a way to get a summary; `Agent.compact`
applies the result to the agent and logs it.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from dataclasses import field
from typing import Any, Literal

from caretz.agent import overflow
from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import Message, ToolCall, Usage
from caretz.plan import plan_lines
from caretz.providers.base import ProviderError
from caretz.tools.todo import latest_plan

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4  # role markers and framing, per message
DEFAULT_CONTEXT_WINDOW = 200_000

SUMMARY_HEADER = (
    "[This session was compacted to fit the model's context window. "
    "What happened before the messages below, as summarized then:]"
)
SUMMARY_ACK = "Understood. I will carry on from this summary and the messages that follow."
TRIM_MARKER = "[… {count} characters trimmed here to save context …]"
TASK_HEADER = (
    "[The task the messages below carry on with, as the user gave it "
    "(the summary above covers the steps taken for it so far):]"
)
PLAN_HEADER = "The plan, as last set with the todo tool:"
FILES_HEADER = "Files changed so far: "
SKILLS_HEADER = "Skills loaded so far, their instructions as loaded:"  # (skills/prompt.py)
SKILL_BLOCK = re.compile(r'<skill_content name="([a-z0-9-]+)">.*?</skill_content>', re.DOTALL)
FILE_CHANGING_TOOLS = frozenset({"write", "edit", "multi_edit"})  # each names its `path`

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

# "overflow": the provider said the prompt is too long (the request is retried once).
Reason = Literal["auto", "manual", "overflow"]
# Summarizes older messages (the session's model writes it); raises ProviderError.
Summarize = Callable[[list[Message]], str]


@lazy_dataclass(frozen=True, kw_only=True)
class CompactionPolicy:
    """When to compact and how much to keep."""

    context_window: int = DEFAULT_CONTEXT_WINDOW
    trigger_ratio: float = 0.8  # compact once the estimate passes this share of the window
    target_ratio: float = 0.5  # "auto" summarizes only a conversation over this share
    keep_ratio: float = 0.25  # the newest steps kept whole, up to this share (the newest always)
    keep_recent_turns: int = 2  # nothing older than the newest turns is kept whole
    keep_chars: int = 2_000  # an older tool output or argument keeps this many characters
    summary_max_tokens: int = 4_096
    reserved_output: int = 0  # the reply's max_tokens: the prompt leaves room for it

    @property
    def trigger_tokens(self) -> int:
        window = self.context_window
        # Providers refuse a prompt that leaves less room than max_tokens for the reply;
        # a small window's server (llama.cpp) shortens the reply to fit by itself.
        room = window - self.reserved_output if self.reserved_output <= window // 2 else window
        return min(int(window * self.trigger_ratio), room)

    @property
    def target_tokens(self) -> int:
        return int(self.context_window * self.target_ratio)

    @property
    def keep_tokens(self) -> int:
        return int(self.context_window * self.keep_ratio)

    @property
    def transcript_chars(self) -> int:
        """The most of the old conversation sent to be summarized (half the window)."""
        return self.context_window * CHARS_PER_TOKEN // 2


@lazy_dataclass(frozen=True, kw_only=True)
class Compaction:
    """What one compaction did."""

    reason: Reason
    trimmed: int  # tool outputs and arguments cut to head and tail
    summarized: int  # messages replaced by the summary
    tokens_before: int
    tokens_after: int
    summary_error: str | None = None  # the summary was wanted but the request failed
    conversation: list[Message] = field(default_factory=list)  # the result
    shortened: int = 0  # the newest step's results cut to fit the window (agent/overflow.py)

    @property
    def changed(self) -> bool:
        return bool(self.trimmed or self.summarized or self.shortened)


# -- estimating ---------------------------------------------------------------------


def message_chars(message: Message) -> int:
    chars = len(message.content) + len(message.thinking)
    chars += sum(image.tokens for image in message.images) * CHARS_PER_TOKEN
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
        self._tokens = used.input_tokens + used.cache_read_tokens
        self._tokens += used.cache_write_tokens + used.output_tokens
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


IMAGES_TRIMMED = "[the image this call returned was trimmed from the context]"


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
            if message.images:  # an old screenshot is read again when needed
                content += f"\n{IMAGES_TRIMMED}"
            if content != message.content:
                result[index] = dataclasses.replace(message, content=content, images=[])
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
    return 0 if len(starts) <= keep_turns else starts[-keep_turns]


def newest_step(conversation: list[Message]) -> int:
    """Where the newest step begins: the newest tool-calling reply of the newest turn
    (its results follow it), else the newest user message; it is never cut."""
    start = 0
    for index, message in enumerate(conversation):
        if message.role == "user" or (message.role == "assistant" and message.tool_calls):
            start = index
    return start


def keep_start(conversation: list[Message], policy: CompactionPolicy, scale: float = 1.0) -> int:
    """Where the part kept whole begins: the newest step, and the steps before it that
    fit in `policy.keep_tokens`, none older than the newest `keep_recent_turns` turns.
    A step begins at a user message or a reply; 0: there is nothing older to summarize.
    `scale` corrects the four-characters-a-token estimate to the provider's count."""
    start = newest_step(conversation)
    earliest = recent_start(conversation, policy.keep_recent_turns)
    kept = estimate_tokens("", conversation[start:])
    for index in range(start - 1, earliest - 1, -1):
        kept += estimate_tokens("", conversation[index : index + 1])
        if conversation[index].role == "tool":
            continue
        if kept * scale > policy.keep_tokens:
            break
        start = index
    return start


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


def summary_messages(summary: str, task: str | None = None) -> list[Message]:
    """What stands in for the summarized messages. Roles keep alternating: before a
    kept user message, the summary and an acknowledgement; before a kept reply (the
    kept part starts inside a turn), one user message with the summary and the task."""
    body = f"{SUMMARY_HEADER}\n\n{summary}"
    if task is None:
        return [Message(role="user", content=body), Message(role="assistant", content=SUMMARY_ACK)]
    return [Message(role="user", content=f"{body}\n\n{TASK_HEADER}\n\n{task}")]


def kept_facts(older: list[Message], kept: list[Message]) -> str:
    """What the summary carries word for word: the plan as last set (unless the kept
    messages set it again), every file changed so far and every skill loaded, earlier
    summaries' included."""
    files: list[str] = []
    plan_text = ""
    for message in older:
        if message.role == "user" and message.content.startswith(SUMMARY_HEADER):
            files += _listed_files(message.content)
            plan_text = _section(message.content, PLAN_HEADER) or plan_text
        for call in message.tool_calls:
            path = call.arguments.get("path")
            if call.name in FILE_CHANGING_TOOLS and isinstance(path, str):
                files.append(path)
    plan = latest_plan(older)
    if plan:
        plan_text = "\n".join(plan_lines(plan))
    if latest_plan(kept):
        plan_text = ""
    parts = [f"{PLAN_HEADER}\n{plan_text}"] if plan_text else []
    if files:
        parts.append(FILES_HEADER + ", ".join(dict.fromkeys(files)))
    skills = skill_blocks(older, kept)
    parts += ["\n\n".join([SKILLS_HEADER, *skills])] if skills else []
    return "".join(f"\n\n{part}" for part in parts)


def skill_blocks(older: list[Message], kept: list[Message]) -> list[str]:
    """Each skill's instructions loaded in `older` (summaries' too), once; not those kept."""
    kept_names = {name for message in kept for name in SKILL_BLOCK.findall(message.content)}
    found = [match for message in older for match in SKILL_BLOCK.finditer(message.content)]
    first = {match.group(1): match.group(0) for match in reversed(found)}  # the earliest wins
    names = dict.fromkeys(match.group(1) for match in found)  # in the order loaded
    return [first[name] for name in names if name not in kept_names]


def _listed_files(summary: str) -> list[str]:
    for line in summary.splitlines():
        if line.startswith(FILES_HEADER):
            return [name for name in line[len(FILES_HEADER) :].split(", ") if name]
    return []


def _section(summary: str, header: str) -> str:
    """The lines after `header` up to the next blank line."""
    _, found, rest = summary.partition(f"\n{header}\n")
    return rest.split("\n\n", 1)[0].strip() if found else ""


def only_summary(messages: list[Message]) -> bool:
    """Whether `messages` are an earlier compaction's summary and nothing more (the kept
    part alone is over the window: summarizing the summary again would not help)."""
    return all(
        message.content.startswith(SUMMARY_HEADER) or message.content == SUMMARY_ACK
        for message in messages
    )


def task_of(older: list[Message]) -> str:
    """The prompt of the turn the kept part carries on (the newest user message before it)."""
    for message in reversed(older):
        if message.role == "user":
            _, found, task = message.content.partition(f"{TASK_HEADER}\n\n")
            return task if found else message.content
    return ""


# -- the whole step ----------------------------------------------------------------------


def compact(
    conversation: list[Message],
    system: str,
    policy: CompactionPolicy,
    summarize: Summarize,
    *,
    tokens_before: int | None = None,
    reason: Reason = "auto",
    shorten_newest: bool = False,
) -> Compaction | None:
    """A smaller copy of `conversation`; None when there was nothing to do.

    The older steps are summarized ("auto" once over the target, "manual" and
    "overflow" always), the newest kept whole. If that is still over the trigger, or
    the summary request failed (`summary_error` says why), older tool traffic is cut
    to head and tail; the newest step only with `shorten_newest`, when still over.
    """
    original = conversation
    rough_before = estimate_tokens(system, original)
    before = tokens_before if tokens_before is not None else rough_before
    scale = before / rough_before if rough_before else 1.0  # how far chars/4 is off here

    def tokens(messages: list[Message]) -> int:
        return int(estimate_tokens(system, messages) * scale)

    split = keep_start(original, policy, scale)
    protected = newest_step(original)  # the newest step: never cut
    summarized, error = 0, None
    due = reason != "auto" or tokens(original) > policy.target_tokens
    if split and due and not only_summary(original[:split]):
        older, kept = original[:split], original[split:]
        try:
            summary = summarize(older) + kept_facts(older, kept)
        except ProviderError as failure:
            error = str(failure)
        else:
            task = task_of(older) if kept[0].role == "assistant" else None
            conversation = summary_messages(summary, task) + kept
            protected += len(conversation) - len(original)
            summarized = split
    trimmed = 0
    if tokens(conversation) > policy.trigger_tokens or error is not None:
        conversation, trimmed = trim_tool_traffic(conversation, 0, protected, policy.keep_chars)
    # The newest step is cut only when asked (the provider refused and nothing else freed
    # enough: agent/overflow.py).
    excess = tokens(conversation) - int(policy.trigger_tokens * 0.9)
    shortened = 0
    if shorten_newest and tokens(conversation) > policy.trigger_tokens:
        excess_chars = int(excess / max(scale, 0.01)) * CHARS_PER_TOKEN
        conversation, shortened = overflow.shorten_newest(conversation, protected, excess_chars)
    unchanged = not trimmed and not summarized and not shortened
    if unchanged and error is None:
        return None
    return Compaction(
        reason=reason,
        trimmed=trimmed,
        summarized=summarized,
        tokens_before=before,
        tokens_after=before if unchanged else tokens(conversation),
        summary_error=error,
        conversation=original if unchanged else conversation,
        shortened=shortened,
    )
