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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.usage_error import fail

if TYPE_CHECKING:
    from caretz.agent.agent import Agent
    from caretz.agent.goal_driver import GoalRun
    from caretz.agent.turn import TurnResult
    from caretz.config.overrides import Flags
    from caretz.config.settings import Settings
    from caretz.goal.evaluator import ModelEvaluator
    from caretz.goal.state import Goal
    from caretz.runtime.custom_commands import PreparedCommand
    from caretz.runtime.session import Output, Session
    from caretz.sandbox.detect import SandboxCheck


def load_settings(overrides: Flags) -> Settings:
    from caretz.config.settings import resolve_settings

    return resolve_settings(overrides, os.environ)


def run_cli(
    overrides: Flags,
    prompt: str | None,
    resume: str | None,
    *,
    goal: str | None = None,
    env_file: Path | None = None,
    job: str | None = None,
) -> int:
    from caretz.config_base import ConfigError

    json_output = overrides.get("output") == "json"
    if prompt is not None and not prompt.strip():
        return fail_run('-p needs a prompt: it was empty (write -p "what to do")', json_output)
    if goal is not None and not goal.strip():
        return fail_run(
            '--goal needs a condition, e.g. --goal "the tests in tests/ pass"', json_output
        )
    if goal is not None and overrides.get("image"):
        return fail_run("--image attaches to a prompt; a --goal run takes none", json_output)
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
        from caretz.ui.repl import run_repl

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


def make_output(settings: Settings) -> Output:
    from caretz.ui.console import JsonOutput, TextOutput

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
    """One turn, or a goal's turns: a new `goal`, or the resumed session's paused one.

    Everything that can fail on settings (the evaluator's model too) fails before
    the session starts, so no model is called and no session is left behind.
    """
    from caretz.agent.signals import signals_interrupt
    from caretz.config_base import ConfigError
    from caretz.runtime.session import start_session
    from caretz.session.records.session import ScheduleRun
    from caretz.session.store import SessionNotFound

    output = make_output(settings)
    started = time.monotonic()
    try:
        pursuit = plan_goal(settings, resume, goal, prompt)
        if prompt is None and pursuit is None:
            return fail_run(
                'no prompt, and the session has no paused goal: pass -p "..."',
                settings.output == "json",
            )
        custom = custom_command(settings, prompt) if pursuit is None and prompt else None
        session = start_session(settings, output, resume=resume)
    except (ConfigError, SessionNotFound) as error:
        return fail_run(str(error), settings.output == "json")
    if settings.permission_mode == "yolo":
        yolo_banner()
    if job is not None:
        session.log.emit(ScheduleRun(job=job))
    goal_run = None
    try:
        with signals_interrupt():
            if pursuit is not None:
                goal_run = pursuit.run(session.agent, prompt)
                result = goal_run.result
            else:
                assert prompt is not None
                result = run_turns(session, prompt, custom)
    finally:
        session.close()
    summary = result_summary(session, result, time.monotonic() - started, goal_run)
    output.closing(summary)
    return summary["exit_code"]


def run_turns(session: Session, prompt: str, custom: PreparedCommand | None = None) -> TurnResult:
    """A prompt's turn (a custom command's in its scope: runtime/custom_commands) with its
    images (--image, a plain prompt's @shot.png) and automatic resumes. An ending signal
    ends the run too; a refused image, command model or `!` is one line (exit 2)."""
    from caretz.agent.driver import run_with_auto_resume
    from caretz.agent.signals import Terminated, interrupted_by
    from caretz.agent.turn import TurnResult
    from caretz.config_base import ConfigError
    from caretz.runtime.attachments import prompt_images
    from caretz.usage_error import USAGE_ERROR

    try:
        if custom is None:
            images = prompt_images(session.agent.parts.tool_ctx, prompt, session.settings.images)
            return run_with_auto_resume(session.agent, prompt, images)
        from caretz.runtime.command_expansion import expand_inline
        from caretz.runtime.custom_commands import command_scope

        with command_scope(session, custom):  # its @ images come with its @ files
            images = prompt_images(session.agent.parts.tool_ctx, "", session.settings.images)
            text, read = expand_inline(session, custom)
            return run_with_auto_resume(session.agent, text, [*images, *read])
    except Terminated as ended:
        end = interrupted_by(ended)
        return TurnResult(end.status, end.exit_code, end.message, "", 0)
    except ConfigError as error:
        fail(str(error))
        return TurnResult("usage_error", USAGE_ERROR, str(error), "", 0)


