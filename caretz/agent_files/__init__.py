"""Named subagents' files: Markdown with YAML front matter, as Claude Code, opencode and
GitHub Copilot write them (`definition.py`), and the folders they are found in (`folders.py`).
Plain data only: what an agent may do is decided where it runs (caretz/agent/named.py)."""
