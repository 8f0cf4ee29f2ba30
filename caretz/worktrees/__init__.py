"""caretz's git worktrees: a session or a batch task in a checkout of its own.

`git.py` runs the trusted git (caretz/trusted.py) on the user's repository; `manage.py`
makes, lists and removes the worktrees under `<repository>/.caretz/worktrees/NAME`, each
on its branch `caretz/NAME`.
"""