def custom_command(settings: Settings, prompt: str) -> PreparedCommand | None:
    """The custom command a `-p "/name args"` prompt runs (None: an ordinary prompt);
    raises ConfigError for a `/name` that is no custom command."""
    if not prompt.lstrip().startswith("/"):
        return None  # the interactive session's modules are not loaded for a plain prompt
    from caretz.ui.custom_commands import headless_command
    from caretz.ui.slash import builtin_names, parse

    parsed = parse(prompt.strip())
    if parsed is None:
        return None
    return headless_command(settings, Path.cwd(), parsed, builtin_names(), os.environ)


def yolo_banner() -> None:
    """The red line every yolo session starts with (on stderr: stdout keeps the answer)."""
    from rich.console import Console

    from caretz.ui.permission_lines import YOLO_BANNER

    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[bold red]{YOLO_BANNER}[/]")


def plan_goal(
    settings: Settings, resume: str | None, condition: str | None, prompt: str | None
) -> GoalPursuit | None:
    """The goal this run pursues: a new one, else the resumed session's paused one."""
    paused = None if condition is not None else paused_goal(settings, resume)
    if condition is None and paused is None:
        return None
    from caretz.goal.state import Goal
    from caretz.runtime.judge import build_evaluator

    evaluator = build_evaluator(settings, os.environ)
    config = settings.goal
    if condition is not None:
        goal = Goal(condition.strip(), config.max_turns, prompt or condition.strip())
        return GoalPursuit(goal, evaluator, config.judge_timeout_s, new=True)
    assert paused is not None
    return GoalPursuit(paused, evaluator, config.judge_timeout_s, new=False)


def paused_goal(settings: Settings, resume: str | None) -> Goal | None:
    """The paused goal of the session `resume` names ("latest" for --continue), if any."""
    if resume is None:
        return None
    from caretz.checkpoints.project import project_root
    from caretz.goal.state import restore_goal
    from caretz.session.events import read_events
    from caretz.session.store import SessionStore

    store = SessionStore(settings.data_dir)
    latest = resume == "latest"
    path = store.events_path(store.latest(project_root(Path.cwd())) if latest else resume)
    goal = restore_goal(read_events(path))
    return goal if goal is not None and goal.status == "paused" else None


@dataclass
class GoalPursuit:
    goal: Goal
    evaluator: ModelEvaluator
    timeout_s: float
    new: bool

    def run(self, agent: Agent, prompt: str | None) -> GoalRun:
        from caretz.agent.goal_driver import GoalDriver

        driver = GoalDriver(agent, self.goal, self.evaluator, self.timeout_s)
        if self.new:
            return driver.start(prompt or self.goal.condition)
        return driver.resume(prompt)


def result_summary(
    session: Session,
    result: TurnResult | None,
    duration_s: float,
    goal_run: GoalRun | None = None,
) -> dict[str, Any]:
    totals = session.agent.conversation.totals
    denials = session.permissions.denials if session.permissions is not None else []
    summary: dict[str, Any] = {
        "session_id": session.id,
        "status": result.status if result is not None else "interrupted",
        "exit_code": result.exit_code if result is not None else 130,
        "message": result.message if result is not None else "",
        "text": result.text if result is not None else "",
        "tool_calls": totals.tool_calls,
        "usage": totals.usage.to_dict(),
        "cost_usd": totals.cost_usd,
        "duration_s": round(duration_s, 3),
        "permission_denials": list(denials),
    }
    from caretz.tools.permission import allow_hint

    hint = allow_hint(denials)
    if hint:
        summary["permission_hint"] = hint
    if goal_run is not None:
        summary.update(
            status=goal_run.goal.status,
            exit_code=goal_run.exit_code,
            message=goal_run.message,
            goal=goal_run.goal.to_dict(),
        )
    return summary


