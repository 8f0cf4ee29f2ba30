"""What the CLI's commands do, as plain functions that return an exit code.

Errors people can fix are caught here, at the edge, and become one line on
stderr with exit code 2; everything below raises where the problem is.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from caretz.agent.turn import TurnResult
    from caretz.config import CliOverrides, Settings
    from caretz.runtime import Output, Session

USAGE_ERROR = 2


def fail(message: str) -> int:
    sys.stderr.write(f"caretz: {message}\n")
    return USAGE_ERROR


def load_settings(overrides: CliOverrides) -> Settings:
    from caretz.config import resolve_settings

    return resolve_settings(overrides, os.environ)


def run_cli(overrides: CliOverrides, prompt: str | None, resume: str | None) -> int:
    from caretz.config import ConfigError

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
    from caretz.config import ConfigError
    from caretz.runtime import start_session
    from caretz.session.store import SessionNotFound

    output = make_output(settings)
    started = time.monotonic()
    try:
        session = start_session(settings, output, resume=resume)
    except (ConfigError, SessionNotFound) as error:
        return fail(str(error))
    try:
        result = run_with_auto_resume(session.agent, prompt)
    finally:
        session.log.close()
    output.closing(result_summary(session, result, time.monotonic() - started))
    return result.exit_code


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


def show_config(overrides: CliOverrides) -> int:
    from caretz.config import ConfigError, show_settings

    try:
        settings = load_settings(overrides)
    except ConfigError as error:
        return fail(str(error))
    sys.stdout.write(json.dumps(show_settings(settings, os.environ), indent=2, default=str) + "\n")
    return 0


def list_sessions(overrides: CliOverrides) -> int:
    from caretz.config import ConfigError, data_dir
    from caretz.session.store import SessionStore

    try:
        store = SessionStore(data_dir(os.environ))
    except ConfigError as error:
        return fail(str(error))
    sessions = store.list()
    if not sessions:
        sys.stdout.write("no sessions yet\n")
    for info in sessions:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.started))
        prompt = " ".join(info.first_prompt.split())[:60]
        sys.stdout.write(
            f"{info.id}  {when}  {info.model}  {info.turns} turn(s)  "
            f"{info.last_status or '-'}  {prompt}\n"
        )
    return 0


def show_session(overrides: CliOverrides, session_id: str) -> int:
    from caretz.config import data_dir
    from caretz.session.events import read_events
    from caretz.session.store import SessionNotFound, SessionStore

    try:
        path = SessionStore(data_dir(os.environ)).events_path(session_id)
    except SessionNotFound as error:
        return fail(str(error))
    for event in read_events(path):
        line = describe_event(event)
        if line:
            sys.stdout.write(line + "\n")
    return 0


def describe_event(event: dict[str, Any]) -> str | None:
    kind = event["type"]
    if kind in ("Session.Started", "Session.Resumed"):
        return f"{kind} {event['session_id']} model={event['model']} cwd={event['cwd']}"
    if kind == "Turn.Started":
        return f"\n> {event['prompt']}"
    if kind == "Tool.Called":
        call = event["call"]
        return f"  {call['name']} {json.dumps(call['arguments'], sort_keys=True)[:120]}"
    if kind == "Tool.Result":
        mark = "ok" if event["ok"] else f"failed (exit {event.get('exit_code')})"
        return f"    → {mark}, {event['duration_s']}s"
    if kind == "Model.Response" and event["message"].get("content"):
        return event["message"]["content"]
    if kind.startswith("LoopGuard."):
        from caretz.ui.guard_lines import render_lines

        return "\n".join(render_lines(event, detailed=True)) or None
    if kind == "Session.Changed":
        return (
            f"[{event['change']} changed] model={event['model']} loop-guard={event['loop_guard']}"
        )
    if kind == "Session.Compacted":
        return (
            f"[compacted ({event['reason']})] {event['tokens_before']:,} → "
            f"{event['tokens_after']:,} tokens; {event['trimmed']} outputs trimmed, "
            f"{event['summarized']} messages summarized"
        )
    if kind == "Turn.Ended":
        return f"[{event['status']}] {event.get('message') or ''}".rstrip()
    return None
