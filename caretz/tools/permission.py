"""The permission check: one policy for every tool call, in every mode, for every agent.

`SessionPermissions` holds a session's rules, mode, asker and denials; `PermissionCheck`
is the registry's before-call check over it, shared by every agent's registry (a "yes,
always" holds for subagents too). Rules decide (deny > ask > allow), then the mode; a
call that asks goes to the `Asker`, or is denied with how to allow it when nobody can be
asked. An approved escalation reaches bash as `ToolContext.escalated`. Events:
`Permission.Asked`, `Permission.Decided` (every answer and refusal); a `disallowedTools`
refusal keeps its `LoopGuard.Blocked` event and wording.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from caretz.lazy import lazy_module
from caretz.messages import ToolCall
from caretz.permissions.modes import Effect, PermissionMode, PermissionVerdict, decide, stricter
from caretz.permissions.policy import Decision, RuleSet
from caretz.permissions.project import PROJECT_SETTINGS, RuleError
from caretz.session.records.base import Record
from caretz.session.records.permissions import PermissionAsked, PermissionDecided
from caretz.tools.asking import (
    Answer,
    Asker,
    NobodyAsks,
    Question,
    declined_by_user,
    denied_headless,
    input_summary,
)
from caretz.tools.base import ToolContext
from caretz.tools.policy import (
    CancelToolCall,
    PermissionHint,
    Proceed,
    TurnGrant,
    disallowed_reason,
    with_skill_rules,
)

if TYPE_CHECKING:
    from caretz.permissions.rules import Rule

if TYPE_CHECKING:
    from caretz.permissions import plan_mode as plan_commands
    from caretz.permissions import proposals as rule_proposals
    from caretz.permissions import rules as rule_reader
    from caretz.permissions import settings as rule_settings
    from caretz.session.records import guard as guard_records
else:
    # Reading, naming and proposing rules: only once a rule refuses a call or the user is asked.
    rule_reader = lazy_module("caretz.permissions.rules")
    rule_settings = lazy_module("caretz.permissions.settings")
    rule_proposals = lazy_module("caretz.permissions.proposals")
    # Plan mode's reading of a command line: only in plan mode.
    plan_commands = lazy_module("caretz.permissions.plan_mode")
    # The guard's records: a `disallowedTools` refusal keeps its `LoopGuard.Blocked` event.
    guard_records = lazy_module("caretz.session.records.guard")

Emit = Callable[[Record], Any]
# Saves allow rules to the project's settings file ("yes, always"): the session's wiring
# gives one that keeps the project's approval (runtime/project_trust.py).
SaveRules = Callable[[Path, tuple[str, ...]], Any]
EffectOf = Callable[[str], "Effect | None"]

_MODE_HINTS = {
    "escalation": (
        "list the hosts it needs in sandbox.network in the profile (or set it to true) if it "
        "only needs the network, or run "
        "caretz with --permission-mode yolo (no sandbox; nothing asks)"
    ),
    "no-sandbox": "run caretz with the sandbox on (--permission-mode auto)",
    "outside": "run caretz with --permission-mode yolo (nothing asks)",
    "mode": "run caretz with --permission-mode auto (commands run in the sandbox unasked)",
}


_WRITABLE_SANDBOX = (
    "this subagent's mode is read-only, and commands run in the session's writable sandbox"
)


def _quiet(record: Record) -> None:
    pass


class SessionPermissions:
    """A session's permission state: its rules, its mode, who asks, and what was denied."""

    def __init__(
        self,
        project_root: str | Path,
        *,
        project_rules: Iterable[Rule] = (),
        profile_rules: Iterable[Rule] = (),
        mode: PermissionMode = "auto",
        asker: Asker | None = None,
        emit: Emit = _quiet,
        sandboxed: bool = True,
        home: str | None = None,
        save_rules: SaveRules | None = None,
    ):
        self.project_root = Path(project_root)
        self.save_rules = save_rules
        self.home = home
        # Read once, at start: a command cannot widen the session's permissions by
        # writing the project's settings file. "Yes, always" adds to `saved`.
        self.project_rules = tuple(project_rules)
        self.profile_rules = tuple(profile_rules)
        self.saved: list[Rule] = []
        self.mode: PermissionMode = mode
        self.asker: Asker = asker or NobodyAsks()
        self.emit = emit
        self.sandboxed = sandboxed
        self.denials: list[dict[str, str]] = []
        self.rules = self._ruleset()
        # How the session changes its permission mode (its tools, sandbox and prompt
        # follow): set by the application's session; None changes the mode alone.
        self.switch_mode: Callable[[str], object] | None = None

    def carried_over(self, emit: Emit) -> SessionPermissions:
        """These permissions for the next session of an interactive run (/clear, /resume):
        the rules as read at the start and those saved since, the mode and who asks; its
        own log, and no denials yet."""
        following = SessionPermissions(
            self.project_root,
            project_rules=self.project_rules,
            profile_rules=self.profile_rules,
            mode=self.mode,
            asker=self.asker,
            emit=emit,
            sandboxed=self.sandboxed,
            home=self.home,
            save_rules=self.save_rules,
        )
        following.saved = list(self.saved)
        following.rules = following._ruleset()
        return following

    def _ruleset(self) -> RuleSet:
        return self.rules_with_profile(self.profile_rules)

    def rules_with_profile(self, profile_rules: Iterable[Rule]) -> RuleSet:
        """The rules as they would be with another profile's, nothing changed yet."""
        rules = (*profile_rules, *self.project_rules, *self.saved)
        return RuleSet(rules, self.project_root, self.home)

    def use_profile_rules(self, rules: Iterable[Rule]) -> None:
        """Another profile's rules (and disallowedTools); the project's stay as read."""
        self.profile_rules = tuple(rules)
        self.rules = self._ruleset()

    @property
    def settings_file(self) -> Path:
        return self.project_root / PROJECT_SETTINGS

    def leave_plan_mode(self, mode: str) -> None:
        """The plan was approved: the session carries on in `mode`."""
        if self.switch_mode is not None:
            self.switch_mode(mode)
        else:
            self.mode = cast(PermissionMode, mode)

    def ask_user(self, question: Question, call_id: str = "") -> Answer:
        """Put a question that is not about running a call (a plan to approve) to the
        user; both it and the answer go in the log."""
        self.emit(_asked(call_id, question))
        answer = self._answer(question)
        verdict = PermissionVerdict(action="ask", reason=question.reason, by="mode")
        self._decided(
            ToolCall(id=call_id, name=question.tool, arguments={}),
            question.summary,
            verdict,
            answer,
            True,
        )
        return answer

    # -- one call ------------------------------------------------------------------------
    def check(
        self,
        call: ToolCall,
        args: Mapping[str, Any],
        effect: Effect,
        cwd: Path,
        hint: PermissionHint | None = None,
        grant: TurnGrant | None = None,
        mode_floor: str | None = None,
        rules_root: Path | None = None,
        rule_names: tuple[str, ...] = (),
    ) -> Proceed | None:
        """None or Proceed (with a grant) when the call may run; raises CancelToolCall.

        `hint`: a PreToolUse hook's "allow" (weighed as an allow rule where no rule
        decided) or "ask" (asks where the call would have run unasked). `grant`: what a
        custom command lets the calls of its turn do (allow rules, and why commands no
        rule allows ask). `mode_floor`: a subagent's mode, applied where stricter than the
        session's; read-only refuses commands unless the session's sandbox is read-only too.
        `rules_root`: the worktree a subagent works in, where the rules' `./` paths start.
        `rule_names`: more names the call answers to; the strictest decision holds."""
        if mode_floor == "read-only" and self.mode != "read-only" and effect == "shell":
            verdict = PermissionVerdict(action="refuse", reason=_WRITABLE_SANDBOX, by="mode")
            raise CancelToolCall(self._refuse(call, args, verdict))
        rules = self.rules
        if grant is not None and grant.rules:
            rules = rules.with_rules(rule for rule in grant.rules if rule.behavior == "allow")
        if rules_root is not None:
            rules = RuleSet(rules.rules, rules_root, rules.home)  # tools/narrowing.py rules_at
        decision = rules.check(call.name, args, cwd)
        for name in rule_names:  # deny beats ask beats allow, whichever name a rule uses
            other = rules.check(name, args, cwd)
            if _STRICTNESS[other.outcome] > _STRICTNESS[decision.outcome]:
                decision = other
        if hint is not None and hint.decision == "allow" and decision.outcome == "no-match":
            decision = Decision(outcome="allow", reason=f"allowed by {hint.source}")
        escalate = _escalation(args) if effect == "shell" else None
        verdict = decide(
            stricter(self.mode, mode_floor),
            effect,
            decision,
            tool=call.name,
            escalate=escalate,
            sandboxed=self.sandboxed,
            rule_needed=grant.rule_needed if grant is not None else None,
            unproven=self._unproven(effect, args),
        )
        if hint is not None and hint.decision == "ask" and verdict.action == "run":
            reason = f"{hint.source} asks first: {hint.reason or 'no reason given'}"
            verdict = PermissionVerdict(
                action="ask", reason=reason, by="hook", escalated=verdict.escalated
            )
        if verdict.action == "refuse":
            raise CancelToolCall(self._refuse(call, args, verdict))
        if verdict.action == "ask":
            question = self._question(call, args, verdict, escalate, cwd, rules)
            self._ask(call, verdict, question)
        return Proceed(escalated=True) if verdict.escalated else None

    def _unproven(self, effect: Effect, args: Mapping[str, Any]) -> str | None:
        """In plan mode, why a command line cannot be shown to change nothing."""
        if self.mode != "plan" or effect != "shell":
            return None
        command = args.get("command")
        if not isinstance(command, str):
            return "the command is not text"
        return plan_commands.unproven(command)

    def _refuse(self, call: ToolCall, args: Mapping[str, Any], verdict: PermissionVerdict) -> str:
        summary = input_summary(call.name, args)
        origin = rule_settings.disallowed_origin(verdict.rule) if verdict.rule is not None else None
        if origin is not None:
            key, pattern = origin
            text = disallowed_reason(call.name, key, pattern)
            self.emit(
                guard_records.LoopGuardBlocked(
                    detector="disallowed-tools",
                    headline=f'disallowed-tools: {call.name} matches "{pattern}"',
                    tool=call.name,
                    rule=key,
                    pattern=pattern,
                    reason=text,
                )
            )
        else:
            text = _refusal_text(call.name, verdict)
            self._decided(call, summary, verdict, Answer("no"), asked=False, would_ask=False)
        self.denials.append({"tool": call.name, "input": summary, "reason": verdict.reason})
        return text

    def _ask(self, call: ToolCall, verdict: PermissionVerdict, question: Question) -> None:
        """Put the question (or, with nobody to ask, answer no); raises CancelToolCall on no."""
        asked = self.asker.interactive
        if asked:
            self.emit(_asked(call.id, question))
            answer = self._answer(question)
        else:
            answer = Answer("no")
        saved: tuple[str, ...] = ()
        error: str | None = None
        if answer.choice == "always" and question.saves:
            saved, error = self._save(question.saves)
        self._decided(call, question.summary, verdict, answer, asked, saved, error)
        if answer.choice != "no":
            return
        if asked:
            text = declined_by_user(question, answer.note)
        else:
            text = denied_headless(question, _MODE_HINTS.get(verdict.by))
        reason = verdict.reason if not asked else f"the user declined ({verdict.reason})"
        denial: dict[str, Any] = {"tool": call.name, "input": question.summary, "reason": reason}
        if not asked and question.saves:  # nobody could answer: a rule would have allowed it
            denial["allow_rules"] = list(question.saves)
        self.denials.append(denial)
        raise CancelToolCall(text)

    def _question(
        self,
        call: ToolCall,
        args: Mapping[str, Any],
        verdict: PermissionVerdict,
        escalate: str | None,
        cwd: Path,
        rules: RuleSet,
    ) -> Question:
        saves: tuple[str, ...] = ()
        # An escalation asks every time (a rule cannot approve leaving the sandbox), and
        # so does a hook that asks, so "yes, always" is not offered for either.
        if not escalate and verdict.by != "hook":
            try:
                proposal = rule_proposals.propose_rules(call.name, args, cwd, rules)
                saves = tuple(proposal.rules) if proposal.unsavable is None else ()
            except RuleError:  # a tool no rule can name: "always" is not offered
                saves = ()
        rule = verdict.rule
        return Question(
            tool=call.name,
            arguments=dict(args),
            summary=input_summary(call.name, args),
            reason=verdict.reason,
            rule=f"{rule.text} ({rule.source})" if rule is not None else None,
            escalate=escalate,
            saves=saves,
            settings_file=_shown_path(self.settings_file, cwd),
        )

    def _answer(self, question: Question) -> Answer:
        # A KeyboardInterrupt goes on up: the work is being ended (AppSession.cancel, an
        # editor's session/cancel, SIGTERM), and the turn ends as Ctrl-C ends it. An asker
        # for which Ctrl-C means "no" (the terminal's) answers so itself.
        try:
            return self.asker(question)
        except EOFError:  # the asker's input went away: no
            return Answer("no")

    def _save(self, texts: tuple[str, ...]) -> tuple[tuple[str, ...], str | None]:
        try:
            save = self.save_rules or rule_proposals.save_allow_rules
            save(self.project_root, texts)
            source = os.fspath(PROJECT_SETTINGS)
            self.saved += [rule_reader.parse_rule(text, "allow", source) for text in texts]
        except (OSError, RuleError) as error:
            return (), f"the rule was not saved: {error}"
        self.rules = self._ruleset()
        return texts, None

    def _decided(
        self,
        call: ToolCall,
        summary: str,
        verdict: PermissionVerdict,
        answer: Answer,
        asked: bool,
        saved: tuple[str, ...] = (),
        error: str | None = None,
        would_ask: bool = True,
    ) -> None:
        rule = verdict.rule
        self.emit(
            PermissionDecided(
                call_id=call.id,
                tool=call.name,
                input=summary,
                reason=verdict.reason,
                rule=f"{rule.text} ({rule.source})" if rule is not None else None,
                by=verdict.by,
                would_ask=would_ask,
                asked=asked,
                answer=answer.choice,
                note=answer.note or None,
                saved_rules=list(saved),
                save_error=error,
            )
        )


