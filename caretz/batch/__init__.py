"""`caretz batch TASKS.jsonl`: many tasks on one machine, each a headless caretz run in a
git worktree of its own (docs/batch.md).

`tasks.py` reads and checks the tasks file, `results.py` is the results file (a line per
task, the per-task record), `child.py` one task's process, `runner.py` runs them N at a
time and stops them on Ctrl-C, `view.py` shows the progress and the closing table,
`command.py` is the command, `cli.py` its options, `launch.py` the child's entry point.
"""
