"""The `[hook]` lines: a hook that blocked, warned or ended the turn, one line each, as
the terminal views and `caretz sessions show` print them; and the hooks a session has, as
`caretz hooks list` and /hooks list them.

[hook] PreToolUse `./no-push.sh` blocked a bash call: pushing is not allowed from here
[hook] PostToolUse `./lint.sh` exited with 1: lint.sh: line 3: ruff: command not found
[hook] Stop `./check.sh` timed out after 60 s and was killed
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from caretz.text import one_line

if TYPE_CHECKING:
    from caretz.hooks.matching import HookFile

PREFIX = "[hook]"
COMMAND_CHARS = 60
REASON_CHARS = 200
_TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")


def hook_lines(event: dict[str, Any], detailed: bool) -> list[tuple[str, str]]:
    """(colour, text) lines for a Hook.* event; [] for one that needs none (a hook that
    ran and said nothing, unless `detailed`)."""
    kind = event.get("type")
    if kind == "Hook.Ran":
        return _ran(event, detailed)
    if kind == "Hook.StopLimit":
        reason = one_line(str(event.get("reason") or ""), REASON_CHARS)
        count = event.get("continuations")
        which = event.get("event") or "Stop"
        text = f"{PREFIX} {which} hooks carried the work on {count} times; the turn ends: {reason}"
        return [("yellow", text)]
    if kind in ("Hook.Skipped", "Hook.NotApproved"):
        return [("yellow", str(event.get("text") or ""))]
    if kind == "Hook.PromptBlocked" and detailed:
        prompt = one_line(str(event.get("prompt") or ""), REASON_CHARS)
        return [("yellow", f"{PREFIX} the prompt was not sent: {prompt}")]
    return []


def _ran(event: dict[str, Any], detailed: bool) -> list[tuple[str, str]]:
    name = f"{PREFIX} {event.get('event')} `{one_line(str(event.get('command')), COMMAND_CHARS)}`"
    decision = event.get("decision")
    reason = one_line(str(event.get("reason") or ""), REASON_CHARS)
    lines: list[tuple[str, str]] = []
    if decision == "block":
        lines.append(("red", f"{name} blocked{_about(event)}: {reason}".rstrip(": ")))
    elif decision == "stop":
        lines.append(("red", f"{name} ended the turn: {reason}".rstrip(": ")))
    elif decision == "warning":
        lines.append(("yellow", f"{name} {event.get('warning')}"))
    elif detailed:
        said = f" → {decision}" if decision else ""
        lines.append(("dim", f"{name} ran ({float(event.get('duration_s') or 0):.1f}s){said}"))
    if event.get("message"):
        lines.append(("yellow", f"{PREFIX} {one_line(str(event['message']), REASON_CHARS)}"))
    return lines


def _about(event: dict[str, Any]) -> str:
    about = event.get("about")
    if not about or event.get("event") not in _TOOL_EVENTS:
        return ""
    return f" a {about} call"


def describe(event: dict[str, Any]) -> str | None:
    """A Hook.* event for `caretz sessions show` (every run, with its exit code)."""
    kind = event.get("type")
    if kind == "Hook.Ran":
        code = "timed out" if event.get("timed_out") else f"exit {event.get('exit_code')}"
        line = (
            f"[hook {event.get('event')}] `{one_line(str(event.get('command')), COMMAND_CHARS)}` "
            f"{code}, {event.get('duration_s')}s"
        )
        decision = event.get("decision")
        detail = event.get("reason") or event.get("warning")
        if decision:
            line += f" → {decision}"
        if detail:
            line += f": {one_line(str(detail), REASON_CHARS)}"
        return line
    if kind == "Hook.PromptBlocked":
        prompt = one_line(str(event.get("prompt") or ""), REASON_CHARS)
        return f"\n> {prompt}\n[not sent: a UserPromptSubmit hook blocked it]"
    lines = hook_lines(event, detailed=True)
    return "\n".join(text for _, text in lines) or None


# -- the hooks a session has (`caretz hooks list`, /hooks) ----------------------------------

LISTED_COMMAND_CHARS = 120
APPROVED = "approved"
NOT_APPROVED = "not approved: they do not run until you approve them with caretz hooks approve"


def hook_file_lines(files: list[HookFile]) -> list[str]:
    """A heading a file (with the project's approval), then its hooks, indented."""
    from caretz.hooks.matching import command_hooks

    if not files:
        return ["no hooks here (profiles.json `hooks`, .caretz/settings.json `hooks`)"]
    lines = []
    for file in files:
        lines.append(f"{file.source}{_status(file)}")
        hooks = command_hooks(file)
        lines += [f"  {hook_line(event, hook.matcher, hook.line)}" for event, hook in hooks]
        if not hooks:
            lines.append("  no command hooks caretz runs")
    return lines


def hook_line(event: str, matcher: str, command: str) -> str:
    """`PreToolUse [Bash] `./check.sh``: the event, its matcher when it has one, the command."""
    scope = f" [{matcher}]" if matcher.strip() not in ("", "*") else ""
    return f"{event}{scope} `{one_line(command, LISTED_COMMAND_CHARS)}`"


def _status(file: HookFile) -> str:
    """The project's approval; the profile's hooks are the user's own and need none."""
    from caretz.runtime.hooks import PROJECT_SOURCE

    if file.source != PROJECT_SOURCE:
        return ""
    return f" ({APPROVED if file.approved else NOT_APPROVED})"
