"""Background jobs: long-running commands (a dev server) the agent starts on purpose.

A job is started like any command (the same sandbox, environment filter and process
hygiene) but the tool call returns at once; its output goes to a RollingLog the
`job_output` tool reads, and `job_stop` ends it with everything it started. The
session stops every job when it ends; inside the sandbox a job also dies with caretz
(SIGTERM, SIGHUP, kill -9), and with the sandbox off the launcher kills it then.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.lazy_dataclass import lazy_dataclass
from caretz.tools.output import PipeReader, RollingLog
from caretz.tools.process import Process, end_group, start_shell

if TYPE_CHECKING:
    from caretz.sandbox.runner import Sandbox

MAX_RUNNING_JOBS = 8


class JobError(Exception):
    """A job that cannot be started or found; the message is one line for the model."""


@lazy_dataclass(kw_only=True)
class BackgroundJob:
    id: str
    command: str
    process: Process
    log: RollingLog
    started: float  # the table's clock
    confined: bool  # False: run outside the sandbox, as the user allowed
    stopped: bool = False  # ended by job_stop or the session's end
    read_offset: int = 0  # where the last job_output read stopped

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def state(self) -> str:
        """'running', 'stopped', or 'exited with code N'."""
        if self.running:
            return "running"
        if self.stopped:
            return "stopped"
        return f"exited with code {self.process.returncode}"


class JobTable:
    """The session's background jobs, by id (`j1`, `j2`, …)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, grace_s: float = 1.0):
        self.clock = clock
        self.grace_s = grace_s
        self._jobs: dict[str, BackgroundJob] = {}
        self._lock = threading.Lock()

    def start(
        self,
        command: str,
        workspace: Path,
        sandbox: Sandbox | None,
        *,
        confined: bool = True,
        cwd: Path | None = None,
    ) -> BackgroundJob:
        """Start `command` in the background; raises JobError (too many) or OSError."""
        running = [job.id for job in self.jobs() if job.running]
        if len(running) >= MAX_RUNNING_JOBS:
            raise JobError(
                f"{len(running)} background jobs are running ({', '.join(running)}); "
                "stop one with job_stop first"
            )
        process = start_shell(command, workspace, sandbox, confined=confined, cwd=cwd)
        assert process.stdout is not None
        log = RollingLog()
        PipeReader(process.stdout, log.add, done=log.close).start()
        with self._lock:
            job = BackgroundJob(
                id=f"j{len(self._jobs) + 1}",
                command=command,
                process=process,
                log=log,
                started=self.clock(),
                confined=confined,
            )
            self._jobs[job.id] = job
        return job

    def get(self, job_id: str) -> BackgroundJob:
        job = self._jobs.get(job_id.strip())
        if job is None:
            raise JobError(f"no job {job_id!r}: {self.summary()}")
        return job

    def jobs(self) -> list[BackgroundJob]:
        with self._lock:
            return list(self._jobs.values())

    def stop(self, job: BackgroundJob) -> bool:
        """End the job and everything it started; False when it had already exited."""
        if not job.running:
            return False
        job.stopped = True
        end_group(job.process, self.grace_s)
        return True

    def stop_all(self) -> list[BackgroundJob]:
        """Stop every running job (the session is ending); returns those stopped."""
        return [job for job in self.jobs() if self.stop(job)]

    def age_s(self, job: BackgroundJob) -> float:
        return self.clock() - job.started

    def summary(self) -> str:
        jobs = self.jobs()
        if not jobs:
            return "no background jobs in this session"
        return "jobs: " + ", ".join(f"{job.id} ({job.state()})" for job in jobs)
