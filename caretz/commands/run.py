"""A run: `caretz` in a terminal opens the interactive session; `caretz -p`, a prompt on
stdin, `--goal` or `--resume` without a terminal is a headless run through the Python
API's `Session`: the work it asks for (a `Work`, data), its view on stdout and stderr, its
exit code.

Everything that can be wrong (the settings, the evaluator's model, a `/name` that is no
custom command, a resumed session without a paused goal) is refused before the session
opens, so no model is called and no session is left behind; one found after it opened (an
`@image` that cannot be sent) discards the new session, in which nothing was sent.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from caretz.agent.outcomes import Interrupted
from caretz.agent.signals import signals_interrupt
from caretz.api.result import RunResult, failed_outside_work, refused_before_start
from caretz.api.session import Session, Work
from caretz.app.commands import find_command
from caretz.app.goals import check_evaluator, paused_goal
from caretz.checkpoints.project import project_root
from caretz.cli_options import PICK_SESSION
from caretz.commands.loading import load_settings
from caretz.commands.piped import prompt_with_stdin
from caretz.config.loading import data_dir
from caretz.config.settings import resolve_goal_model
from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.session.records.session import ScheduleRun
from caretz.session.store import SessionNotFound, SessionStore
from caretz.ui.console import JsonOutput, TextOutput
from caretz.usage_error import fail, fail_runtime

if TYPE_CHECKING:
    from caretz.commands import stream_json
    from caretz.config import env_file as env_files
    from caretz.ui import permission_lines, repl
else:
    # The interactive session: prompt_toolkit, which a headless run never needs.
    repl = lazy_module("caretz.ui.repl")
    # Only the runs that ask for them: --input-format stream-json, --env-file, yolo's banner.
    stream_json = lazy_module("caretz.commands.stream_json")
    env_files = lazy_module("caretz.config.env_file")
    permission_lines = lazy_module("caretz.ui.permission_lines")

if TYPE_CHECKING:
    from caretz.config.overrides import Flags
    from caretz.config.settings import Settings


def run_cli(
    flags: Flags,
    prompt: str | None,
    resume: str | None,
    *,
    goal: str | None = None,
    env_file: Path | None = None,
    job: str | None = None,
    input_format: str = "text",
) -> int:
    json_output = flags.get("output") == "json" or input_format == "stream-json"
    problem = usage_problem(flags, prompt, goal, input_format)
    if problem:
        return fail_run(problem, json_output)
    if resume == PICK_SESSION:
        picked = picked_session()
        if picked is None:
            return Interrupted.ending.exit_code  # Ctrl-C at the list: nothing was opened
        if isinstance(picked, ConfigError):
            return fail_run(str(picked), json_output)
        resume = picked
    try:
        if env_file is not None:
            env_files.apply_env_file(env_file, os.environ)
        settings = load_settings(with_resumed_model(flags, resume, os.environ))
        if flags.get("goal_model") is not None:
            resolve_goal_model(settings)  # an unknown evaluator fails now, goal or not
    except ConfigError as error:
        return fail_run(str(error), json_output)
    if input_format == "stream-json":
        return stream_json.run_stream_json(settings, resume)
    if prompt is None and goal is None and sys.stdin.isatty():
        return repl.run_repl(settings, resume, flags)
    if prompt is not None or goal is None:
        try:
            prompt = prompt_with_stdin(prompt)
        except ConfigError as error:
            return fail_run(str(error), json_output)
        # Without a prompt, a resumed session's paused goal carries on by itself.
        if prompt is None and goal is None and resume is None:
            return fail_run('no prompt: pass -p "..." or pipe one on stdin', json_output)
    return run_headless(settings, prompt, resume, goal=goal, job=job)


def picked_session() -> str | ConfigError | None:
    """`-r` without an ID: the session picked in the terminal from this folder's (None:
    none was); a ConfigError to say when there is no terminal or no session to pick."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return ConfigError(
            "-r without an ID picks a session in a terminal; here, give its ID (caretz "
            "sessions list) or use -c for this folder's latest"
        )
    try:
        store = SessionStore(data_dir(os.environ))
        sessions = store.list(project_root(Path.cwd()))
    except ConfigError as error:
        return error
    if not sessions:
        return ConfigError(
            "no session of this folder to resume yet; `caretz sessions list --all` lists "
            "every folder's, and --resume ID opens one of them"
        )
    return repl.pick_session(sessions)


def with_resumed_model(flags: Flags, resume: str | None, env: Mapping[str, str]) -> Flags:
    """A resumed session carries on with the model it last ran on, unless the run names a
    model or a profile (a flag or a CARETZ_* variable). A bare model ID served at a
    `--base-url` is taken only with that flag given again."""
    named = ("model", "profile")
    if resume is None or any(flags.get(name) for name in named):
        return flags
    if any(env.get(f"CARETZ_{name.upper()}") for name in named):
        return flags
    try:
        store = SessionStore(data_dir(env))
        session_id = store.latest(project_root(Path.cwd())) if resume == "latest" else resume
        model = store.model_of(session_id)
    except (ConfigError, SessionNotFound, OSError):
        return flags  # said where the session is opened
    if not model or ("/" not in model and not flags.get("base_url")):
        return flags
    return {**flags, "model": model}


