"""What a hook's exit code and stdout mean, as Claude Code reads them.

- exit 0: the run goes on. Stdout that is a JSON object may carry `decision` and
  `reason`, `continue` and `stopReason`, `systemMessage`, and `hookSpecificOutput`
  (`permissionDecision`, `permissionDecisionReason`, `updatedInput`,
  `additionalContext`). Other stdout is context for the model on UserPromptSubmit
  and SessionStart, and is ignored elsewhere.
- exit 2: a block; stderr is the reason (JSON on stdout is then ignored).
- any other exit, a timeout, a command that cannot start: a warning; the run goes on.

Where a hook's answer cannot be read it is read the safe way: a permission decision
caretz does not know asks the user, and an `updatedInput` that is no object refuses
the call. Stdout that is not JSON as caretz reads it (caretz/inbound.py: no NaN, no key
given twice, no nesting past its depth) is plain stdout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from caretz import inbound
from caretz.hooks.config import HookEvent
from caretz.hooks.runner import CommandRun
from caretz.text import one_line

Outcome = Literal["ok", "block", "warning"]
Permission = Literal["allow", "deny", "ask"]
PERMISSIONS: tuple[Permission, ...] = ("allow", "deny", "ask")
# Events whose plain stdout is context for the model.
_CONTEXT_FROM_STDOUT = ("UserPromptSubmit", "SessionStart")
BLOCKING_EXIT = 2


@dataclass(frozen=True, kw_only=True)
class HookResult:
    """One hook's answer."""

    outcome: Outcome
    reason: str = ""  # a block's reason: stderr (exit 2) or the JSON `reason`
    permission: Permission | None = None  # PreToolUse's permissionDecision
    updated_input: dict[str, Any] | None = None  # PreToolUse's changed tool input
    context: str = ""  # additionalContext (or plain stdout where that is context)
    stop: bool = False  # `continue: false`: the turn ends
    stop_reason: str = ""
    message: str = ""  # systemMessage, for the user
    warning: str = ""  # why the hook did not answer (a non-blocking error)

    @property
    def decision(self) -> str | None:
        """The one word a Hook.Ran event records."""
        if self.stop:
            return "stop"
        if self.outcome != "ok":
            return self.outcome
        if self.permission is not None:
            return self.permission
        if self.updated_input is not None:
            return "rewrite"
        return "context" if self.context else None


def read_result(event: HookEvent, run: CommandRun, timeout_s: float) -> HookResult:
    """The answer of a hook that ran for `event`."""
    if run.error is not None:
        return HookResult(outcome="warning", warning=f"could not start: {run.error}")
    if run.timed_out:
        return HookResult(
            outcome="warning", warning=f"timed out after {timeout_s:g} s and was killed"
        )
    if run.exit_code == BLOCKING_EXIT:
        reason = run.stderr.strip() or f"the hook exited with {BLOCKING_EXIT} and gave no reason"
        return HookResult(outcome="block", reason=reason)
    if run.exit_code != 0:
        said = one_line(run.stderr) or one_line(run.stdout)
        return HookResult(
            outcome="warning", warning=f"exited with {run.exit_code}: {said}".rstrip(": ")
        )
    return _read_stdout(event, run.stdout)


def _read_stdout(event: HookEvent, stdout: str) -> HookResult:
    text = stdout.strip()
    data = _json_object(text)
    if data is None:
        context = text if event in _CONTEXT_FROM_STDOUT else ""
        return HookResult(outcome="ok", context=context)
    return _read_json(event, data)


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.startswith("{"):
        return None
    try:  # read as all data from outside is (caretz/inbound.py): strictly, text made valid
        data = inbound.load_json(text, "the hook's output")
    except inbound.BadInput:
        return None
    return data if isinstance(data, dict) else None


def _read_json(event: HookEvent, data: dict[str, Any]) -> HookResult:
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    reason = _text(data.get("reason"))
    stop = data.get("continue") is False
    fields: dict[str, Any] = {
        "stop": stop,
        "stop_reason": _text(data.get("stopReason")),
        "message": _text(data.get("systemMessage")),
        "context": _text(specific.get("additionalContext")),
    }
    if event == "PreToolUse":
        return _pre_tool_use(data, specific, reason, fields)
    if data.get("decision") == "block":
        return HookResult(outcome="block", reason=reason or "the hook blocked it", **fields)
    return HookResult(outcome="ok", reason=reason, **fields)


def _pre_tool_use(
    data: dict[str, Any], specific: dict[str, Any], reason: str, fields: dict[str, Any]
) -> HookResult:
    permission, why = _permission(data, specific, reason)
    updated = specific.get("updatedInput", data.get("updatedInput"))
    if updated is not None and not isinstance(updated, dict):
        why = "the hook's updatedInput is not a JSON object, so the call was refused"
        return HookResult(outcome="block", reason=why, **fields)
    if permission == "deny":
        return HookResult(
            outcome="block", reason=why or "the hook denied it", permission="deny", **fields
        )
    return HookResult(
        outcome="ok", reason=why, permission=permission, updated_input=updated, **fields
    )


_LEGACY = {"approve": "allow", "block": "deny"}


def _permission(
    data: dict[str, Any], specific: dict[str, Any], reason: str
) -> tuple[Permission | None, str]:
    word = specific.get("permissionDecision")
    why = _text(specific.get("permissionDecisionReason")) or reason
    if word is None:
        word = _LEGACY.get(str(data.get("decision")))
    if word is None or word == "defer":
        return None, why
    known = next((each for each in PERMISSIONS if each == word), None)
    if known is not None:
        return known, why
    return "ask", f"the hook answered {word!r}, which caretz does not know, so the user decides"


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""
