"""`session/load`: a caretz session's log replayed as the updates the editor would have
seen: the user's prompts, the model's replies and reasoning, the tool calls with their
diffs and output, the plan, and the loop guard's notices, in the order they happened."""

from __future__ import annotations

from pathlib import Path

from caretz.acp.translate import (
    EventTranslator,
    Update,
    agent_text,
    agent_thought,
    by_main_agent,
    user_text,
)
from caretz.session.events import read_events
from caretz.session.records.base import Record
from caretz.session.records.loop import ModelReplied, TurnStarted


def replay(events_path: Path, translator: EventTranslator) -> list[Update]:
    updates: list[Update] = []
    for event in read_events(events_path):
        updates += replayed(event, translator)
    return updates


def replayed(event: Record, translator: EventTranslator) -> list[Update]:
    if isinstance(event, TurnStarted):
        shown = by_main_agent(event) and event.from_user
        return [user_text(event.prompt or "")] if shown else []
    if isinstance(event, ModelReplied):
        if not by_main_agent(event):
            return []
        message = event.message or {}
        thinking, text = message.get("thinking") or "", message.get("content") or ""
        thought: list[Update] = [agent_thought(str(thinking))] if thinking else []
        return thought + ([agent_text(str(text))] if text else [])
    return translator.updates(event)
