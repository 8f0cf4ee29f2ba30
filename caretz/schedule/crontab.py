"""The user's crontab, read with `crontab -l` and written with `crontab -`.

Always through the real `crontab` command, which checks the whole table and
refuses it if any line is bad, leaving the installed one as it was.
`CARETZ_CRONTAB` names another command to run instead (it must still drive a
real crontab: the test suite points it at `crontab` inside a private spool).
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from caretz.inbound import ascii_number
from caretz.trusted import find_program, untrusted_roots

MISSING = "crontab not found: install the cron package (apt install cron)"
NO_DAEMON = (
    "note: no cron daemon is running on this machine, so no job starts until one does "
    "(sudo service cron start)"
)
# The names cron daemons run under (Debian's cron, cronie, busybox, fcron, dcron).
_DAEMONS = frozenset({"cron", "crond", "fcron", "dcron"})
_TIMEOUT_S = 30


class CrontabError(Exception):
    """The crontab could not be read or written; the installed one is unchanged.

    `exit_code` 2 when there is no crontab command to run (the user installs one),
    1 when it ran and failed."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code


def crontab_command(env: Mapping[str, str]) -> list[str]:
    """The command that reads and writes the user's crontab; raises CrontabError when
    there is none."""
    override = env.get("CARETZ_CRONTAB", "").strip()
    if override:
        command = shlex.split(override)
        if shutil.which(command[0]) is None:
            raise CrontabError(f"CARETZ_CRONTAB: {command[0]!r} not found", exit_code=2)
        return command
    # Not one a command of a session in this folder could have planted (.venv/bin).
    found = find_program("crontab", env.get("PATH", ""), untrusted_roots([Path.cwd()]))
    if found.path is None:
        raise CrontabError(found.notice() or MISSING, exit_code=2)
    return [found.path]


class Crontab:
    def __init__(self, command: list[str]):
        self.command = command

    def read(self) -> str:
        """The installed table ("" when the user has none)."""
        done = self._run("-l", "")
        if done.returncode == 0:
            return done.stdout
        if "no crontab for" in done.stderr:
            return ""
        raise CrontabError(f"crontab -l failed: {_first_line(done.stderr)}")

    def write(self, table: str) -> None:
        """Install `table` whole; on refusal the installed table stays as it was."""
        done = self._run("-", table)
        if done.returncode != 0:
            raise CrontabError(
                f"crontab refused the new table, so yours is unchanged: {_first_line(done.stderr)}"
            )

    def _run(self, argument: str, stdin: str) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                [*self.command, argument],
                input=stdin,
                capture_output=True,
                text=True,
                timeout=_TIMEOUT_S,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise CrontabError(f"crontab could not run: {error}") from None


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return "; ".join(lines[:2]) or "(no message)"


def cron_daemon_running(proc: Path = Path("/proc")) -> bool | None:
    """Whether a cron daemon runs here, by the process names under `proc`; None where
    that cannot be told (no /proc)."""
    try:
        entries = [entry for entry in proc.iterdir() if ascii_number(entry.name) is not None]
    except OSError:
        return None
    for entry in entries:
        try:
            if _process_name(entry) in _DAEMONS:
                return True
        except (OSError, UnicodeDecodeError):
            continue  # a process that ended while it was read
    return False


def _process_name(entry: Path) -> str:
    name = (entry / "comm").read_text().strip()
    if name == "busybox":  # `busybox crond`: the applet is its first argument
        argv = (entry / "cmdline").read_bytes().split(b"\0")
        return argv[1].decode() if len(argv) > 1 else name
    return name
