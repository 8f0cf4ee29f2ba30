"""What the judge sees: a short, bounded summary of the turn, built from the guard's record.

Whatever the turn's length the summary stays a few thousand tokens, and secrets
are redacted before the text leaves the machine. The sections are public so that
the goal evaluator's summary shows a turn the same way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from caretz.guard.model import Firing, ToolObservation, TurnContext
from caretz.guard.normalize import error_line, tool_label
from caretz.guard.record import MAX_DISTINCT, CallOutcomes, TurnRecord, call_label
from caretz.plan import plan_lines, plan_progress
from caretz.secrets import redact
from caretz.text import one_line, plural, shorten

SHOWN_VERDICTS = 5
SHOWN_FILES = 15

_TASK_CHARS = 1500
_PREVIOUS_CHARS = 600
_MESSAGE_CHARS = 400
_SNIPPET_CHARS = 160

# A short follow-up leans on the turn before it, so the judge is shown that too.
SHORT_FOLLOW_UP_CHARS = 40
FOLLOW_UP_WORDS = frozenset(
    {
        "continue", "go on", "keep going", "carry on", "go ahead", "proceed", "resume",
        "retry", "try again", "again", "yes", "ok", "okay", "sure", "do it", "next",
        "fix it", "finish", "finish it", "and", "then",
    }
)  # fmt: skip


def is_short_follow_up(task: str) -> bool:
    """A very short request, or one that opens like "continue", "go on" or "yes, do it"."""
    text = one_line(task).lower()
    if len(text) < SHORT_FOLLOW_UP_CHARS:
        return True
    first_words = re.sub(r"[^\w\s]", " ", text).split()
    return any(" ".join(first_words[:n]) in FOLLOW_UP_WORDS for n in (1, 2, 3))


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


# -- the summary --------------------------------------------------------------------


def build_summary(record: TurnRecord, fired: Sequence[Firing] = ()) -> str:
    """The turn in a few thousand tokens at most, whatever its length; secrets redacted."""
    sections = [
        _task_section(record.ctx),
        _fired_section(fired),
        size_section(record),
        plan_section(record),
        messages_section(record),
        _verdicts_section(record),
        progress_section(record),
        last_calls_section(record),
        failures_section(record),
        _repeated_calls_section(record),
        edited_section(record),
    ]
    return redact("\n\n".join(section for section in sections if section))


def quoted(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) > limit:
        head = text[: limit * 2 // 3]
        tail = text[-(limit // 3) :]
        text = f"{head} …[{len(text) - len(head) - len(tail)} chars cut]… {tail}"
    return '"""\n' + text + '\n"""'


def _task_section(ctx: TurnContext) -> str:
    lines = ["## The user's request for this turn", quoted(ctx.task, _TASK_CHARS)]
    if ctx.previous_request and is_short_follow_up(ctx.task):
        lines += [
            "This is a short follow-up; the request before it was:",
            quoted(ctx.previous_request, _PREVIOUS_CHARS),
        ]
        if ctx.previous_answer:
            lines += ["and the agent answered:", quoted(ctx.previous_answer, _PREVIOUS_CHARS)]
    if ctx.agent_name != "main":
        lines.append(f"(This turn is run by the subagent {ctx.agent_name!r}.)")
    return "\n".join(lines)


def _fired_section(fired: Sequence[Firing]) -> str:
    if not fired:
        return ""
    lines = ["## Why you are asked now"]
    lines += [f"- {shorten(firing.headline, 300)}" for firing in fired]
    return "\n".join(lines)


def size_section(record: TurnRecord) -> str:
    elapsed = _duration(record.clock() - record.started_at)
    usage = record.usage
    per_tool = ", ".join(
        f"{tool_label(tool)} {count}" for tool, count in record.per_tool.most_common(8)
    )
    lines = [
        "## The turn so far",
        f"{plural(record.calls, 'tool call')}, {record.failures} failed, {elapsed}, "
        f"{usage.input_tokens:,} input / {usage.output_tokens:,} output tokens.",
    ]
    if per_tool:
        lines.append(f"Calls per tool: {per_tool}.")
    touched = list(record.files_touched)
    if touched:
        shown = ", ".join(shorten(path, 80) for path in touched[-SHOWN_FILES:])
        more = f" (latest {SHOWN_FILES} shown)" if len(touched) > SHOWN_FILES else ""
        lines.append(f"Files touched: {len(touched)}{more}: {shown}.")
    return "\n".join(lines)


def plan_section(record: TurnRecord) -> str:
    """The agent's own task list, to compare with what its calls do."""
    if not record.plan:
        return ""
    lines = [f"## The agent's plan ({plan_progress(record.plan)})"]
    lines += [shorten(line, 200) for line in plan_lines(record.plan)]
    return "\n".join(lines)


def messages_section(record: TurnRecord) -> str:
    if not record.messages:
        return ""
    lines = ["## The agent's last messages (what it says it is doing)"]
    for calls, text in record.messages:
        lines.append(f"- after {calls} calls: {one_line(text, _MESSAGE_CHARS)}")
    return "\n".join(lines)


