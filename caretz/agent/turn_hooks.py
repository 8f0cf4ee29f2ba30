"""What the main agent asks its hooks around a turn, as a protocol (the runtime wires
caretz.hooks' `SessionHooks`; the agent never imports it).

- `prompt_submitted`: before a prompt from the user is sent (UserPromptSubmit); the
  prompt may come back with context added, or blocked with the reason.
- `stopping`: when a turn would end with an answer (Stop); a message back means the
  work goes on with it as an automated turn, `continuations` counts those already made
  (the hooks bound them). The loop guard sees those turns as automated ones, so its
  same-answer count applies across them.
- `subagent_stopping`: as `stopping`, when a subagent's turn would end with its answer
  (SubagentStop); `agent` is its name, `agent_id` one id for all of its turns.
- `compacting`: before the conversation is compacted (PreCompact); a reason back
  means the compaction does not happen.
"""

from __future__ import annotations

from typing import Protocol


class PromptOutcome(Protocol):
    @property
    def prompt(self) -> str: ...  # what to send: the prompt, with any hook context added

    @property
    def blocked(self) -> str | None: ...  # why a hook blocked it; None: send it


class TurnHooks(Protocol):
    def prompt_submitted(self, prompt: str) -> PromptOutcome: ...

    def stopping(self, answer: str, continuations: int) -> str | None: ...

    def subagent_stopping(
        self, agent: str, agent_id: str, answer: str, continuations: int
    ) -> str | None: ...

    def compacting(self, trigger: str) -> str | None: ...
