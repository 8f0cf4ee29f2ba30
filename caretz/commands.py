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
    from caretz.runtime.session import Output, Session


def load_settings(overrides: Flags) -> Settings:
    from caretz.config.settings import resolve_settings

    return resolve_settings(overrides, os.environ)


def run_cli(overrides: Flags, prompt: str | None, resume: str | None) -> int:
    from caretz.config_base import ConfigError

    try:
        settings = load_settings(overrides)
    except ConfigError as error:
        return fail(str(error))
    if prompt is None and sys.stdin.isatty():
        from caretz.ui.repl import run_repl

        return run_repl(settings, resume, overrides)
    if prompt is None:
        prompt = sys.stdin.read().strip()
        if not prompt:
            return fail('no prompt: pass -p "..." or pipe one on stdin')
    return run_headless(settings, prompt, resume)


def make_output(settings: Settings) -> Output:
    from caretz.ui.console import JsonOutput, TextOutput

    if settings.output == "json":
        return JsonOutput()
    return TextOutput(detailed=settings.output == "detailed")


def run_headless(settings: Settings, prompt: str, resume: str | None) -> int:
    from caretz.agent.driver import run_with_auto_resume
    from caretz.config_base import ConfigError
    from caretz.runtime.session import start_session
    from caretz.session.store import SessionNotFound

    output = make_output(settings)
    started = time.monotonic()
    try:
        session = start_session(settings, output, resume=resume)
    except (ConfigError, SessionNotFound) as error:
        return fail(str(error))
    if settings.permission_mode == "yolo":
        yolo_banner()
    try:
        result = run_with_auto_resume(session.agent, prompt)
    finally:
        session.close()
    output.closing(result_summary(session, result, time.monotonic() - started))
    return result.exit_code


def yolo_banner() -> None:
    """The red line every yolo session starts with (on stderr: stdout keeps the answer)."""
    from rich.console import Console

    from caretz.ui.permission_lines import YOLO_BANNER

    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[bold red]{YOLO_BANNER}[/]")


def result_summary(session: Session, result: TurnResult, duration_s: float) -> dict[str, Any]:
    totals = session.agent.conversation.totals
    denials = session.permissions.denials if session.permissions is not None else []
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
        "permission_denials": list(denials),
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


def rewind_session(
    overrides: Flags,
    session: str | None,
    turn: int | None,
    checkpoint: str | None,
    *,
    files_only: bool = False,
    conversation_only: bool = False,
    force: bool = False,
) -> int:
    """`caretz rewind`: see caretz.ui.rewind_command."""
    from caretz.config_base import ConfigError
    from caretz.ui.rewind_command import RewindArgs, run_rewind

    args = RewindArgs(session, turn, checkpoint, files_only, conversation_only, force)
    try:
        settings = load_settings(overrides)
    except ConfigError as error:
        return fail(str(error))
    return run_rewind(settings, args)


def show_session(overrides: Flags, session_id: str) -> int:
    from caretz.config.loading import data_dir
    from caretz.session.events import read_events
    from caretz.session.store import SessionNotFound, SessionStore
    from caretz.ui.sessions_text import describe_event

    try:
        path = SessionStore(data_dir(os.environ)).events_path(session_id)
    except SessionNotFound as error:
        return fail(str(error))
    for event in read_events(path):
        line = describe_event(event)
        if line:
            sys.stdout.write(line + "\n")
    return 0
