"""What the CLI's commands do, one module per command, as plain functions that return an
exit code: `run` (a run: the REPL or a headless one), `config` (`config show`),
`sessions` (`sessions list`/`show`), `rewind`, `sandbox` (`sandbox check`), `mcp`
(`mcp list`/`approve`), `hooks` (`hooks list`/`approve`).

Errors people can fix are caught here, at the edge, and become one line on stderr with
exit code 2 (`caretz.usage_error.fail`); everything below raises where the problem is.
"""