def show_config(overrides: Flags) -> int:
    from caretz.config.show import show_settings
    from caretz.config_base import ConfigError

    try:
        settings = load_settings(overrides)
    except ConfigError as error:
        return fail(str(error))
    sys.stdout.write(json.dumps(show_settings(settings, os.environ), indent=2, default=str) + "\n")
    return 0


def check_sandbox_command(overrides: Flags, output: str, check: SandboxCheck | None = None) -> int:
    """`caretz sandbox check`: 0 when a sandbox works here, 1 when none does. `check`
    replaces probing this machine (what another machine would find)."""
    from caretz.config.sandbox import installation_problem, probe_sandbox, sandbox_policy
    from caretz.config_base import ConfigError
    from caretz.sandbox.detect import Backend, render_check

    if output not in ("text", "json"):
        return fail(f"--output {output!r}: use text or json")
    try:
        settings = load_settings(overrides)
        policy = sandbox_policy(settings, Path.cwd(), os.environ)
    except ConfigError as error:
        return fail(str(error))
    if check is None:
        check = probe_sandbox(policy, os.environ)
    roots = [str(root) for root in policy.writable_roots]
    refused = installation_problem(policy, check)
    if output == "json":
        data = {**check.as_dict(), "writable_roots": roots, "installation_problem": refused}
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write(render_check(check) + "\n")
        sys.stdout.write(f"writable: {', '.join(roots) or 'nothing'}\n")
        if refused:
            sys.stdout.write(f"error: {refused}\n")
    return 1 if check.backend is Backend.NONE or refused else 0


def list_mcp_servers(overrides: Flags, output: str) -> int:
    """`caretz mcp list`: see caretz.ui.mcp_command."""
    from caretz.config_base import ConfigError
    from caretz.ui.mcp_command import list_servers

    try:
        settings = load_settings(overrides)
    except ConfigError as error:
        return fail(str(error))
    return list_servers(settings, output)


def approve_mcp_servers(overrides: Flags, names: list[str]) -> int:
    """`caretz mcp approve`: see caretz.ui.mcp_command."""
    from caretz.config_base import ConfigError
    from caretz.ui.mcp_command import approve_servers

    try:
        settings = load_settings(overrides)
    except ConfigError as error:
        return fail(str(error))
    return approve_servers(settings, names)


def hooks_command(overrides: Flags, approve: bool, output: str = "text") -> int:
    """`caretz hooks list` and `caretz hooks approve`: see caretz.ui.hooks_command."""
    from caretz.config_base import ConfigError
    from caretz.ui.hooks_command import approve_hooks, list_hooks

    try:
        settings = load_settings(overrides)
    except ConfigError as error:
        return fail(str(error))
    return approve_hooks(settings) if approve else list_hooks(settings, output)


def list_sessions(overrides: Flags, every_folder: bool = False, limit: int = 20) -> int:
    """This folder's sessions (every folder's with `every_folder`), the last `limit`."""
    from caretz.checkpoints.project import project_root
    from caretz.config.loading import data_dir
    from caretz.config_base import ConfigError
    from caretz.session.store import SessionStore
    from caretz.ui.sessions_text import list_line

    try:
        store = SessionStore(data_dir(os.environ))
    except ConfigError as error:
        return fail(str(error))
    project = None if every_folder else project_root(Path.cwd())
    sessions = store.list(project)
    if not sessions:
        where = "" if project is None else f" in {project} (--all lists every folder's)"
        sys.stdout.write(f"no sessions yet{where}\n")
    for info in sessions[-limit:] if limit > 0 else sessions:
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
    undo: bool = False,
) -> int:
    """`caretz rewind`: see caretz.ui.rewind_command."""
    from caretz.config_base import ConfigError
    from caretz.ui.rewind_command import RewindArgs, run_rewind

    args = RewindArgs(session, turn, checkpoint, files_only, conversation_only, force, undo)
    try:
        settings = load_settings(overrides)
    except ConfigError as error:
        return fail(str(error))
    return run_rewind(settings, args)


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
