"""The view `caretz acp` gives the session: streamed text and every event, as updates.

It runs on the thread that runs the turn; `post` hands each update to the event loop,
which sends them in order. It also keeps what the prompt's stop reason needs to know
that the turn's outcome does not say (a refusal, a reply cut off at the output limit,
a prompt a hook blocked), and which call a permission question is about.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from caretz.acp.notices import from_caretz
from caretz.acp.translate import (
    EventTranslator,
    Update,
    agent_text,
    agent_thought,
    blocked_prompt,
    by_main_agent,
)
from caretz.messages import ToolCall
from caretz.session.records.base import HookRecord, Record
from caretz.session.records.loop import ModelOutputLimit, ModelReplied
from caretz.session.records.permissions import PermissionAsked

Post = Callable[[Update], None]


@dataclass
class TurnSigns:
    """What the records of one prompt's work said about how it ended."""

    refused: bool = False  # the main agent's last reply stopped on "refusal"
    output_limit: bool = False  # the turn ended on a reply cut off at maxTokens
    prompt_blocked: bool = False  # a UserPromptSubmit hook blocked the prompt


class AcpView:
    def __init__(self, post: Post, workspace: Path):
        self.post = post
        self.translator = EventTranslator(workspace)
        self.signs = TurnSigns()
        self.asked_call: ToolCall | None = None
        self.streamed = False  # text of the reply being streamed has gone out
        self.cancelling = False  # session/cancel came during this prompt

    # -- the session's View ----------------------------------------------------------
    def on_response_start(self) -> None:
        self.streamed = False

    def on_waiting(self, event: Any) -> None:
        pass  # an editor shows its own spinner while a prompt runs

    def on_text(self, text: str) -> None:
        self.streamed = True
        self.post(agent_text(text))

    def on_thinking(self, text: str) -> None:
        self.post(agent_thought(text))

    def on_retry(self, event: Any) -> None:
        # The editor cannot take streamed text back: say the reply starts again.
        if self.streamed and getattr(event, "discarded", None) is not None:
            line = "the reply broke off; it is asked for again and starts over below"
            self.post(agent_text(from_caretz([line])))
        self.streamed = False

    def on_event(self, event: Record) -> None:
        self.note(event)
        for update in self.translator.updates(event):
            self.post(update)

    # -- what the stop reason and the permission question need ------------------------
    def begin_prompt(self) -> None:
        self.signs = TurnSigns()
        self.cancelling = False

    def note(self, event: Record) -> None:
        if isinstance(event, PermissionAsked):
            self.asked_call = self.translator.calls.get(event.call_id)
        elif isinstance(event, ModelReplied) and by_main_agent(event):
            self.signs.refused = event.stop_reason == "refusal"
        elif isinstance(event, ModelOutputLimit) and by_main_agent(event):
            self.signs.output_limit = event.action == "ended"
        elif isinstance(event, HookRecord) and blocked_prompt(event) is not None:
            self.signs.prompt_blocked = True
