"""MCP servers: their config, starting them, and their tools in the session's registry.

Named `mcp_client` so that it can never shadow the `mcp` SDK package in an import.
Only `connection.py` imports the SDK, and only a session with a server to start
loads it (docs/mcp.md).
"""
