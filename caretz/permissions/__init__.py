"""Permission rules: which tool calls run, ask or are refused, decided on the shell's grammar.

- `shell`: every simple command a bash command line would run (tree-sitter-bash).
- `rules`: the rule syntax (`Bash(git push:*)`, `Read(./.env*)`, bare tool names) and
  the conversion of the loop guard's `disallowedTools` into deny rules.
- `policy`: `RuleSet.check(tool, args, cwd)` → `Decision` (deny beats ask beats allow).
- `proposals`: the rule that "yes, always" saves, and writing it to `.caretz/settings.json`.
- `modes`: auto, ask, read-only, plan, yolo: what a call does when no rule decides it.
- `plan_mode`: which command lines plan mode lets run (each part shown to change nothing).

Nothing is imported or parsed until a check needs it: the parser loads on the first
bash command it is asked about.
"""
