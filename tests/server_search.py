"""The provider's own web search as the loopback model server streams it (tests/modelserver.py):
Anthropic's `server_tool_use` and `web_search_tool_result` blocks, OpenAI Responses'
`web_search_call` item, shaped as the real APIs send them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

Block = tuple[dict[str, Any], list[dict[str, Any]]]


def anthropic_blocks(
    block_id: str,
    query: str,
    hits: Sequence[tuple[str, str]],
    pieces: Callable[[str], list[str]],
) -> Iterator[Block]:
    """The search call (its input streamed as JSON pieces), then its result (whole)."""
    arguments = json.dumps({"query": query})
    deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(arguments)]
    yield {"type": "server_tool_use", "id": block_id, "name": "web_search", "input": {}}, deltas
    results = [
        {
            "type": "web_search_result",
            "url": url,
            "title": title,
            "encrypted_content": f"enc-{block_id}-{number}",
            "page_age": None,
        }
        for number, (url, title) in enumerate(hits, start=1)
    ]
    yield {"type": "web_search_tool_result", "tool_use_id": block_id, "content": results}, []


def responses_item(item_id: str, query: str) -> tuple[dict[str, Any], list[tuple[str, dict]]]:
    """The web_search_call item as added, and the progress events the API sends for it."""
    item = {"type": "web_search_call", "id": item_id, "status": "in_progress"}
    progress = [
        (f"response.web_search_call.{stage}", {"item_id": item_id})
        for stage in ("in_progress", "searching", "completed")
    ]
    item["action"] = {"type": "search", "query": query}
    return item, progress


def finished_call(item: dict[str, Any]) -> dict[str, Any]:
    return {**item, "status": "completed"}
