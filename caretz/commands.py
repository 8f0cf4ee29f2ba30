"""What the CLI's commands do (a run, `config show`, `sessions list` and `show`),
as plain functions that return an exit code.

Errors people can fix are caught here, at the edge, and become one line on
stderr with exit code 2 (`caretz.usage_error.fail`); everything below raises
where the problem is.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from caretz.usage_error import fail

if TYPE_CHECKING:
    from caretz.agent.turn import TurnResult
    from caretz.config.overrides import Flags
    from caretz.config.settings import Settings
    from caretz.runtime import Output, Session


def load_settings(overrides: Flags) -> Settings:
    from caretz.config.settings import resolve_settings

    return resolve_settings(overrides, os.environ)


def run_cli(overrides: Flags, prompt: str | None, resume: str | None) -> int:
    from caretz.config_base import ConfigError

    json_output = overrides.get("output") == "json"
    if prompt is not None and not prompt.strip():
        return fail_run('-p needs a prompt: it was empty (write -p "what to do")', json_output)
    try:
        settings = load_settings(overrides)
    except ConfigError as error:
        return fail_run(str(error), json_output)
    if prompt is None and sys.stdin.isatty():
        from caretz.ui.repl import run_repl

        return run_repl(settings, resume, overrides)
    if prompt is None:
        prompt = sys.stdin.read().strip()
        if not prompt:
            return fail_run('no prompt: pass -p "..." or pipe one on stdin', json_output)
    return run_headless(settings, prompt, resume)


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


def make_output(settings: Settings) -> Output:
    from caretz.ui.console import JsonOutput, TextOutput

    if settings.output == "json":
        return JsonOutput()
    return TextOutput(detailed=settings.output == "detailed")


def run_headless(settings: Settings, prompt: str, resume: str | None) -> int:
    from caretz.agent.signals import signals_interrupt
    from caretz.config_base import ConfigError
    from caretz.runtime import start_session
    from caretz.session.store import SessionNotFound

    output = make_output(settings)
    started = time.monotonic()
    try:
        session = start_session(settings, output, resume=resume)
    except (ConfigError, SessionNotFound) as error:
        return fail_run(str(error), settings.output == "json")
    try:
        with signals_interrupt():
            result = run_turns(session, prompt)
    finally:
        session.log.close()
    output.closing(result_summary(session, result, time.monotonic() - started))
    return result.exit_code


def run_turns(session: Session, prompt: str) -> TurnResult:
    """The turn and its automatic resumes; an ending signal between them ends the run too."""
    from caretz.agent.driver import run_with_auto_resume
    from caretz.agent.signals import Terminated, interrupted_by
    from caretz.agent.turn import TurnResult

    try:
        return run_with_auto_resume(session.agent, prompt)
    except Terminated as ended:
        end = interrupted_by(ended)
        return TurnResult(end.status, end.exit_code, end.message, "", 0)


def result_summary(session: Session, result: TurnResult, duration_s: float) -> dict[str, Any]:
    totals = session.agent.conversation.totals
    return {
        "session_id": session.id,
        "status": result.status,
        "exit_code": result.exit_code,
        "message": result.message,
        "text": result.text,
        "tool_calls": totals.tool_calls,
        "usage": totals.usage.to_dict(),
        "cost_usd": totals.cost_usd,
        "duration_s": round(duration_s, 3),
    }


def show_config(overrides: Flags) -> int:
    from caretz.config.show import show_settings
    from caretz.config_base import ConfigError

    try:
        settings = load_settings(overrides)
    except ConfigError as error:
        return fail(str(error))
    sys.stdout.write(json.dumps(show_settings(settings, os.environ), indent=2, default=str) + "\n")
    return 0


def list_sessions(overrides: Flags) -> int:
    from caretz.config.loading import data_dir
    from caretz.config_base import ConfigError
    from caretz.session.store import SessionStore
    from caretz.ui.sessions_text import list_line

    try:
        store = SessionStore(data_dir(os.environ))
    except ConfigError as error:
        return fail(str(error))
    sessions = store.list()
    if not sessions:
        sys.stdout.write("no sessions yet\n")
    for info in sessions:
        sys.stdout.write(list_line(info) + "\n")
    return 0


def show_session(overrides: Flags, session_id: str) -> int:
    from caretz.config.loading import data_dir
    from caretz.config_base import ConfigError
    from caretz.session.events import read_events
    from caretz.session.store import SessionNotFound, SessionStore
    from caretz.ui.sessions_text import describe_event

    try:
        path = SessionStore(data_dir(os.environ)).events_path(session_id)
    except (ConfigError, SessionNotFound) as error:
        return fail(str(error))
    for event in read_events(path):
        line = describe_event(event)
        if line:
            sys.stdout.write(line + "\n")
    return 0
