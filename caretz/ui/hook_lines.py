"""The `[hook]` lines: a hook that blocked, warned or ended the turn, one line each, as
the terminal views and `caretz sessions show` print them; and the hooks a session has, as
`caretz hooks list` and /hooks list them.

[hook] PreToolUse `./no-push.sh` blocked a bash call: pushing is not allowed from here
[hook] PostToolUse `./lint.sh` exited with 1: lint.sh: line 3: ruff: command not found
[hook] Stop `./check.sh` timed out after 60 s and was killed
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caretz.lazy import lazy_module
from caretz.session.records import hooks as records
from caretz.session.records.base import Record
from caretz.text import one_line

if TYPE_CHECKING:
    from caretz.hooks import matching as hooks_matching
    from caretz.runtime import hooks as runtime_hooks
else:
    # Listing hooks reads their config (pydantic); a session's hook lines and `sessions show` do not.
    hooks_matching = lazy_module("caretz.hooks.matching")
    runtime_hooks = lazy_module("caretz.runtime.hooks")

if TYPE_CHECKING:
    from caretz.hooks.matching import HookFile

PREFIX = "[hook]"
COMMAND_CHARS = 60
REASON_CHARS = 200
_TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")


def hook_lines(event: Record, detailed: bool) -> list[tuple[str, str]]:
    """(colour, text) lines for a Hook.* event; [] for one that needs none (a hook that
    ran and said nothing, unless `detailed`)."""
    if isinstance(event, records.HookRan):
        return _ran(event, detailed)
    if isinstance(event, records.HookStopLimit):
        reason = one_line(str(event.reason or ""), REASON_CHARS)
        count = event.continuations
        which = event.event or "Stop"
        text = f"{PREFIX} {which} hooks carried the work on {count} times; the turn ends: {reason}"
        return [("yellow", text)]
    if isinstance(event, records.HookSkipped | records.HookNotApproved | records.HookUnsandboxed):
        return [("yellow", str(event.text or ""))]
    if isinstance(event, records.HookPromptBlocked) and detailed:
        prompt = one_line(str(event.prompt or ""), REASON_CHARS)
        return [("yellow", f"{PREFIX} the prompt was not sent: {prompt}")]
    return []


def _ran(event: records.HookRan, detailed: bool) -> list[tuple[str, str]]:
    name = f"{PREFIX} {event.event} `{one_line(str(event.command), COMMAND_CHARS)}`"
    decision = event.decision
    reason = one_line(str(event.reason or ""), REASON_CHARS)
    lines: list[tuple[str, str]] = []
    if decision == "block":
        lines.append(("red", f"{name} blocked{_about(event)}: {reason}".rstrip(": ")))
    elif decision == "stop":
        lines.append(("red", f"{name} ended the turn: {reason}".rstrip(": ")))
    elif decision == "warning":
        lines.append(("yellow", f"{name} {event.warning}"))
    elif detailed:
        said = f" → {decision}" if decision else ""
        lines.append(("dim", f"{name} ran ({float(event.duration_s or 0):.1f}s){said}"))
    if event.message:
        lines.append(("yellow", f"{PREFIX} {one_line(str(event.message), REASON_CHARS)}"))
    return lines


def _about(event: records.HookRan) -> str:
    about = event.about
    if not about or event.event not in _TOOL_EVENTS:
        return ""
    return f" a {about} call"


def describe(event: Record) -> str | None:
    """A Hook.* event for `caretz sessions show` (every run, with its exit code)."""
    if isinstance(event, records.HookRan):
        code = "timed out" if event.timed_out else f"exit {event.exit_code}"
        line = (
            f"[hook {event.event}] `{one_line(str(event.command), COMMAND_CHARS)}` "
            f"{code}, {event.duration_s}s"
        )
        decision = event.decision
        detail = event.reason or event.warning
        if decision:
            line += f" → {decision}"
        if detail:
            line += f": {one_line(str(detail), REASON_CHARS)}"
        return line
    if isinstance(event, records.HookPromptBlocked):
        prompt = one_line(str(event.prompt or ""), REASON_CHARS)
        return f"\n> {prompt}\n[not sent: a UserPromptSubmit hook blocked it]"
    lines = hook_lines(event, detailed=True)
    return "\n".join(text for _, text in lines) or None


# -- the hooks a session has (`caretz hooks list`, /hooks) ----------------------------------

LISTED_COMMAND_CHARS = 120
APPROVED = "approved"
NOT_APPROVED = "not approved: they do not run until you approve them with caretz hooks approve"


def hook_file_lines(files: list[HookFile]) -> list[str]:
    """A heading a file (with the project's approval), then its hooks, indented."""
    if not files:
        return ["no hooks here (profiles.json `hooks`, .caretz/settings.json `hooks`)"]
    lines = []
    for file in files:
        lines.append(f"{file.source}{_status(file)}")
        hooks = hooks_matching.command_hooks(file)
        lines += [
            f"  {hook_line(event, hook.matcher, hook.line)}{_outside(hook.command.sandbox)}"
            for event, hook in hooks
        ]
        if not hooks:
            lines.append("  no command hooks caretz runs")
    return lines


def hook_line(event: str, matcher: str, command: str) -> str:
    """`PreToolUse [Bash] `./check.sh``: the event, its matcher when it has one, the command."""
    scope = f" [{matcher}]" if matcher.strip() not in ("", "*") else ""
    return f"{event}{scope} `{one_line(command, LISTED_COMMAND_CHARS)}`"


def _status(file: HookFile) -> str:
    """The project's approval; the profile's hooks are the user's own and need none."""
    if file.source != runtime_hooks.PROJECT_SOURCE:
        return ""
    return f" ({APPROVED if file.approved else NOT_APPROVED})"


def _outside(sandbox: str) -> str:
    """Said after a hook the user lets run outside the session's sandbox."""
    return " (outside the sandbox)" if sandbox == "off" else ""
