"""Custom slash commands: Markdown prompt files, as Claude Code and opencode keep them.

`files.py` finds them (a project's `.caretz/commands/`, the user's `commands/` next to
profiles.json, a project's `.claude/commands/`) and names them (`frontend/test.md` is
`/frontend:test`); `markdown.py` reads the front matter; `expand.py` fills in
`$ARGUMENTS` and `$1`…`$9`; `inline.py` finds the `!`command`` spans and `@path`
words that app/command_expansion.py runs and reads. See docs/commands.md.
"""
