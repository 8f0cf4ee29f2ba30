"""A scheduled job as one tagged crontab line, and back.

    */10 * * * * cd '/work/app' && CARETZ_DATA_DIR='…' PATH='…' '/usr/bin/python3' -m caretz
        --job 3fa9c1 --profile general … -p 'is CI green yet?' >> '…/3fa9c1.log' 2>&1 # caretz-job:3fa9c1

The crontab itself is the list of jobs: nothing else is stored. The trailing
`# caretz-job:ID` is a shell comment cron passes to sh, which ignores it. cron
turns an unescaped `%` into a newline, so every `%` of the command is written `\\%`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

TAG = "# caretz-job:"
_TAGGED = re.compile(r"^(?P<body>.*\S)\s+# caretz-job:(?P<id>[0-9a-f]+)\s*$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True, kw_only=True)
class Job:
    id: str
    schedule: str  # five cron fields, or a macro such as @daily
    workdir: Path
    argv: list[str]  # the caretz run: python, -m caretz, its flags
    log: Path  # where its output goes
    env: dict[str, str] = field(default_factory=dict)  # set for the run (never a key)
    installed: str = ""  # read back from a crontab: the command as cron hands it to sh

    def command(self) -> str:
        """The shell command cron runs, before cron's `%` escaping."""
        assignments = [f"{name}={shlex.quote(value)}" for name, value in self.env.items()]
        run = " ".join([*assignments, *(shlex.quote(arg) for arg in self.argv)])
        return f"cd {shlex.quote(str(self.workdir))} && {run} >> {shlex.quote(str(self.log))} 2>&1"

    def line(self) -> str:
        return f"{self.schedule} {cron_escape(self.command())} {TAG}{self.id}"

    def option(self, name: str) -> str | None:
        """The value of one of the run's options (`-p`, `--goal`, `--profile`)."""
        for position, arg in enumerate(self.argv[:-1]):
            if arg == name:
                return self.argv[position + 1]
        return None


def cron_escape(command: str) -> str:
    return command.replace("%", "\\%")


def cron_unescape(command: str) -> str:
    """The command as cron hands it to sh: `\\%` becomes `%`."""
    return command.replace("\\%", "%")


def job_ids(table: str) -> list[str]:
    """The IDs of every caretz line in `table`, readable or not."""
    return [match["id"] for line in table.splitlines() if (match := _TAGGED.match(line))]


def read_job(line: str) -> Job | None:
    """The job on a caretz line; None for any other line, or one edited past reading."""
    match = _TAGGED.match(line)
    if match is None:
        return None
    body = match["body"].strip()
    count = 1 if body.startswith("@") else 5
    words = body.split(None, count)
    if len(words) <= count:
        return None
    installed = cron_unescape(words[count])
    try:
        tokens = shlex.split(installed)
    except ValueError:
        return None
    return _job_from(match["id"], " ".join(words[:count]), tokens, installed)


def _job_from(job_id: str, schedule: str, tokens: list[str], installed: str) -> Job | None:
    if len(tokens) < 6 or tokens[0] != "cd" or tokens[2] != "&&" or tokens[-1] != "2>&1":
        return None
    if tokens[-3] != ">>":
        return None
    rest = tokens[3:-3]
    env: dict[str, str] = {}
    while rest and _ASSIGNMENT.match(rest[0]):
        name, _, value = rest.pop(0).partition("=")
        env[name] = value
    if not rest:
        return None
    return Job(
        id=job_id,
        schedule=schedule,
        workdir=Path(tokens[1]),
        argv=rest,
        log=Path(tokens[-2]),
        env=env,
        installed=installed,
    )


def jobs_in(table: str) -> list[Job]:
    return [job for line in table.splitlines() if (job := read_job(line)) is not None]


def with_job(table: str, job: Job) -> str:
    """`table` with `job`'s line added at the end; every other line kept as it was."""
    if table and not table.endswith("\n"):
        table += "\n"
    return table + job.line() + "\n"


def without_job(table: str, job_id: str) -> str:
    """`table` without the line of `job_id`; every other line kept as it was."""
    kept = [
        line
        for line in table.splitlines(keepends=True)
        if (match := _TAGGED.match(line.rstrip("\n"))) is None or match["id"] != job_id
    ]
    return "".join(kept)
