"""The room a turn's next tool results have in the model's context window.

The cap itself is decided in one place (tools/result_cap.py); the turn supplies what it
is derived from: the tokens left below the point where compaction starts, counted as the
larger of the context meter's figure (the provider's last count and an estimate for what
came after) and a rough count of everything a request sends (the system prompt, the
messages, the tools' specs), so a server that under-reports cannot widen the cap.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING

from caretz.agent.compaction import CHARS_PER_TOKEN, estimate_tokens
from caretz.agent.parts import AgentParts
from caretz.tools.base import ToolContext
from caretz.tools.result_cap import cap_chars

if TYPE_CHECKING:
    from caretz.agent.turn import Turn


def tool_context(turn: Turn, calls: int = 1) -> ToolContext:
    """The session's tool context with the cap each of `calls` results of `turn` gets now."""
    config, parts, conversation = turn.config, turn.parts, turn.conversation
    policy = parts.compaction
    if policy is None:
        return parts.tool_ctx
    measured = conversation.context.estimate(config.system, conversation.messages)
    rough = estimate_tokens(config.system, conversation.messages) + specs_tokens(parts)
    room = policy.trigger_tokens - max(measured, rough)
    return dataclasses.replace(parts.tool_ctx, output_limit_chars=cap_chars(room, calls))


def specs_tokens(parts: AgentParts) -> int:
    chars = sum(
        len(spec.name) + len(spec.description) + len(json.dumps(spec.parameters))
        for spec in parts.tools.specs()
    )
    return chars // CHARS_PER_TOKEN
