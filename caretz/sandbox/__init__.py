"""The OS sandbox for shell commands and the path roots for the in-process file tools.

policy.py      what a command may see and write (plain data)
bwrap.py       the policy as a bubblewrap command line
landlock.py    the Landlock launcher (standard library only, runs as a script)
landlock_rules.py  the policy as the launcher's rule set
detect.py      which backend works here and what it enforces (`caretz sandbox check`)
runner.py      the one object the bash tool asks for a command line and an environment
paths.py       the path checks for read/write/edit/glob/grep
envfilter.py   the environment a command gets: no API keys, no secrets
"""
