"""Hooks: the user's commands run at points of a session, in Claude Code's format.

`config.py` is the `hooks` section (profiles.json and a project's `.caretz/settings.json`),
`matching.py` which hooks an event runs, `runner.py` one command in its own process
group, `output.py` what its exit code and stdout mean, `session.py` a session's hooks
and their events, `tool_hooks.py` the tool registry's PreToolUse and PostToolUse hooks.
See docs/hooks.md.
"""
