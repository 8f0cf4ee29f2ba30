"""Permission modes, and what a tool call does when the rules leave it to the mode.

Rules decide first: a deny rule refuses in every mode, an ask rule asks in every mode,
an allow rule runs the call. An allow rule never sends a command outside the sandbox:
a command the model asks to run there (`escalate`) asks every time, except in `yolo`,
so a broad rule such as `Bash(cat:*)` cannot carry `cat ~/.ssh/id_rsa` past the sandbox.
With no rule for the call, the mode decides:

- `auto` (the default): what the sandbox contains runs without asking; a command the
  model asks to run outside the sandbox (`escalate`), any command while the sandbox is
  off, and tools that run outside the sandbox or reach the network ask first;
- `ask`: every command and every file change asks; reads do not;
- `read-only`: no file changes, nothing outside the sandbox (commands run in the
  read-only sandbox), except reading the web (`fetch`), which asks as in `auto`;
- `plan`: read-only mode, and stricter: a command runs only when plan_mode.py proves
  every part of it changes nothing (a known read-only program, no redirection into a
  file); any other is refused, not asked. `exit_plan_mode` (effect `plan`), offered only
  in this mode, puts the plan to the user and switches to the mode they pick;
- `yolo`: nothing asks (and the sandbox is off).

A read-only (or plan) refusal beats an allow rule: the mode promises no writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, cast

from caretz.lazy_dataclass import lazy_dataclass

if TYPE_CHECKING:  # annotations only: the modes are read before any rule is
    from caretz.permissions.policy import Decision
    from caretz.permissions.rules import Rule

PermissionMode = Literal["auto", "ask", "read-only", "plan", "yolo"]
PERMISSION_MODES: tuple[PermissionMode, ...] = ("auto", "ask", "read-only", "plan", "yolo")
# The modes that refuse every change: their tools change no file and commands run in the
# read-only sandbox.
READ_ONLY_MODES: frozenset[str] = frozenset({"read-only", "plan"})
DEFAULT_MODE: PermissionMode = "auto"

# What a tool does, as far as asking goes:
# read      reads files (read, glob, grep)
# edit      changes files (write, edit)
# shell     runs a command inside the sandbox (bash)
# internal  acts only inside caretz (task: its own calls are checked one by one)
# external  runs outside the sandbox (MCP tools)
# fetch     reads from the network outside the sandbox and changes nothing (web_fetch):
#           asks like `external`, but read-only mode offers it (it obeys the rules there)
# plan      ends plan mode (exit_plan_mode): offered and run only in plan mode
Effect = Literal["read", "edit", "shell", "internal", "external", "fetch", "plan"]
Action = Literal["run", "ask", "refuse"]
# What made the decision: a rule, the mode, the model's escalation, the sandbox being off,
# a PreToolUse hook that asks first.
DecidedBy = Literal["rule", "mode", "escalation", "no-sandbox", "outside", "hook"]


@lazy_dataclass(frozen=True, kw_only=True)
class PermissionVerdict:
    action: Action
    reason: str  # one line for the user and the model ("" for a call that simply runs)
    by: DecidedBy = "mode"
    rule: Rule | None = None
    escalated: bool = False  # runs outside the sandbox, as the model asked


# From the mode that lets most run to the one that lets least: a subagent's mode applies
# only where it is stricter than the session's (`stricter`).
STRICTNESS: dict[str, int] = {"yolo": 0, "auto": 1, "ask": 2, "read-only": 3}
# Agent files' modes (Claude Code's words) as caretz's: `plan` and `dontAsk` change nothing
# the user has not allowed; `default` asks as Claude Code does; `acceptEdits` edits unasked.
AGENT_MODES: dict[str, PermissionMode] = {
    "plan": "read-only",
    "dontask": "ask",
    "default": "ask",
    "acceptedits": "auto",
    "bypasspermissions": "yolo",
}


def stricter(mode: PermissionMode, floor: str | None) -> PermissionMode:
    """The stricter of the session's `mode` and a subagent's `floor` (None: no floor). A
    mode without a rank counts as the strictest there is: fail closed."""
    if floor is None:
        return mode
    strictest = max(STRICTNESS.values()) + 1
    chosen = max(mode, floor, key=lambda m: STRICTNESS.get(m, strictest))
    return cast(PermissionMode, chosen)


def agent_mode(written: str) -> PermissionMode:
    """An agent file's `permissionMode` as caretz's mode; raises ModeError."""
    word = written.strip().replace("-", "").replace("_", "").lower()
    if word in AGENT_MODES:
        return AGENT_MODES[word]
    return parse_mode(written)


class ModeError(ValueError):
    """An unknown permission mode; the message names the choices."""


def parse_mode(text: str) -> PermissionMode:
    lowered = text.strip().lower()
    for mode in PERMISSION_MODES:
        if lowered == mode:
            return mode
    choices = ", ".join(PERMISSION_MODES)
    raise ModeError(f"unknown permission mode {text!r}: use one of {choices}")


def decide(
    mode: PermissionMode,
    effect: Effect,
    decision: Decision,
    *,
    tool: str,
    escalate: str | None = None,
    sandboxed: bool = True,
    rule_needed: str | None = None,
    unproven: str | None = None,
) -> PermissionVerdict:
    """What happens to one call: the rules' `decision`, then the mode.

    `escalate` is the model's reason for running a command outside the sandbox;
    `sandboxed` says whether commands run in a sandbox at all; `rule_needed` says why a
    command no allow rule names asks even in `auto` mode (None: it runs in the sandbox);
    `unproven` says why a command cannot be shown to change nothing (plan mode reads it).
    """
    leaving = effect == "shell" and bool(escalate)
    if decision.outcome == "deny":
        return PermissionVerdict(
            action="refuse", reason=decision.reason, by="rule", rule=decision.rule
        )
    if effect == "plan":
        return _plan_exit(mode, tool)
    if mode in READ_ONLY_MODES:
        refusal = _read_only_refusal(mode, effect, tool, leaving)
        if refusal is not None:
            return refusal
    if mode == "plan" and effect == "shell" and unproven is not None:
        reason = f"plan mode: {unproven}; only commands shown to change nothing run"
        return PermissionVerdict(action="refuse", reason=reason, by="mode")
    if decision.outcome == "ask":
        return PermissionVerdict(
            action="ask", reason=decision.reason, by="rule", rule=decision.rule, escalated=leaving
        )
    if decision.outcome == "allow" and not (leaving and mode != "yolo"):
        return PermissionVerdict(
            action="run", reason="", by="rule", rule=decision.rule, escalated=leaving
        )
    if mode == "yolo" or effect in ("read", "internal"):
        return PermissionVerdict(action="run", reason="", by="mode", escalated=leaving)
    if effect == "external":
        return PermissionVerdict(
            action="ask", reason=f"{tool} runs outside the sandbox", by="outside"
        )
    if effect == "fetch":
        return PermissionVerdict(
            action="ask", reason=f"{tool} reaches the network outside the sandbox", by="outside"
        )
    if effect == "shell":
        return _command(mode, escalate, sandboxed, rule_needed)
    if mode == "ask":
        return PermissionVerdict(
            action="ask", reason="ask mode: every file change asks first", by="mode"
        )
    return PermissionVerdict(action="run", reason="")


def _command(
    mode: PermissionMode, escalate: str | None, sandboxed: bool, rule_needed: str | None
) -> PermissionVerdict:
    if escalate:
        reason = f"the model asks to run this outside the sandbox: {escalate.strip()}"
        return PermissionVerdict(action="ask", reason=reason, by="escalation", escalated=True)
    if not sandboxed:
        return PermissionVerdict(
            action="ask", reason="the sandbox is off, so every command asks first", by="no-sandbox"
        )
    if mode == "ask":
        return PermissionVerdict(
            action="ask", reason="ask mode: every command asks first", by="mode"
        )
    if rule_needed is not None and mode == "auto":
        return PermissionVerdict(action="ask", reason=rule_needed, by="mode")
    return PermissionVerdict(action="run", reason="")


def _plan_exit(mode: PermissionMode, tool: str) -> PermissionVerdict:
    if mode == "plan":
        return PermissionVerdict(action="run", reason="")
    return PermissionVerdict(
        action="refuse",
        reason=f"{tool} ends plan mode, and the session is in {mode} mode",
        by="mode",
    )


def _read_only_refusal(
    mode: PermissionMode, effect: Effect, tool: str, leaving: bool
) -> PermissionVerdict | None:
    if effect == "edit":
        what = f"{tool} changes files"
    elif effect == "external":
        what = f"{tool} runs outside the sandbox"
    elif leaving:
        what = "commands run only inside the read-only sandbox"
    else:
        return None
    return PermissionVerdict(
        action="refuse", reason=f"{mode} mode: {what}, and this mode allows no changes", by="mode"
    )