def usage_problem(
    flags: Flags, prompt: str | None, goal: str | None, input_format: str
) -> str | None:
    """What is wrong with the run's command line before anything is read, if anything."""
    if input_format not in INPUT_FORMATS:
        return f"--input-format {input_format!r}: use text or stream-json"
    if input_format == "stream-json":
        return stream_json.stream_json_problem(flags, prompt, goal)
    if prompt is not None and not prompt.strip():
        return '-p needs a prompt: it was empty (write -p "what to do", or -p - to read stdin)'
    if goal is not None and not goal.strip():
        return '--goal needs a condition, e.g. --goal "the tests in tests/ pass"'
    return None


INPUT_FORMATS = ("text", "stream-json")


def fail_run(message: str, json_output: bool) -> int:
    """A run that cannot start: one line on stderr and, for `--output json`, its result."""
    code = fail(message)
    if json_output:
        write_usage_result(message)
    return code


def write_usage_result(message: str) -> None:
    """The result object of a run refused before it started (exit 2), for `--output json`."""
    write_result(refused_before_start(message))


def fail_data_write(message: str, json_output: bool) -> int:
    """A data folder caretz could not write outside a turn (a turn ends on it itself): one
    line on stderr, exit 1 and, for `--output json`, its result."""
    code = fail_runtime(message)
    if json_output:
        write_result(failed_outside_work(message))
    return code


def write_result(result: RunResult) -> None:
    sys.stdout.write(json.dumps({"type": "result", **result.to_dict()}))
    sys.stdout.write("\n")
    sys.stdout.flush()


def make_output(settings: Settings) -> JsonOutput | TextOutput:
    if settings.output == "json":
        return JsonOutput()
    return TextOutput(detailed=settings.output == "detailed")


def run_headless(
    settings: Settings,
    prompt: str | None,
    resume: str | None,
    *,
    goal: str | None = None,
    job: str | None = None,
) -> int:
    """One turn (or a custom command), or a goal's turns: a new `goal`, or the resumed
    session's paused one; through the Python API, whose result is the run's."""
    output = make_output(settings)
    started = time.monotonic()
    try:
        work = plan_work(settings, prompt, resume, goal)
        # The first request goes with the MCP servers ready by then; the others' tools
        # join at the next request after each is ready.
        session = Session.from_settings(settings, view=output, resume=resume, mcp_background=True)
    except (ConfigError, SessionNotFound) as error:
        return fail_run(str(error), settings.output == "json")
    if settings.permission_mode == "yolo":
        yolo_banner()
    if job is not None:
        session.app.log.emit(ScheduleRun(job=job))
    try:
        with signals_interrupt():
            result = session.run_work(work)
        if result.status == "usage_error":
            fail(result.message)
    finally:
        session.close()
    if discarded(result, resume, settings):
        if settings.output == "json":
            write_usage_result(result.message)
        return result.exit_code
    result = dataclasses.replace(result, duration_s=time.monotonic() - started)
    output.closing(result.to_dict())
    return result.exit_code


def discarded(result: RunResult, resume: str | None, settings: Settings) -> bool:
    """A usage error found once a new session was open (an @image that cannot be sent),
    before anything ran in it, leaves no session behind, as one found before it opened."""
    if result.status != "usage_error" or resume is not None or result.session_id is None:
        return False
    return SessionStore(settings.data_dir).discard_unused(result.session_id)


def plan_work(settings: Settings, prompt: str | None, resume: str | None, goal: str | None) -> Work:
    """What the run does, every part of it checked first (the custom command a `/name`
    prompt names found once, here); raises ConfigError or SessionNotFound."""
    workspace = Path.cwd()
    if goal is not None:
        check_evaluator(settings, os.environ)
        return Work(prompt=prompt, condition=goal)
    if paused_goal(settings, resume, workspace) is not None:
        check_evaluator(settings, os.environ)
        return Work(prompt=prompt, resume_goal=True)
    if prompt is None:
        raise ConfigError('no prompt, and the session has no paused goal: pass -p "..."')
    command = find_command(settings, workspace, prompt, os.environ)
    return Work(prompt=prompt, looked_up=True, command=command)


def yolo_banner() -> None:
    """The red line every yolo session starts with (on stderr: stdout keeps the answer)."""
    Console(stderr=True, highlight=False, soft_wrap=True).print(
        f"[bold red]{permission_lines.YOLO_BANNER}[/]"
    )
