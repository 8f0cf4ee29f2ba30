"""Goals as turn policy: turns on the same Agent until an evaluator finds the goal met.

After each turn the evaluator reads a bounded summary of it (`goal/summary.py`)
and answers met / impossible / not met. Not met, the next turn starts with an
automated message naming the goal, the reason and the next step. Every turn is
an ordinary turn of the agent, so the loop guard, the limits and the session log
apply unchanged; continuation turns tell the guard they carry on the same work,
so its redirect-once rule counts the whole goal as one turn.

How a goal ends, with its exit code: met 0, judged impossible 5, `goal.maxTurns`
or a budget limit 4. The loop guard ending a turn (3), Ctrl-C (130) or a runtime
failure (1) pause it instead, to be resumed.
"""

from __future__ import annotations

import dataclasses

from caretz.agent.agent import Agent
from caretz.agent.limits import usage_report
from caretz.agent.outcomes import GOAL_IMPOSSIBLE, Interrupted, LimitReached, Outcome
from caretz.goal.evaluator import Evaluation, Evaluator
from caretz.goal.notes import (
    continuation_message,
    ended_message,
    paused_message,
    resume_message,
)
from caretz.goal.recorder import TurnRecorder
from caretz.goal.state import Goal, Status, TurnVerdict
from caretz.goal.summary import build_goal_summary
from caretz.guard.model import TurnContext
from caretz.guard.record import TurnRecord
from caretz.session.events import EventLog
from caretz.session.records import goal as records
from caretz.tools.todo import latest_plan

_PAUSES = {
    "loop_guard": "the loop guard ended the turn",
    "interrupted": "interrupted",
    "error": "the turn failed",
    "hook": "a hook stopped the turn",
}


