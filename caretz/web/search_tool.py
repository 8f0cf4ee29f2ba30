"""The client `web_search` tool: a query sent to the backend the profile configures.

It is offered only where the model's provider has no search of its own in use (see
runtime/web.py). Its effect is `read` as far as asking goes: the query goes only to the
service the user chose, so it runs unasked; a `WebSearch` deny or ask rule still decides.
"""

from __future__ import annotations

from typing import Any

from caretz.messages import ToolSpec
from caretz.tools.base import Param, ToolArgumentError, ToolContext, ToolResult, object_schema
from caretz.web.search import Backend, Hit, SearchFailed

DESCRIPTION = (
    "Search the web. Returns titles, URLs and short snippets; read a result with web_fetch. "
    "Use it for current information: documentation, error messages, releases."
)
MAX_QUERY_CHARS = 400


class WebSearchTool:
    effect = "read"  # runs unasked: the query goes only to the backend the user configured
    spec = ToolSpec(
        "web_search",
        DESCRIPTION,
        object_schema(
            query=Param("string", "What to search for", required=True),
            count=Param("integer", "How many results (default and most: webSearch.maxResults)"),
        ),
    )

    def __init__(self, backend: Backend, max_results: int):
        self.backend = backend
        self.max_results = max_results

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = " ".join(str(args["query"]).split())
        if not query:
            raise ToolArgumentError("query is empty")
        if len(query) > MAX_QUERY_CHARS:
            raise ToolArgumentError(f"query is longer than {MAX_QUERY_CHARS} characters")
        count = min(max(int(args.get("count", self.max_results)), 1), self.max_results)
        try:
            hits = self.backend.search(query, count)
        except SearchFailed as failure:
            return ToolResult(ok=False, output=f"web_search failed: {failure}")
        return ToolResult(ok=True, output=results_text(query, hits, self.backend.name))


def results_text(query: str, hits: list[Hit], source: str) -> str:
    if not hits:
        return f"No results for {query!r} ({source})."
    lines = [f"Results for {query!r} ({source}):"]
    for number, hit in enumerate(hits, start=1):
        lines.append(f"{number}. {hit.title}\n   {hit.url}")
        if hit.snippet:
            lines.append(f"   {hit.snippet}")
    return "\n".join(lines)
