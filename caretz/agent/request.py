"""What one request of a turn sends: the conversation, then the guard's trailing messages
(never stored), the tools, and how the request goes in the session log."""

from __future__ import annotations

from caretz.agent.parts import AgentConfig, AgentParts, Conversation
from caretz.messages import Message, ModelRequest
from caretz.session.records import loop as records


def turn_request(
    config: AgentConfig,
    parts: AgentParts,
    conversation: Conversation,
    trailing: list[Message],
    final_report: bool,
) -> tuple[ModelRequest, records.ModelRequested]:
    """The request and its `Model.Request` record."""
    request = ModelRequest(
        model=config.model_id,
        system=config.system,
        messages=[*conversation.messages, *trailing],
        # The final report may not call tools. Anthropic still needs the tools declared
        # when the history holds tool calls, so they are forbidden with tool_choice
        # "none" rather than left out (OpenAI leaves them out).
        tools=parts.tools.specs(),
        tool_choice="none" if final_report else None,
        reasoning=config.reasoning,
        max_tokens=config.max_tokens,
    )
    record = records.ModelRequested(
        model=config.model_ref,
        messages=len(request.messages),
        tools=len(request.tools),
        trailing=[message.content for message in trailing],
    )
    return request, record
