"""`caretz acp`: caretz as an Agent Client Protocol agent over stdio (docs/acp.md).

Only the `acp` subcommand imports this package, and with it the ACP SDK."""
