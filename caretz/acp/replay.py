"""`session/load`: a caretz session's log replayed as the updates the editor would have
seen: the user's prompts, the model's replies and reasoning, the tool calls with their
diffs and output, the plan, and the loop guard's notices, in the order they happened."""

from __future__ import annotations

from pathlib import Path

from caretz.acp import events
from caretz.acp.translate import EventTranslator, Update, agent_text, agent_thought, user_text
from caretz.session.events import read_events


def replay(events_path: Path, translator: EventTranslator) -> list[Update]:
    updates: list[Update] = []
    for event in read_events(events_path):
        updates += replayed(event, translator)
    return updates


def replayed(event: events.Event, translator: EventTranslator) -> list[Update]:
    kind = events.kind(event)
    if kind == "Turn.Started":
        turn = events.turn_started(event)
        main = turn.agent == events.MAIN_AGENT
        return [user_text(turn.prompt)] if main and turn.from_user else []
    if kind == "Model.Response":
        reply = events.model_response(event)
        if reply.agent != events.MAIN_AGENT:
            return []
        thought = [agent_thought(reply.thinking)] if reply.thinking else []
        return thought + ([agent_text(reply.text)] if reply.text else [])
    return translator.updates(event)
