"""A run: `caretz` in a terminal opens the interactive session; `caretz -p`, a prompt on
stdin, `--goal` or `--resume` without a terminal is a headless run over `caretz.app`'s
Session: the work it asks for, its view on stdout and stderr, its exit code.

Everything that can be wrong (the settings, the evaluator's model, a `/name` that is no
custom command, a resumed session without a paused goal) is refused before the session
opens, so no model is called and no session is left behind.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.commands.loading import load_settings
from caretz.config_base import ConfigError
from caretz.usage_error import fail

if TYPE_CHECKING:
    from caretz.app.outcome import Outcome
    from caretz.app.session import Session, View
    from caretz.config.overrides import Flags
    from caretz.config.settings import Settings


def run_cli(
    overrides: Flags,
    prompt: str | None,
    resume: str | None,
    *,
    goal: str | None = None,
    env_file: Path | None = None,
    job: str | None = None,
) -> int:
    json_output = overrides.get("output") == "json"
    if prompt is not None and not prompt.strip():
        return fail_run('-p needs a prompt: it was empty (write -p "what to do")', json_output)
    if goal is not None and not goal.strip():
        return fail_run(
            '--goal needs a condition, e.g. --goal "the tests in tests/ pass"', json_output
        )
    try:
        if env_file is not None:
            from caretz.config.env_file import apply_env_file

            apply_env_file(env_file, os.environ)
        settings = load_settings(overrides)
        if overrides.get("goal_model") is not None:
            from caretz.config.settings import resolve_goal_model

            resolve_goal_model(settings)  # an unknown evaluator fails now, goal or not
    except ConfigError as error:
        return fail_run(str(error), json_output)
    if prompt is None and goal is None and sys.stdin.isatty():
        from caretz.ui.repl import run_repl  # the interactive session: prompt_toolkit

        return run_repl(settings, resume, overrides)
    if prompt is None and goal is None:
        # Without a prompt, a resumed session's paused goal carries on by itself.
        prompt = sys.stdin.read().strip() or None
        if prompt is None and resume is None:
            return fail_run('no prompt: pass -p "..." or pipe one on stdin', json_output)
    return run_headless(settings, prompt, resume, goal=goal, job=job)


def fail_run(message: str, json_output: bool) -> int:
    """A run that cannot start: one line on stderr and, for `--output json`, its result."""
    code = fail(message)
    if json_output:
        write_usage_result(message)
    return code


def write_usage_result(message: str) -> None:
    """The result object of a run refused before it started (exit 2), for `--output json`."""
    from caretz.messages import Usage
    from caretz.usage_error import USAGE_ERROR

    result = {
        "type": "result",
        "session_id": None,
        "status": "usage_error",
        "exit_code": USAGE_ERROR,
        "message": message,
        "text": "",
        "tool_calls": 0,
        "usage": Usage().to_dict(),
        "cost_usd": None,
        "duration_s": 0.0,
    }
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


def make_output(settings: Settings) -> View:
    from caretz.ui.console import JsonOutput, TextOutput

    if settings.output == "json":
        return JsonOutput()
    return TextOutput(detailed=settings.output == "detailed")


Work = Callable[["Session"], "Outcome"]


def run_headless(
    settings: Settings,
    prompt: str | None,
    resume: str | None,
    *,
    goal: str | None = None,
    job: str | None = None,
) -> int:
    """One turn (or a custom command), or a goal's turns: a new `goal`, or the resumed
    session's paused one."""
    from caretz.agent.signals import signals_interrupt
    from caretz.app.session import Session
    from caretz.session.store import SessionNotFound

    output = make_output(settings)
    started = time.monotonic()
    try:
        work = plan_work(settings, prompt, resume, goal)
        session = Session.open(settings, output, resume=resume)
    except (ConfigError, SessionNotFound) as error:
        return fail_run(str(error), settings.output == "json")
    if settings.permission_mode == "yolo":
        yolo_banner()
    if job is not None:
        session.log.emit("Schedule.Run", job=job)
    try:
        with signals_interrupt():
            outcome = work(session)
        if outcome.status == "usage_error":
            fail(outcome.message)
    finally:
        session.close()
    summary = result_summary(session, outcome, time.monotonic() - started)
    output.closing(summary)
    return summary["exit_code"]


def plan_work(settings: Settings, prompt: str | None, resume: str | None, goal: str | None) -> Work:
    """What the run does, every part of it checked first; raises ConfigError or
    SessionNotFound."""
    from caretz.app.commands import find_command
    from caretz.app.goals import check_evaluator, paused_goal

    workspace = Path.cwd()
    if goal is not None:
        check_evaluator(settings, os.environ)
        return lambda session: session.start_goal(goal, prompt)
    if paused_goal(settings, resume, workspace) is not None:
        check_evaluator(settings, os.environ)
        return lambda session: session.resume_goal(prompt)
    if prompt is None:
        raise ConfigError('no prompt, and the session has no paused goal: pass -p "..."')
    command = find_command(settings, workspace, prompt, os.environ)
    if command is not None:
        return lambda session: session.run_command(command)
    return lambda session: session.submit(prompt)


def yolo_banner() -> None:
    """The red line every yolo session starts with (on stderr: stdout keeps the answer)."""
    from rich.console import Console

    from caretz.ui.permission_lines import YOLO_BANNER

    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[bold red]{YOLO_BANNER}[/]")


def result_summary(session: Session, outcome: Outcome, duration_s: float) -> dict[str, Any]:
    """The run's result: `--output json`'s last object, the text view's closing line."""
    from caretz.tools.permission import allow_hint

    totals, denials = session.totals, session.permission_denials
    summary: dict[str, Any] = {
        "session_id": session.id,
        "status": outcome.status,
        "exit_code": outcome.exit_code,
        "message": outcome.message,
        "text": outcome.text,
        "tool_calls": totals.tool_calls,
        "usage": totals.usage.to_dict(),
        "cost_usd": totals.cost_usd,
        "duration_s": round(duration_s, 3),
        "permission_denials": list(denials),
    }
    hint = allow_hint(denials)
    if hint:
        summary["permission_hint"] = hint
    if outcome.goal is not None:
        summary["goal"] = outcome.goal
    return summary
