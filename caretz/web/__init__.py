"""The web tools: `web_fetch` (a URL read outside the sandbox, under the permission rules,
turned into Markdown) and the client `web_search` (a configured SearXNG, Brave or Tavily).

docs/web.md is the user's guide; the provider's own server-side search lives with the
providers, which only need to be told to offer it.
"""
