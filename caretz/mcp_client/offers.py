"""A server's resources and prompts over its SDK session: listing them, reading a
resource, getting a prompt. Loaded with connection.py (the SDK's other user), whose
`ask` runs these on the manager's loop.

What a server lists passes caretz/inbound.py like its tools do. A server that says it has
resources or prompts and then fails to list its prompts still starts: its prompts are
none. An answer that asks for more input (`InputRequiredResult`) is refused: caretz has
no way to ask for it.
"""

from __future__ import annotations

from typing import Any

from mcp import ClientSession, MCPError
from mcp_types import GetPromptResult, PaginatedRequestParams, ReadResourceResult

from caretz import inbound
from caretz.mcp_client.model import Offers, PromptArgument, RemotePrompt, RemoteResource

MAX_PAGES = 50


class NotAnAnswer(Exception):
    """The server answered with something other than what was asked for."""


async def offers(session: ClientSession) -> Offers:
    """What the server said it has (its capabilities), its prompts listed."""
    capabilities = session.server_capabilities
    if capabilities is None:
        return Offers()
    prompts: tuple[RemotePrompt, ...] = ()
    if capabilities.prompts is not None:
        try:
            prompts = tuple(await _pages(session.list_prompts, "prompts", _prompt))
        except (MCPError, ValueError):
            prompts = ()
    return Offers(capabilities.resources is not None, prompts)


async def list_resources(session: ClientSession) -> list[RemoteResource]:
    return await _pages(session.list_resources, "resources", _resource)


async def read_resource(session: ClientSession, uri: str) -> list[Any]:
    """The resource's contents (text or blob, each with its uri and mime type)."""
    result = await session.read_resource(uri, allow_input_required=True)
    if not isinstance(result, ReadResourceResult):
        raise NotAnAnswer(f"the server asked for more input ({type(result).__name__})")
    return list(result.contents)


async def get_prompt(session: ClientSession, name: str, arguments: dict[str, str]) -> list[Any]:
    """The prompt's messages (each with its role and content block)."""
    result = await session.get_prompt(name, arguments, allow_input_required=True)
    if not isinstance(result, GetPromptResult):
        raise NotAnAnswer(f"the server asked for more input ({type(result).__name__})")
    return list(result.messages)


async def _pages(lister: Any, field: str, read: Any) -> list[Any]:
    found: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        listed = await lister(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        found += [read(item) for item in getattr(listed, field)]
        cursor = listed.next_cursor
        if not cursor:
            break
    return found


def _resource(item: Any) -> RemoteResource:
    return RemoteResource(
        inbound.text(str(item.uri)),
        inbound.text(item.name or ""),
        inbound.text(item.description or ""),
        inbound.text(item.mime_type or ""),
    )


def _prompt(item: Any) -> RemotePrompt:
    arguments = tuple(
        PromptArgument(
            inbound.text(argument.name),
            inbound.text(argument.description or ""),
            argument.required is True,
        )
        for argument in item.arguments or ()
    )
    return RemotePrompt(inbound.text(item.name), inbound.text(item.description or ""), arguments)
