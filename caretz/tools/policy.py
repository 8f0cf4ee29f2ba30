"""The seam where the tool registry refuses, changes or lets through a call before it runs.

A before-call check sees the call and the tool context and either

- returns None: the call goes on as it is;
- returns `Proceed(call=…, escalated=…)`: the call goes on changed: another call in its
  place (a hook that rewrites the input), and/or a grant for this one call
  (`escalated`: run it outside the sandbox, as the user approved);
- raises `CancelToolCall(reason)`: the call does not run, and the reason is the failed
  result the model reads, so a refused call never ends the turn;
- raises `EndTurn(reason)`: the turn itself ends (a hook's `continue: false`).

A `Proceed` may also carry a `PermissionHint`: a PreToolUse hook's "allow" or "ask",
which the permission check after it weighs as an allow rule, or as a reason to ask
(docs/hooks.md).

Checks run in order, each seeing the call as the earlier ones left it. The session's
permission check (tools/permission.py) is one; the user's `disallowedTools` are deny
rules inside it, so they apply in every guard mode, `off` included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import ToolCall

if TYPE_CHECKING:
    from caretz.permissions.rules import Rule
    from caretz.tools.base import ToolContext, ToolResult

# The argument names tools give a file path (caretz's own tools use "path").
PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "notebook_path", "target")
_PREAMBLE = "[loop guard] Automated message from caretz, not from the user."


class CancelToolCall(Exception):
    """Raised by a before-call check: the call does not run, and `reason` is its result."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class EndTurn(Exception):
    """Raised by a before- or after-call check: the turn ends here (a hook's
    `continue: false`). `result` is the call's result when it ran (after-call).
    `answer`: the turn ends done, with this as its answer (a headless run's plan)."""

    def __init__(self, reason: str, result: ToolResult | None = None, answer: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.result = result
        self.answer = answer


@lazy_dataclass(frozen=True)
class PermissionHint:
    """A check's word for the permission check after it: "allow" counts as an allow rule
    for this call (it never beats a deny or ask rule, nor lets a command leave the
    sandbox); "ask" asks even where nothing else would (refused where nobody can answer)."""

    decision: Literal["allow", "ask"]
    reason: str  # one line, shown in the question or the refusal
    source: str  # who said it, e.g. "the PreToolUse hook `./check.sh`"


@lazy_dataclass(frozen=True)
class TurnGrant:
    """What a custom command lets the calls of its own turn do, carried on their
    `ToolContext` (never on the session's permissions): its `allowed-tools` as allow rules
    (deny and ask rules still win; no command leaves the sandbox on their strength), and
    why commands no allow rule names ask even in auto mode (its `!` lines)."""

    rules: tuple[Rule, ...] = ()
    rule_needed: str | None = None


class SkillGrants:
    """The allow rules of the skills activated during one piece of work (a turn and its
    automatic resumes), for the calls after them in it: one object shared by every copy of
    the tool context made for that work (deny and ask rules still win over them)."""

    def __init__(self) -> None:
        self.rules: tuple[Rule, ...] = ()

    def add(self, rules: tuple[Rule, ...]) -> None:
        self.rules = (*self.rules, *(rule for rule in rules if rule not in self.rules))

    def clear(self) -> None:
        self.rules = ()


def with_skill_rules(grant: TurnGrant | None, skills: SkillGrants | None) -> TurnGrant | None:
    """The grant a call runs with: its turn's, and the rules of the skills activated so far."""
    if skills is None or not skills.rules:
        return grant
    if grant is None:
        return TurnGrant(skills.rules)
    return TurnGrant((*grant.rules, *skills.rules), grant.rule_needed)


@lazy_dataclass(frozen=True)
class Proceed:
    """A before-call check's go-ahead that changes something about the call."""

    call: ToolCall | None = None  # run this call in its place
    escalated: bool = False  # this one call may run outside the sandbox
    hint: PermissionHint | None = None  # for the permission check that follows


# Runs before a call; returns None or Proceed, or raises CancelToolCall to refuse it.
BeforeCall = Callable[[ToolCall, "ToolContext"], "Proceed | None"]


def path_arguments(args: dict[str, Any]) -> list[str]:
    """The file paths a call's arguments name."""
    return [args[key] for key in PATH_KEYS if isinstance(args.get(key), str)]


def disallowed_reason(tool: str, rule: str, pattern: str) -> str:
    """The refusal of a call that matches one of the user's disallowedTools rules."""
    return (
        f"{_PREAMBLE} This {tool} call was refused and did not run: it matches "
        f'"{pattern}" in the user\'s rule loopGuard.detectors.disallowedTools.{rule}. '
        "Do not retry it or a variant of it. Do the task another way, or ask the user."
    )
