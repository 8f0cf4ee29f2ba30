"""The guard's words: the redirect note, the stop instruction and the notices.

The note is sent to the agent as a separate message at the end of each of the
turn's remaining requests (never appended to a tool result, never stored in
the conversation).
"""

from __future__ import annotations

from caretz.guard.model import Firing, Verdict
from caretz.text import one_line, plural

TASK_QUOTE_CHARS = 300

_PREAMBLE = "[loop guard] Automated message from caretz, not from the user."
_JUDGED = "A reviewer model checked this turn's tool activity and judged it stuck or off track."
_DETECTED = "A loop check on this turn's activity found it going in circles."
_NO_JUDGE = (
    "No reviewer model could answer ({why}), so a loop check acted on its own: it found "
    "this turn's activity going in circles."
)
_CLOSING = (
    "Stop repeating what isn't working and get back to that request. Before your next "
    "tool call, say in one sentence what you will do differently. This note stays at "
    "the end of the conversation for the rest of this turn."
)

# What the peer detectors saw, in a sentence each; "{what}" is their headline's detail.
_DETECTOR_SENTENCES = {
    "identical-call": "The same call keeps being made with the same arguments: {what}.",
    "repeated-error": "The same error keeps coming back: {what}.",
    "alternation": "The calls keep cycling through the same steps with the same results: {what}.",
    "tool-rounds": "There have been {what}.",
    "subagents": "A delegation went round in a circle or too deep: {what}.",
    "stream-text": "The answer text kept repeating itself: {what}.",
    "reasoning": "The reasoning kept going round in circles: {what}.",
    "same-answer": "The turn keeps ending with the same answer: {what}.",
    "tool-budget": "This turn has used a great many tool calls: {what}.",
    "rounds": "Round after round of calls ends the same way: {what}.",
    "no-progress": "The turn has stopped making progress: {what}.",
}


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".!?…" else text + "."


def detail(firing: Firing) -> str:
    """The headline without its "detector: " prefix."""
    prefix = f"{firing.detector}: "
    headline = firing.headline
    return headline[len(prefix) :] if headline.startswith(prefix) else headline


def trigger_sentence(firing: Firing) -> str:
    """What fired, in one specific sentence ("The same failure has occurred 3 times: …")."""
    if firing.detector == "repeat":
        return _sentence(
            f"The same failure has occurred {firing.count} times: {firing.fingerprint}"
        )
    if firing.detector == "failure-rate":
        return f"{firing.count} of the last {firing.out_of} tool calls failed."
    if firing.detector == "check-every":
        return firing.message or (
            f"A routine check after {plural(firing.count, 'more tool call')} found the turn going in "
            "circles or drifting from the task."
        )
    template = _DETECTOR_SENTENCES.get(firing.detector)
    if template is None:
        return _sentence(f"The {firing.detector} check fired: {detail(firing)}")
    return _sentence(template.format(what=detail(firing).rstrip(".")))


def quote_task(task: str, limit: int = TASK_QUOTE_CHARS) -> str:
    """The user's request on one line, cut when long, in double quotes."""
    return f'"{one_line(task, limit)}"'


def redirect_note(
    task: str, firing: Firing, verdict: Verdict | None, no_judge: str | None = None
) -> str:
    """The one note the agent gets when the turn is judged stuck (or a detector acts at
    once; `no_judge`: because no judge could answer, and why)."""
    if verdict is not None:
        lines = [f"{_PREAMBLE} {_JUDGED} {trigger_sentence(firing)}"]
        if verdict.reason.strip():
            lines.append(f"Diagnosis: {_sentence(verdict.reason)}")
        if verdict.try_instead.strip():
            lines.append(f"Try instead: {_sentence(verdict.try_instead)}")
    else:
        what = _sentence(firing.message) if firing.message.strip() else trigger_sentence(firing)
        detected = _NO_JUDGE.format(why=no_judge) if no_judge else _DETECTED
        lines = [f"{_PREAMBLE} {detected} {what}"]
    lines.append(f"The user's request for this turn: {quote_task(task)}")
    lines.append(_CLOSING)
    return "\n".join(lines)


def stop_instruction() -> str:
    """Sent with the turn's last request, which goes without tools."""
    return (
        f"{_PREAMBLE} This turn is still stuck after the earlier note, so caretz has "
        "ended it. Do not call any tools: none are available for this reply. Reply to "
        "the user now, briefly and plainly, with three things: what you changed in this "
        "turn (files and commands), what is still unfinished or failing, and what you "
        "need from the user to carry on."
    )


def _without_judge(no_judge: str | None) -> str:
    return (
        f" No judge could answer ({no_judge}), so the loop check acted on its own."
        if no_judge
        else ""
    )


def stop_notice(firing: Firing, no_judge: str | None = None) -> str:
    """The [loop-guard] notice the user sees when the guard ends a turn (`no_judge`:
    a loop check ended it on its own because no judge could answer, and why)."""
    return (
        f"[loop-guard] The turn was still stuck after the guard's note ({firing.headline}), "
        f"so the guard ended it.{_without_judge(no_judge)} The agent's report of what it "
        "changed, what is unfinished and what it needs from you follows. Reply to carry on "
        "from there."
    )


def end_turn_notice(firing: Firing, no_judge: str | None = None) -> str:
    """The notice when a cross-turn check (the same answer again) stops automatic turns."""
    return (
        f"[loop-guard] {firing.headline}.{_without_judge(no_judge)} The guard will not "
        "continue this automatically. Reply to carry on from there."
    )


def warn_message(firings: list[Firing]) -> str:
    """A one-time warning to the agent from checks that do not need the judge."""
    texts = [_sentence(f.message) if f.message.strip() else trigger_sentence(f) for f in firings]
    return f"{_PREAMBLE} " + " ".join(texts)


def block_reason(firing: Firing) -> str:
    """What the agent gets instead of the result of a refused call."""
    text = _sentence(firing.message) if firing.message.strip() else trigger_sentence(firing)
    return f"{_PREAMBLE} This call was refused and did not run. {text}"
