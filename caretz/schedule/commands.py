"""`caretz schedule add | list | remove | run`, as plain functions that return an exit code.

A job is a headless caretz run installed in the user's crontab. Everything the run
depends on is written into its line when it is added: the directory, the caretz
and python it runs with, the config and data paths, the model, and the whole loop
guard section of the settings that scheduled it (so a later profile edit cannot
quietly unguard it). API keys never go into the crontab: cron starts the run with
a bare environment, and the run reads its keys from an env file only the user can
read (`--env-file`, by default `schedule.env` beside profiles.json).
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from caretz import private_data
from caretz.config.env_file import read_env_file
from caretz.config.loading import data_dir
from caretz.config.settings import Settings, resolve_goal_model, resolve_settings
from caretz.config_base import ConfigError
from caretz.schedule.cron import check_schedule
from caretz.schedule.crontab import (
    NO_DAEMON,
    Crontab,
    CrontabError,
    cron_daemon_running,
    crontab_command,
)
from caretz.schedule.jobs import Job, job_ids, jobs_in, with_job, without_job
from caretz.schedule.runs import LastRun, last_runs
from caretz.session.store import SessionStore
from caretz.usage_error import fail

if TYPE_CHECKING:
    from caretz.config.overrides import Flags

ENV_FILE = "schedule.env"
CRON_PATH = "/usr/bin:/bin"  # cron's own PATH, for `schedule run`
_PASSED_ENV = ("CARETZ_CONFIG", "CARETZ_DATA_DIR", "PATH")


class ScheduleError(Exception):
    """Input the user can fix (exit 2), found before the crontab is touched."""


def _fails(error: Exception) -> int:
    """The one line for `error`; its exit code (a crontab that ran and failed: 1)."""
    code = fail(str(error))
    return error.exit_code if isinstance(error, CrontabError) else code


# -- add ---------------------------------------------------------------------------------


def add_job(
    flags: Flags,
    schedule: str,
    prompt: str,
    *,
    goal: str | None = None,
    workdir: Path | None = None,
    env_file: Path | None = None,
    env: Mapping[str, str] | None = None,
    proc: Path = Path("/proc"),
) -> int:
    """`proc`: where running processes are listed, to tell whether cron runs."""
    env = os.environ if env is None else env
    try:
        job = new_job(flags, schedule, prompt, goal, workdir or Path.cwd(), env_file, env)
        crontab = Crontab(crontab_command(env))
        table = crontab.read()
        crontab.write(with_job(table, job))
    except (CrontabError, ConfigError, ScheduleError, ValueError) as error:
        return _fails(error)
    private_data.touch(job.log)  # cron's shell appends to it: the file is the user's alone
    sys.stdout.write(f"added job {job.id}: {job.schedule} in {job.workdir}\n")
    sys.stdout.write(f"  output: {job.log}\n")
    if cron_daemon_running(proc) is False:
        sys.stderr.write(f"caretz: {NO_DAEMON}\n")
    return 0


def new_job(
    flags: Flags,
    schedule: str,
    prompt: str,
    goal: str | None,
    workdir: Path,
    env_file: Path | None,
    env: Mapping[str, str],
) -> Job:
    """The job for these settings; raises ScheduleError, ConfigError or ValueError first."""
    schedule = check_schedule(schedule)
    prompt = _one_line("-p", prompt)
    goal = _one_line("--goal", goal) if goal is not None else None
    if not workdir.is_dir():
        raise ScheduleError(f"--dir {workdir}: no such directory")
    settings = resolve_settings(flags, env)
    if goal is not None:
        resolve_goal_model(settings)  # an unknown evaluator fails now, not at 3 a.m.
    keys = _env_file_for(settings, env_file, env)
    job_id = secrets.token_hex(3)
    log = settings.data_dir.absolute() / "schedule" / f"{job_id}.log"
    argv = [sys.executable, "-m", "caretz", "--job", job_id, *run_flags(settings, flags, keys)]
    argv += ["-p", prompt, *(["--goal", goal] if goal is not None else [])]
    passed = {name: env[name] for name in _PASSED_ENV if env.get(name)}
    return Job(
        id=job_id, schedule=schedule, workdir=workdir.absolute(), argv=argv, log=log, env=passed
    )


def _one_line(flag: str, text: str) -> str:
    if not text.strip():
        raise ScheduleError(f"{flag} is empty: a scheduled run needs one")
    if "\n" in text.strip() or "\r" in text:
        raise ScheduleError(f"{flag} must be one line in a crontab; put longer text in a file")
    return text.strip()


def run_flags(settings: Settings, flags: Flags, env_file: Path | None) -> list[str]:
    """What pins the run to the settings that scheduled it: the profile, the model,
    the limits and the whole loop guard section (never a key)."""
    out = ["--profile", settings.profile_name, "--model", settings.model.ref]
    if env_file is not None:
        out += ["--env-file", str(env_file)]
    if flags.get("config") is not None:
        out += ["--config", str(Path(flags["config"]).absolute())]
    if settings.profile.base_url:
        out += ["--base-url", settings.profile.base_url]
    if settings.reasoning != "off":
        out += ["--reasoning", settings.reasoning]
    if settings.max_tool_calls is not None:
        out += ["--max-tool-calls", str(settings.max_tool_calls)]
    if settings.max_budget_usd is not None:
        out += ["--max-budget-usd", f"{settings.max_budget_usd:g}"]
    guard = settings.loop_guard.model_dump_json(by_alias=True, exclude_defaults=True)
    out += ["--loop-guard-config", guard]
    for name in ("goal_model", "goal_reasoning", "goal_max_turns"):
        if flags.get(name) is not None:
            out += ["--" + name.replace("_", "-"), str(flags[name])]
    return out


def _env_file_for(settings: Settings, given: Path | None, env: Mapping[str, str]) -> Path | None:
    """The env file the run reads its keys from; the model's key must be in it."""
    path = given if given is not None else settings.config_path.parent / ENV_FILE
    path = path.expanduser().absolute()
    key = settings.model.entry.api_key_env
    if not path.is_file() and given is None:
        if key is None:
            return None
        raise ScheduleError(
            f"the job needs {key}, and cron starts it without your environment: put "
            f"{key}=... in {path} (chmod 600), or name another file with --env-file"
        )
    if key is not None and key not in read_env_file(path):
        raise ScheduleError(f"--env-file {path}: it has no {key}, which the job's model needs")
    return path