class GoalDriver:
    """Runs a goal's turns on `agent`, asking `evaluator` after each one."""

    def __init__(self, agent: Agent, goal: Goal, evaluator: Evaluator, timeout_s: float):
        self.agent = agent
        self.goal = goal
        self.evaluator = evaluator
        self.timeout_s = timeout_s
        self.evaluator_cost = 0.0  # priced evaluator calls of this run, for the budget

    @property
    def log(self) -> EventLog:
        return self.agent.parts.log

    # -- starting -------------------------------------------------------------------------
    def start(self, prompt: str) -> Outcome:
        """A new goal: `prompt` (the user's) is its first turn."""
        goal = self.goal
        goal.prompt = prompt
        self.log.emit(
            records.GoalSet(
                condition=goal.condition,
                prompt=prompt,
                max_turns=goal.max_turns,
                evaluator=self.evaluator.model_ref,
            )
        )
        return self.drive(prompt, from_user=True)

    def resume(self, prompt: str | None = None) -> Outcome:
        """A paused goal carries on: with the user's `prompt`, else an automated message."""
        goal = self.goal
        goal.status = "active"
        self.log.emit(records.GoalResumed(turn=goal.turns, max_turns=goal.max_turns))
        if goal.turns >= goal.max_turns:  # paused on its last turn: nothing left to run
            last = goal.last
            reason = (last.error or last.verdict.reason) if last is not None else ""
            return self.end("max_turns", LimitReached.ending.exit_code, reason, None)
        if prompt:
            return self.drive(prompt, from_user=True)
        # Not a continuation for the guard: a resume by the user earns a fresh redirect.
        return self.drive(resume_message(goal), from_user=False, continuation=False)

    # -- the turns ------------------------------------------------------------------------
    def drive(self, prompt: str, *, from_user: bool, continuation: bool = False) -> Outcome:
        agent = self.agent
        recorder = TurnRecorder(agent.config.name, lambda: latest_plan(agent.conversation.messages))
        self.log.subscribe(recorder)
        result: Outcome | None = None
        try:
            while True:
                result = self.turn(prompt, from_user, continuation)
                if result.status != "done":
                    return self.unfinished(result)
                evaluation = self.evaluate(recorder.record, result.text)
                ended = self.decide(evaluation, result)
                if ended is not None:
                    return ended
                verdict = evaluation.verdict
                prompt = continuation_message(self.goal, verdict, evaluation.error)
                from_user, continuation = False, True
        except KeyboardInterrupt:
            return self.pause(Interrupted.ending.exit_code, "interrupted", result)
        finally:
            self.log.unsubscribe(recorder)

    def turn(self, prompt: str, from_user: bool, continuation: bool) -> Outcome:
        totals = self.agent.conversation.totals
        before = dataclasses.replace(totals)
        result = self.agent.run_turn(prompt, from_user=from_user, continuation=continuation)
        self.goal.turns += 1
        self.goal.add_spend(usage_report(totals, before).cost_usd)  # the judge's share in
        return result

    def unfinished(self, result: Outcome) -> Outcome:
        """A turn that did not answer: a limit ends the goal; anything else pauses it."""
        if result.status == "limit":
            return self.end("limit", LimitReached.ending.exit_code, result.message, result)
        why = _PAUSES.get(result.status, result.status)
        if result.message and result.status == "error":
            why = f"{why}: {result.message}"
        return self.pause(result.exit_code, why, result)

    # -- the evaluator ----------------------------------------------------------------------
    def evaluate(self, record: TurnRecord | None, answer: str) -> Evaluation:
        goal, agent = self.goal, self.agent
        if record is None:  # no Turn.Started seen: an empty record of the turn
            record = TurnRecord.start(TurnContext(task="", model_ref=""), agent.parts.clock)
        goal.note_files(record.files_edited)
        summary = build_goal_summary(goal, record, answer)
        self.log.emit(
            records.GoalEvaluating(
                turn=goal.turns, max_turns=goal.max_turns, model=self.evaluator.model_ref
            )
        )
        evaluation = self.evaluator(summary, self.timeout_s)
        cost = agent.parts.price(evaluation.model, evaluation.usage)
        if cost is not None:
            self.evaluator_cost += cost
            goal.add_spend(cost)
        goal.verdicts.append(TurnVerdict(goal.turns, evaluation.verdict, evaluation.error))
        self.log.emit(
            records.GoalEvaluated(
                turn=goal.turns,
                max_turns=goal.max_turns,
                verdict=evaluation.verdict.to_dict(),
                error=evaluation.error,
                model=evaluation.model,
                latency_s=round(evaluation.latency_s, 3),
                usage=evaluation.usage.to_dict(),
                cost_usd=cost,
                spend_usd=goal.spend_usd,
                files_changed=list(goal.files_changed),
                summary=summary,
            )
        )
        return evaluation

    def decide(self, evaluation: Evaluation, result: Outcome) -> Outcome | None:
        """Met, impossible, out of turns or budget: the goal ends; else None (carry on)."""
        goal, verdict = self.goal, evaluation.verdict
        if evaluation.error is None and verdict.met:
            return self.end("met", 0, verdict.reason, result)
        if evaluation.error is None and verdict.impossible:
            return self.end("impossible", GOAL_IMPOSSIBLE, verdict.reason, result)
        reason = evaluation.error or verdict.reason
        if goal.turns >= goal.max_turns:
            return self.end("max_turns", LimitReached.ending.exit_code, reason, result)
        over = self.over_budget()
        if over is not None:
            return self.end("limit", LimitReached.ending.exit_code, over, result)
        return None

    def over_budget(self) -> str | None:
        """The run's budget counts the evaluator's priced calls too."""
        budget = self.agent.config.limits.max_budget_usd
        spent = usage_report(self.agent.conversation.totals).cost_usd
        if budget is None or spent is None:
            return None
        spent += self.evaluator_cost
        if spent < budget:
            return None
        return f"budget limit reached: ${spent:.4f} spent of --max-budget-usd {budget:g}"

    # -- how it ends --------------------------------------------------------------------------
    def end(self, status: Status, exit_code: int, reason: str, result: Outcome | None) -> Outcome:
        goal = self.goal
        goal.status = status
        message = ended_message(goal, reason)
        end_goal(self.log, goal, status, exit_code, message)
        return goal_run(goal, exit_code, message, result)

    def pause(self, exit_code: int, why: str, result: Outcome | None) -> Outcome:
        message = pause_goal(self.log, self.goal, why, exit_code)
        return goal_run(self.goal, exit_code, message, result)


def goal_run(goal: Goal, exit_code: int, message: str, last_turn: Outcome | None) -> Outcome:
    """How a run of the goal's turns came out: the goal's status and exit code (met 0,
    paused with the turn's code, impossible 5…), why it ended or paused, the last turn's
    answer (or the guard's report), and that turn's own outcome as `last_turn`."""
    text = last_turn.text if last_turn is not None else ""
    return Outcome(
        status=goal.status,
        exit_code=exit_code,
        message=message,
        text=text,
        goal=goal.to_dict(),
        last_turn=last_turn,
    )


def pause_goal(log: EventLog, goal: Goal, why: str, exit_code: int = 0) -> str:
    """Mark `goal` paused (also `/goal pause`); returns the line that says so."""
    goal.status = "paused"
    message = paused_message(goal, why)
    log.emit(
        records.GoalPaused(
            turn=goal.turns,
            max_turns=goal.max_turns,
            reason=why,
            exit_code=exit_code,
            message=message,
            spend_usd=goal.spend_usd,
        )
    )
    return message


def end_goal(log: EventLog, goal: Goal, status: Status, exit_code: int, message: str) -> None:
    """Record the goal's end (also `/goal clear`)."""
    goal.status = status
    log.emit(
        records.GoalEnded(
            status=status,
            exit_code=exit_code,
            message=message,
            turns=goal.turns,
            max_turns=goal.max_turns,
            spend_usd=goal.spend_usd,
        )
    )
