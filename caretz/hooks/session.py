"""A session's hooks: which run for an event, with what on stdin, and what they said.

`SessionHooks` runs the hooks of the profile and of the project for each event, records
every run as a `Hook.Ran` event, and answers the agent's questions around a turn
(agent/turn_hooks.py): a prompt going in (UserPromptSubmit), an answer that would end
the turn (Stop, and SubagentStop for a subagent's), a compaction (PreCompact).
SessionStart runs once the session's log is open, SessionEnd before it closes;
LoopGuardJudged, LoopGuardStopped and Notification (a permission question) follow
events on the log. Hooks written with `async: true` run in the background
(background.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.hooks.background import END_GRACE_S, BackgroundHooks, BackgroundRun
from caretz.hooks.config import HookEvent
from caretz.hooks.matching import ConfiguredHook, HookFile, command_hooks, selected
from caretz.hooks.output import HookResult, read_result
from caretz.hooks.runner import CommandRun, HookEnvironment, run_command
from caretz.session.records import hooks as records
from caretz.session.records.base import Record
from caretz.session.records.guard import LoopGuardJudged, LoopGuardStopped
from caretz.session.records.permissions import PermissionAsked
from caretz.text import one_line, shorten

if TYPE_CHECKING:
    from caretz.sandbox.runner import Sandbox

Emit = Callable[[Record], Any]
SHOWN_CHARS = 2000  # of a hook's stdout and stderr, kept in its Hook.Ran event
# A Stop hook that keeps blocking carries the work on this many times, then the turn ends.
MAX_STOP_CONTINUATIONS = 3
CONTEXT_HEADER = "[caretz] Context from the user's {event} hook, not typed by the user:"
STOP_MESSAGE = (
    "[caretz] Automated message from the user's {event} hook, not from the user: the work "
    "is not finished yet. The hook said:\n{reason}"
)
NOT_APPROVED = "hooks: {where} has hooks; they do not run until you approve them: {approve_with}"
UNSANDBOXED = (
    'hooks: the {event} hook `{command}` runs outside the sandbox ("sandbox": "off" in {where})'
)
NOTIFICATION_TITLE = "caretz"
PERMISSION_MESSAGE = "caretz needs your permission to use {tool}"


def _quiet(record: Record) -> None:
    pass


@dataclass(frozen=True)
class HookSession:
    """The session hooks run for, as their stdin tells them."""

    session_id: str
    transcript_path: Path  # the session's events.jsonl
    cwd: Path


@dataclass(frozen=True)
class PromptCheck:
    """What UserPromptSubmit hooks made of a prompt."""

    prompt: str  # to send, with the hooks' context after it
    blocked: str | None = None  # why it was not sent


def with_context(text: str, contexts: Iterable[tuple[str, str]]) -> str:
    """`text` with each (event, context) after it, marked as the hook's, not the user's."""
    blocks = [f"{CONTEXT_HEADER.format(event=event)}\n{context}" for event, context in contexts]
    return "\n\n".join([text, *blocks]) if blocks else text


class SessionHooks:
    """The hooks of one session (the profile's and the project's, read at its start)."""

    def __init__(
        self,
        files: Sequence[HookFile],
        where: HookEnvironment,
        *,
        session: HookSession | None = None,
        emit: Emit = _quiet,
        permission_mode: Callable[[], str] = lambda: "auto",
        clock: Callable[[], float] = time.monotonic,
    ):
        self.files = tuple(files)
        self.where = where
        self.emit = emit
        self.permission_mode = permission_mode
        self.clock = clock
        self.session_id = session.session_id if session is not None else ""
        self.transcript_path = str(session.transcript_path) if session is not None else ""
        self.cwd = str(session.cwd if session is not None else where.project_dir)
        self.max_stop_continuations = MAX_STOP_CONTINUATIONS
        self.pending: list[tuple[str, str]] = []  # SessionStart context for the next prompt
        self.last_judged: LoopGuardJudged | None = None
        self.background = BackgroundHooks(clock)
        self.background_grace_s = END_GRACE_S  # for background hooks when the session ends
        self.ended = False

    def attach(self, session_id: str, events_path: Path, cwd: Path) -> None:
        self.session_id, self.transcript_path, self.cwd = session_id, str(events_path), str(cwd)

    def use_sandbox(self, sandbox: Sandbox) -> None:
        """Run the hooks from now on in `sandbox` (the session's, rebuilt by a switch)."""
        self.where = replace(self.where, sandbox=sandbox)

    def __bool__(self) -> bool:
        return any(file.config for file in self.files if file.approved)

    # -- running ------------------------------------------------------------------------
    def hooks_for(self, event: HookEvent, *names: str) -> list[ConfiguredHook]:
        return list(selected(self.files, event, *names))

    def run(self, event: HookEvent, fields: dict[str, Any], *names: str) -> Iterator[HookResult]:
        """Each hook of `event` for `names`, in order; a block ends the run of them."""
        for hook in self.hooks_for(event, *names):
            result = self.run_hook(hook, event, fields, *names)
            yield result
            if result.outcome == "block" or result.stop:
                return

    def run_hook(
        self, hook: ConfiguredHook, event: HookEvent, fields: dict[str, Any], *names: str
    ) -> HookResult:
        self.collect_background()
        timeout = float(hook.command.timeout)
        payload = self.payload(event, fields)
        about = names[0] if names else None
        where, confined = self.where, hook.command.sandbox != "off"
        if hook.command.run_async:
            self.background.start(
                hook,
                event,
                about,
                lambda started: run_command(
                    hook.line, payload, where, timeout, started_process=started, confined=confined
                ),
            )
            return HookResult(outcome="ok")
        ran = run_command(hook.line, payload, where, timeout, confined=confined)
        result = read_result(event, ran, timeout)
        self.record(hook, event, ran, result, about)
        return result

    def collect_background(self, runs: Iterable[BackgroundRun] | None = None) -> None:
        """Log what the background hooks that ended said (it decides nothing)."""
        for entry in self.background.finished() if runs is None else runs:
            if entry.ran is None:
                continue
            timeout = float(entry.hook.command.timeout)
            said = read_result(entry.event, entry.ran, timeout)
            result = HookResult(
                outcome=said.outcome if said.outcome == "warning" else "ok",
                warning=said.warning,
                message=said.message,
            )
            self.record(entry.hook, entry.event, entry.ran, result, entry.about, background=True)

    def payload(self, event: HookEvent, fields: dict[str, Any]) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "cwd": self.cwd,
            "permission_mode": self.permission_mode(),
            "hook_event_name": event,
            **fields,
        }

    def record(
        self,
        hook: ConfiguredHook,
        event: HookEvent,
        ran: CommandRun,
        result: HookResult,
        about: str | None,
        background: bool = False,
    ) -> None:
        self.emit(
            records.HookRan(
                event=event,
                background=background or None,
                command=hook.line,
                source=hook.source,
                matcher=hook.matcher,
                about=about,
                exit_code=ran.exit_code,
                duration_s=round(ran.duration_s, 3),
                timed_out=ran.timed_out,
                decision=result.decision,
                reason=shorten(result.reason or result.stop_reason, SHOWN_CHARS) or None,
                warning=result.warning or None,
                message=result.message or None,
                stdout=shorten(ran.stdout.strip(), SHOWN_CHARS),
                stderr=shorten(ran.stderr.strip(), SHOWN_CHARS),
            )
        )

    # -- the session and its turns ----------------------------------------------------------
    def session_started(self, source: str, model: str) -> None:
        """SessionStart: what the hooks print is context for the first prompt."""
        fields = {"source": source, "model": model}
        for result in self.run("SessionStart", fields, source):
            if result.context:
                self.pending.append(("SessionStart", result.context))

    def prompt_submitted(self, prompt: str) -> PromptCheck:
        contexts = list(self.pending)
        for result in self.run("UserPromptSubmit", {"prompt": prompt}):
            if result.outcome == "block" or result.stop:
                return PromptCheck(prompt, result.reason or result.stop_reason or "no reason")
            if result.context:
                contexts.append(("UserPromptSubmit", result.context))
        self.pending = []
        return PromptCheck(with_context(prompt, contexts))

    def stopping(self, answer: str, continuations: int) -> str | None:
        """Stop: a hook that blocks (exit 2, or `decision: "block"`) carries the work on
        with its reason, at most `max_stop_continuations` times in a row."""
        fields = {"stop_hook_active": continuations > 0, "last_assistant_message": answer}
        return self.carry_on("Stop", fields, continuations)

    def subagent_stopping(
        self, agent: str, agent_id: str, answer: str, continuations: int
    ) -> str | None:
        """SubagentStop: as Stop, for a `task` subagent's answer; the matcher is matched
        against the subagent's name."""
        fields = {
            "stop_hook_active": continuations > 0,
            "agent_id": agent_id,
            "agent_type": agent,
            "agent_transcript_path": self.transcript_path,
            "last_assistant_message": answer,
        }
        return self.carry_on("SubagentStop", fields, continuations, agent)

    def carry_on(
        self, event: HookEvent, fields: dict[str, Any], continuations: int, *names: str
    ) -> str | None:
        """The message that carries the work on, when a hook of `event` blocks (bounded)."""
        reasons = []
        for result in self.run(event, fields, *names):
            if result.stop:
                return None
            if result.outcome == "block":
                reasons.append(result.reason)
        if not reasons:
            return None
        if continuations >= self.max_stop_continuations:
            self.emit(
                records.HookStopLimit(event=event, continuations=continuations, reason=reasons[0])
            )
            return None
        return STOP_MESSAGE.format(event=event, reason="\n".join(reasons))

    def compacting(self, trigger: str) -> str | None:
        fields = {"trigger": trigger, "custom_instructions": ""}
        for result in self.run("PreCompact", fields, trigger):
            if result.outcome == "block" or result.stop:
                return result.reason or result.stop_reason or "no reason"
        return None

    def session_ended(self, reason: str) -> None:
        """SessionEnd (once), then the background hooks are waited for (briefly) and
        logged; it cannot block."""
        if self.ended:
            return
        self.ended = True
        list(self.run("SessionEnd", {"reason": reason}, reason))
        self.collect_background(self.background.end(self.background_grace_s))

    def announce_skipped(self) -> None:
        """One `Hook.Skipped` event a file, naming the hooks caretz skips in it, and one
        `Hook.NotApproved` for a project's hooks that wait for the user's approval."""
        for file in self.files:
            where = file.source.split(":")[0]
            if not file.approved and command_hooks(file):
                text = NOT_APPROVED.format(where=where, approve_with=file.approve_with)
                self.emit(records.HookNotApproved(source=file.source, text=text))
            if file.approved:
                self.announce_unsandboxed(file)
            events = file.config.skipped_events
            if events:
                text = (
                    f"hooks: caretz does not run {', '.join(events)} hooks ({where}); "
                    "they are skipped"
                )
                self.emit(records.HookSkipped(source=file.source, events=list(events), text=text))
            kinds = file.config.skipped_types()
            if kinds:
                named = ", ".join(f"the {kind} hook of {event}" for event, kind in kinds)
                are = "is" if len(kinds) == 1 else "are"
                text = f"hooks: caretz runs only command hooks; {named} {are} skipped ({where})"
                self.emit(records.HookSkipped(source=file.source, types=kinds, text=text))

    def announce_unsandboxed(self, file: HookFile) -> None:
        """One `Hook.Unsandboxed` event for each hook the user lets run outside the sandbox."""
        for event, hook in command_hooks(file):
            if hook.command.sandbox == "off":
                text = UNSANDBOXED.format(
                    event=event, command=one_line(hook.line, 60), where=file.source
                )
                self.emit(
                    records.HookUnsandboxed(
                        source=file.source, event=event, command=hook.line, text=text
                    )
                )

    # -- events on the log ----------------------------------------------------------------
    def on_event(self, event: Record) -> None:
        """A session log listener: Notification, LoopGuardJudged and LoopGuardStopped
        hooks."""
        if isinstance(event, PermissionAsked):
            self.notify("permission_prompt", PERMISSION_MESSAGE.format(tool=event.tool))
        elif isinstance(event, LoopGuardJudged):
            self.last_judged = event
            list(self.run("LoopGuardJudged", _judged_fields(event), event.action))
        elif isinstance(event, LoopGuardStopped):
            judged = self.last_judged if event.judged else None
            fields = _stopped_fields(event, judged)
            list(self.run("LoopGuardStopped", fields, event.detector))

    def notify(self, kind: str, message: str) -> None:
        """Notification: caretz waits on the user; the matcher is matched against `kind`."""
        fields = {"message": message, "title": NOTIFICATION_TITLE, "notification_type": kind}
        list(self.run("Notification", fields, kind))


def _judged_fields(event: LoopGuardJudged) -> dict[str, Any]:
    """What a LoopGuardJudged hook reads of the judge's verdict."""
    return {
        "trigger": event.trigger,
        "headline": event.headline,
        "verdict": event.verdict,
        "action": event.action,
        "applied": event.applied,
        "mode": event.mode,
        "model": event.model,
        "note": event.note,
        "error": event.error,
    }


def _stopped_fields(event: LoopGuardStopped, judged: LoopGuardJudged | None) -> dict[str, Any]:
    """What a LoopGuardStopped hook reads: the stop, and the verdict that led to it."""
    return {
        "detector": event.detector,
        "headline": event.headline,
        "notice": event.notice,
        "judged": event.judged,
        "mode": event.mode,
        "verdict": judged.verdict if judged is not None else None,
    }


def block_text(event: str, hook: ConfiguredHook, reason: str) -> str:
    """How a block reads for the model: which hook, and what it said."""
    return f"The user's {event} hook (`{one_line(hook.line, 80)}`) said: {reason}"