class PermissionCheck:
    """The tool registry's before-call check for a session's permissions."""

    def __init__(self, permissions: SessionPermissions, effect_of: EffectOf | None = None):
        """`effect_of`: what a tool does, by name; None reads it where the registry puts
        it, on the context its checks see (`ToolContext.effect`)."""
        self.permissions = permissions
        self.effect_of = effect_of

    def __call__(self, call: ToolCall, ctx: ToolContext) -> Proceed | None:
        effect = self.effect_of(call.name) if self.effect_of is not None else ctx.effect
        if effect is None or not isinstance(call.arguments, dict):
            return None  # the registry refuses what cannot run; nobody is asked about it
        args = {key: value for key, value in call.arguments.items() if value is not None}
        workspace = Path(ctx.workspace)
        return self.permissions.check(
            call,
            args,
            cast(Effect, effect),
            workspace,
            ctx.permission_hint,
            with_skill_rules(ctx.grant, ctx.skill_grants),
            ctx.mode_floor,
            ctx.rules_root,
            ctx.rule_names,
        )


_STRICTNESS = {"no-match": 0, "allow": 1, "ask": 2, "deny": 3}


def allow_hint(denials: Iterable[Mapping[str, Any]]) -> str | None:
    """How to allow what a headless run denied for want of someone to ask: one line."""
    rules = list(dict.fromkeys(r for d in denials for r in d.get("allow_rules") or ()))
    if not rules:
        return None
    flags = " ".join(f"--allowed-tools {shlex.quote(rule)}" for rule in rules)
    return (
        f"denied for want of someone to ask: allow it for a run with {flags}, or for good "
        f"under permissions.allow (profiles.json or {PROJECT_SETTINGS})"
    )


def _escalation(args: Mapping[str, Any]) -> str | None:
    reason = args.get("escalate")
    return reason.strip() if isinstance(reason, str) and reason.strip() else None


def _refusal_text(tool: str, verdict: PermissionVerdict) -> str:
    text = f"caretz refused this {tool} call; it did not run: {verdict.reason}."
    if verdict.by == "mode":
        return text + " Propose the change to the user instead (they choose the mode)."
    return text + " Do not retry it or a variant of it. Do the task another way, or ask the user."


def _asked(call_id: str, question: Question) -> PermissionAsked:
    return PermissionAsked(
        call_id=call_id,
        tool=question.tool,
        input=question.summary,
        reason=question.reason,
        rule=question.rule,
        escalate=question.escalate,
        saves=list(question.saves),
    )


def _shown_path(path: Path, cwd: Path) -> str:
    relative = os.path.relpath(path, cwd)
    return relative if not relative.startswith("..") else os.fspath(path)