def _verdicts_section(record: TurnRecord) -> str:
    if not record.verdicts:
        return ""
    lines = ["## Earlier verdicts this turn"]
    skipped = len(record.verdicts) - SHOWN_VERDICTS
    if skipped > 0:
        lines.append(f"({skipped} earlier checks not shown)")
    for entry in record.verdicts[-SHOWN_VERDICTS:]:
        where = f"at call {entry.step + 1}" if entry.step is not None else "at end"
        if entry.error:
            outcome = f"no verdict ({entry.error})"
        else:
            state = "stuck" if entry.verdict.stuck else "not stuck"
            outcome = (
                f"{state} ({entry.verdict.confidence:.2f}): {shorten(entry.verdict.reason, 200)}"
            )
        lines.append(f"- {where}, {shorten(entry.headline, 160)}: {outcome}")
    return "\n".join(lines)


def progress_section(record: TurnRecord) -> str:
    """Signs of progress: task files changed, new outputs, scratch files left behind."""
    progress = record.progress
    if not progress.calls:
        return ""
    lines = [
        "## Signs of progress",
        f"{progress.progressed} of {plural(progress.calls, 'call')} changed a task file or "
        f"returned something new; the last {plural(progress.since_progress, 'call')} did "
        "neither.",
        f"New outputs in the last {len(progress.recent_new)} calls: {progress.recent_new_outputs}.",
    ]
    if progress.task_files:
        changed = list(progress.task_files.items())[-SHOWN_FILES:]
        shown = ", ".join(f"{shorten(path, 80)} ({count}×)" for path, count in changed)
        lines.append(f"Task files changed: {shown}.")
    else:
        lines.append("Task files changed: none.")
    unused = progress.unused_scratch()
    if unused:
        shown = ", ".join(shorten(name, 60) for name in unused[-SHOWN_FILES:])
        lines.append(f"Scratch files created this turn and used at most once: {shown}.")
    return "\n".join(lines)


def last_calls_section(record: TurnRecord) -> str:
    if not record.last_calls:
        return ""
    lines = [f"## The last {len(record.last_calls)} calls, oldest first"]
    for obs in record.last_calls:
        lines.append(f"#{obs.index + 1} {call_label(obs.tool, obs.args)}")
        lines.append(f"    → {_outcome(obs)}")
    return "\n".join(lines)


def _outcome(obs: ToolObservation) -> str:
    if obs.failed is True:
        status = f"failed (exit {obs.exit_code})" if obs.exit_code is not None else "failed"
        snippet = error_line(obs.output)
    else:
        status = "ok" if obs.failed is False else "finished"
        lines = [line.strip() for line in obs.output.splitlines() if line.strip()]
        snippet = lines[-1] if lines else ""
    if obs.files_changed:
        status += f", changed {', '.join(obs.files_changed[:3])}"
    return f"{status}: {shorten(snippet, _SNIPPET_CHARS)}" if snippet else status


def failures_section(record: TurnRecord) -> str:
    repeated = [(fp, count) for fp, count in record.failure_counts.ranked() if count > 1]
    if not repeated:
        return ""
    lines = ["## The most repeated failures (normalized), each with one raw output"]
    for fingerprint, count in repeated:
        example = record.failure_examples.get(fingerprint)
        lines.append(f"- {count}× {shorten(fingerprint, 300)}")
        if example is not None:
            lines.append(
                f"  first at call {example.first_step + 1}, last at call {example.last_step + 1}:"
            )
            lines += [f"    | {line}" for line in example.raw.splitlines()]
    return "\n".join(lines)


def _repeated_calls_section(record: TurnRecord) -> str:
    repeated = [(key, count) for key, count in record.call_counts.ranked() if count > 1]
    if not repeated:
        return ""
    lines = ["## Calls repeated with the same arguments"]
    for key, count in repeated:
        line = f"- {count}× {record.call_labels.get(key, '(call)')}"
        outcomes = record.call_outcomes.get(key)
        if outcomes is not None:
            line += f": {_outcomes_text(outcomes)}"
        lines.append(line)
    return "\n".join(lines)


def _outcomes_text(outcomes: CallOutcomes) -> str:
    """Waiting (the same successful output) told apart from retrying and from progress."""
    if outcomes.distinct == 1 and outcomes.ok:
        return f"the same call returned the same successful output {outcomes.same} times"
    if outcomes.distinct == 1:
        return f"it failed with the same output {outcomes.same} times"
    more = "+" if outcomes.distinct >= MAX_DISTINCT else ""
    latest = f", the latest {outcomes.same} in a row" if outcomes.same > 1 else ""
    return f"its output changed between calls ({outcomes.distinct}{more} different outputs{latest})"


def edited_section(record: TurnRecord) -> str:
    if not record.files_edited:
        return ""
    edited = list(record.files_edited.items())[-SHOWN_FILES:]
    shown = ", ".join(f"{shorten(path, 80)} ({count}×)" for path, count in edited)
    more = f", latest {SHOWN_FILES} shown" if len(record.files_edited) > SHOWN_FILES else ""
    return f"## Files edited ({len(record.files_edited)}{more})\n{shown}"