# -- list, remove, run ---------------------------------------------------------------------


def list_jobs(
    flags: Flags, env: Mapping[str, str] | None = None, proc: Path = Path("/proc")
) -> int:
    env = os.environ if env is None else env
    try:
        table = Crontab(crontab_command(env)).read()
        store = SessionStore(data_dir(env))
    except (CrontabError, ConfigError) as error:
        return _fails(error)
    jobs = jobs_in(table)
    unreadable = sorted(set(job_ids(table)) - {job.id for job in jobs})
    if not jobs and not unreadable:
        sys.stdout.write("no scheduled jobs (add one with: caretz schedule add)\n")
    runs = last_runs(store, [job.id for job in jobs])
    for job in jobs:
        sys.stdout.write(f"{job.id}  {job.schedule}  in {job.workdir}\n")
        what = f"    -p {job.option('-p')!r}"
        goal = job.option("--goal")
        sys.stdout.write(what + (f" --goal {goal!r}" if goal else "") + "\n")
        run = runs.get(job.id)
        sys.stdout.write(f"    last run: {_run_text(run)} · output: {job.log}\n")
    for job_id in unreadable:
        sys.stdout.write(f"{job_id}  (its crontab line was edited; remove it and add it again)\n")
    if jobs and cron_daemon_running(proc) is False:
        sys.stderr.write(f"caretz: {NO_DAEMON}\n")
    return 0


def _run_text(run: LastRun | None) -> str:
    if run is None:
        return "none recorded yet"
    when = datetime.fromtimestamp(run.started).strftime("%Y-%m-%d %H:%M")
    code = f"exit {run.exit_code}" if run.exit_code is not None else run.status
    return f"{when} · {code} · session {run.session_id}"


def remove_job(flags: Flags, job_id: str, env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    try:
        crontab = Crontab(crontab_command(env))
        table = crontab.read()
        if job_id not in job_ids(table):
            raise ScheduleError(f"no job {job_id!r} in your crontab (see: caretz schedule list)")
        crontab.write(without_job(table, job_id))
    except (CrontabError, ScheduleError) as error:
        return _fails(error)
    sys.stdout.write(f"removed job {job_id}\n")
    return 0


def run_job(flags: Flags, job_id: str, env: Mapping[str, str] | None = None) -> int:
    """Run the job's installed command now, as cron would: through sh, with cron's bare
    environment; returns the run's exit code."""
    env = os.environ if env is None else env
    try:
        table = Crontab(crontab_command(env)).read()
    except CrontabError as error:
        return _fails(error)
    job = next((job for job in jobs_in(table) if job.id == job_id), None)
    if job is None:
        return fail(f"no job {job_id!r} in your crontab (see: caretz schedule list)")
    private_data.touch(job.log)
    start = job.log.stat().st_size
    done = subprocess.run(["/bin/sh", "-c", job.installed], env=cron_environment(env), check=False)
    with job.log.open(encoding="utf-8", errors="replace") as log:
        log.seek(start)
        sys.stderr.write(log.read())
    sys.stdout.write(f"job {job_id} ran: exit {done.returncode} · output: {job.log}\n")
    return done.returncode


def cron_environment(env: Mapping[str, str]) -> dict[str, str]:
    """What cron gives a job: HOME, LOGNAME, SHELL and a short PATH, nothing else."""
    home = env.get("HOME") or str(Path.home())
    user = env.get("LOGNAME") or env.get("USER") or ""
    return {"HOME": home, "LOGNAME": user, "SHELL": "/bin/sh", "PATH": CRON_PATH}
