"""What the judge sees: a short, bounded summary of the turn, built from the guard's record.

The record is kept incrementally (O(1) per tool result, bounded memory for what
the summary shows), so building a summary costs the same at call 10 and at call
10,000. Secrets are redacted before the text leaves the machine.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from caretz.guard.model import Firing, ToolObservation, TurnContext, Verdict
from caretz.guard.normalize import error_line, failure_fingerprint, tool_label
from caretz.messages import Message, Usage

LAST_CALLS = 12
LAST_MESSAGES = 4
TOP_FAILURES = 3
TOP_REPEATED_CALLS = 5
SHOWN_VERDICTS = 5
SHOWN_FILES = 15

_TASK_CHARS = 1500
_PREVIOUS_CHARS = 600
_MESSAGE_CHARS = 400
_ARGS_CHARS = 240
_SNIPPET_CHARS = 160
_EXAMPLE_CHARS = 900
_EXAMPLE_LINES = 14

# A short follow-up leans on the turn before it, so the judge is shown that too.
SHORT_FOLLOW_UP_CHARS = 40
FOLLOW_UP_WORDS = frozenset(
    {
        "continue", "go on", "keep going", "carry on", "go ahead", "proceed", "resume",
        "retry", "try again", "again", "yes", "ok", "okay", "sure", "do it", "next",
        "fix it", "finish", "finish it", "and", "then",
    }
)  # fmt: skip
_PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "notebook_path")


def is_short_follow_up(task: str) -> bool:
    """A very short request, or one that opens like "continue", "go on" or "yes, do it"."""
    text = " ".join(task.split()).lower()
    if len(text) < SHORT_FOLLOW_UP_CHARS:
        return True
    first_words = re.sub(r"[^\w\s]", " ", text).split()
    return any(" ".join(first_words[:n]) in FOLLOW_UP_WORDS for n in (1, 2, 3))


class TopCounts:
    """Counts keys and keeps the `size` most frequent at hand, in O(size) per add.

    Counts only grow, so a key can only enter the top by passing its smallest member.
    """

    def __init__(self, size: int):
        self.size = size
        self.counts: dict[Any, int] = {}
        self.top: dict[Any, int] = {}

    def add(self, key: Any) -> tuple[int, bool]:
        """Count `key`; returns its count and whether it has just entered the top."""
        count = self.counts.get(key, 0) + 1
        self.counts[key] = count
        if key in self.top:
            self.top[key] = count
            return count, False
        if len(self.top) < self.size:
            self.top[key] = count
            return count, True
        weakest = min(self.top, key=self.top.__getitem__)
        if count <= self.top[weakest]:
            return count, False
        del self.top[weakest]
        self.top[key] = count
        return count, True

    def ranked(self) -> list[tuple[Any, int]]:
        return sorted(self.top.items(), key=lambda item: -item[1])


@dataclass
class FailureExample:
    first_step: int
    last_step: int
    raw: str  # one raw output excerpt around the telling line


@dataclass
class VerdictEntry:
    step: int | None
    headline: str
    verdict: Verdict
    error: str | None


@dataclass
class TurnRecord:
    """Everything the guard has seen this turn that the summary may show."""

    ctx: TurnContext
    clock: Callable[[], float]
    started_at: float
    calls: int = 0
    failures: int = 0
    usage: Usage = field(default_factory=Usage)
    per_tool: Counter[str] = field(default_factory=Counter)
    last_calls: deque[ToolObservation] = field(default_factory=lambda: deque(maxlen=LAST_CALLS))
    messages: deque[tuple[int, str]] = field(default_factory=lambda: deque(maxlen=LAST_MESSAGES))
    verdicts: list[VerdictEntry] = field(default_factory=list)
    failure_counts: TopCounts = field(default_factory=lambda: TopCounts(TOP_FAILURES))
    failure_examples: dict[str, FailureExample] = field(default_factory=dict)
    failure_first_step: dict[str, int] = field(default_factory=dict)
    call_counts: TopCounts = field(default_factory=lambda: TopCounts(TOP_REPEATED_CALLS))
    call_labels: dict[bytes, str] = field(default_factory=dict)
    files_touched: dict[str, None] = field(default_factory=dict)  # ordered set, newest last
    files_edited: dict[str, int] = field(default_factory=dict)  # edits per file, newest last

    @classmethod
    def start(cls, ctx: TurnContext, clock: Callable[[], float]) -> TurnRecord:
        return cls(ctx=ctx, clock=clock, started_at=clock())

    # -- recording ----------------------------------------------------------------
    def add_call(self, obs: ToolObservation) -> None:
        self.calls += 1
        self.per_tool[obs.tool] += 1
        self.last_calls.append(obs)
        self._count_call(obs)
        for path in _paths(obs.args):
            _touch(self.files_touched, path)
        for path in obs.files_changed:
            _touch(self.files_touched, path)
            self.files_edited[path] = self.files_edited.pop(path, 0) + 1
        if obs.failed is True:
            self.failures += 1
            self._count_failure(obs)

    def add_response(self, message: Message, usage: Usage) -> None:
        self.usage = self.usage + usage
        if message.content.strip():
            self.messages.append((self.calls, message.content.strip()))

    def add_verdict(
        self, step: int | None, headline: str, verdict: Verdict, error: str | None
    ) -> None:
        self.verdicts.append(VerdictEntry(step, headline, verdict, error))

    @property
    def successes(self) -> int:
        return self.calls - self.failures

    def _count_call(self, obs: ToolObservation) -> None:
        key = _call_key(obs.tool, obs.args)
        _, entered = self.call_counts.add(key)
        if entered:
            self.call_labels[key] = call_label(obs.tool, obs.args)
            # Labels only for the keys on show: memory stays bounded.
            for stale in [k for k in self.call_labels if k not in self.call_counts.top]:
                del self.call_labels[stale]

    def _count_failure(self, obs: ToolObservation) -> None:
        fingerprint = failure_fingerprint(obs)
        first_step = self.failure_first_step.setdefault(fingerprint, obs.index)
        _, entered = self.failure_counts.add(fingerprint)
        example = self.failure_examples.get(fingerprint)
        if example is not None:
            example.last_step = obs.index
        elif entered:
            self.failure_examples[fingerprint] = FailureExample(
                first_step, obs.index, _excerpt(obs.output)
            )
        for stale in [k for k in self.failure_examples if k not in self.failure_counts.top]:
            del self.failure_examples[stale]


def _touch(ordered: dict[str, None], path: str) -> None:
    ordered.pop(path, None)
    ordered[path] = None


def _paths(args: dict[str, Any]) -> list[str]:
    paths = [args[key] for key in _PATH_KEYS if isinstance(args.get(key), str)]
    many = args.get("paths")
    if isinstance(many, list):
        paths.extend(p for p in many if isinstance(p, str))
    return paths


def _call_key(tool: str, args: dict[str, Any]) -> bytes:
    encoded = json.dumps(args, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.blake2b(f"{tool}\0{encoded}".encode(), digest_size=16).digest()


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def call_label(tool: str, args: dict[str, Any]) -> str:
    """A call in one short line: `Bash go test ./...`, `Edit {"path":"db.go",...}`."""
    command = args.get("command")
    if isinstance(command, str) and len(args) <= 2:
        return f"{tool_label(tool)} {_cut(_one_line(command), _ARGS_CHARS)}"
    shortened = {
        key: _cut(value, 80) if isinstance(value, str) else value for key, value in args.items()
    }
    encoded = json.dumps(shortened, sort_keys=True, separators=(",", ":"), default=str)
    return f"{tool_label(tool)} {_cut(encoded, _ARGS_CHARS)}"


def _excerpt(output: str) -> str:
    """A few raw lines ending just after the telling line."""
    lines = output.splitlines()
    telling = error_line(output)
    end = len(lines)
    for position in range(len(lines) - 1, -1, -1):
        if telling and lines[position].strip() == telling:
            end = min(len(lines), position + 3)
            break
    chosen = [line.rstrip() for line in lines[max(0, end - _EXAMPLE_LINES) : end]]
    text = "\n".join(chosen).strip("\n")
    return text if len(text) <= _EXAMPLE_CHARS else "…" + text[-_EXAMPLE_CHARS:]


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
        _size_section(record),
        _messages_section(record),
        _verdicts_section(record),
        _last_calls_section(record),
        _failures_section(record),
        _repeated_calls_section(record),
        _edited_section(record),
    ]
    return redact("\n\n".join(section for section in sections if section))


def _quoted(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) > limit:
        head = text[: limit * 2 // 3]
        tail = text[-(limit // 3) :]
        text = f"{head} …[{len(text) - len(head) - len(tail)} chars cut]… {tail}"
    return '"""\n' + text + '\n"""'


def _task_section(ctx: TurnContext) -> str:
    lines = ["## The user's request for this turn", _quoted(ctx.task, _TASK_CHARS)]
    if ctx.previous_request and is_short_follow_up(ctx.task):
        lines += [
            "This is a short follow-up; the request before it was:",
            _quoted(ctx.previous_request, _PREVIOUS_CHARS),
        ]
        if ctx.previous_answer:
            lines += ["and the agent answered:", _quoted(ctx.previous_answer, _PREVIOUS_CHARS)]
    if ctx.agent_name != "main":
        lines.append(f"(This turn is run by the subagent {ctx.agent_name!r}.)")
    return "\n".join(lines)


def _fired_section(fired: Sequence[Firing]) -> str:
    if not fired:
        return ""
    lines = ["## Why you are asked now"]
    lines += [f"- {_cut(firing.headline, 300)}" for firing in fired]
    return "\n".join(lines)


def _size_section(record: TurnRecord) -> str:
    elapsed = _duration(record.clock() - record.started_at)
    usage = record.usage
    per_tool = ", ".join(
        f"{tool_label(tool)} {count}" for tool, count in record.per_tool.most_common(8)
    )
    lines = [
        "## The turn so far",
        f"{record.calls} tool calls, {record.failures} failed, {elapsed}, "
        f"{usage.input_tokens:,} input / {usage.output_tokens:,} output tokens.",
    ]
    if per_tool:
        lines.append(f"Calls per tool: {per_tool}.")
    touched = list(record.files_touched)
    if touched:
        shown = ", ".join(_cut(path, 80) for path in touched[-SHOWN_FILES:])
        more = f" (latest {SHOWN_FILES} shown)" if len(touched) > SHOWN_FILES else ""
        lines.append(f"Files touched: {len(touched)}{more}: {shown}.")
    return "\n".join(lines)


def _messages_section(record: TurnRecord) -> str:
    if not record.messages:
        return ""
    lines = ["## The agent's last messages (what it says it is doing)"]
    for calls, text in record.messages:
        lines.append(f"- after {calls} calls: {_cut(_one_line(text), _MESSAGE_CHARS)}")
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
            outcome = f"{state} ({entry.verdict.confidence:.2f}): {_cut(entry.verdict.reason, 200)}"
        lines.append(f"- {where}, {_cut(entry.headline, 160)}: {outcome}")
    return "\n".join(lines)


def _last_calls_section(record: TurnRecord) -> str:
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
    return f"{status}: {_cut(snippet, _SNIPPET_CHARS)}" if snippet else status


def _failures_section(record: TurnRecord) -> str:
    repeated = [(fp, count) for fp, count in record.failure_counts.ranked() if count > 1]
    if not repeated:
        return ""
    lines = ["## The most repeated failures (normalized), each with one raw output"]
    for fingerprint, count in repeated:
        example = record.failure_examples.get(fingerprint)
        lines.append(f"- {count}× {_cut(fingerprint, 300)}")
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
        lines.append(f"- {count}× {record.call_labels.get(key, '(call)')}")
    return "\n".join(lines)


def _edited_section(record: TurnRecord) -> str:
    if not record.files_edited:
        return ""
    edited = list(record.files_edited.items())[-SHOWN_FILES:]
    shown = ", ".join(f"{_cut(path, 80)} ({count}×)" for path, count in edited)
    more = f", latest {SHOWN_FILES} shown" if len(record.files_edited) > SHOWN_FILES else ""
    return f"## Files edited ({len(record.files_edited)}{more})\n{shown}"


# -- redaction -------------------------------------------------------------------------

REDACTED = "[redacted]"


@dataclass(frozen=True)
class _Shape:
    """A secret recognised by its own shape (a provider key, a JWT, a key block)."""

    pattern: re.Pattern[str]
    needs: tuple[str, ...]  # lower-case: the pattern runs only when one of these occurs
    keep: int = 0  # a group kept before [redacted] (0: none)


@dataclass(frozen=True)
class _Named:
    """A secret recognised by the name before it: `NAME=value`, `Authorization: …`.

    Names are found with str.find on the lower-cased text (case-insensitive regex
    alternations are slow); `follow` must match right after a name, its group 1
    is kept and the rest becomes [redacted].
    """

    names: tuple[str, ...]
    follow: re.Pattern[str]


def _shape(pattern: str, *needs: str, keep: int = 0) -> _Shape:
    return _Shape(re.compile(pattern, re.DOTALL), needs, keep)


_SHAPES: list[_Shape] = [
    _shape(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
           "private key"),
    _shape(r"(://[^\s:/@]+:)[^\s@/]+(?=@)", "://", keep=1),  # user:password@host
    _shape(r"sk-ant-[A-Za-z0-9_\-]{8,}", "sk-ant-"),
    _shape(r"sk-(?:proj-|svcacct-|live_|test_)?[A-Za-z0-9_\-]{16,}", "sk-"),
    _shape(r"gh[pousr]_[A-Za-z0-9]{20,}", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    _shape(r"github_pat_[A-Za-z0-9_]{20,}", "github_pat_"),
    _shape(r"glpat-[A-Za-z0-9_\-]{16,}", "glpat-"),
    _shape(r"(?:AKIA|ASIA)[0-9A-Z]{16}", "akia", "asia"),
    _shape(r"xox[abprse]-[A-Za-z0-9\-]{10,}", "xox"),
    _shape(r"AIza[0-9A-Za-z_\-]{35}", "aiza"),
    _shape(r"hf_[A-Za-z0-9]{30,}", "hf_"),
    _shape(r"npm_[A-Za-z0-9]{36}", "npm_"),
    _shape(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", "eyj"),
]  # fmt: skip

_VALUE = r"(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;}]+)"
_NAMED: list[_Named] = [
    _Named(("authorization",), re.compile(r"([ \t]*[:=][ \t]*\"?)[^\n\"']+")),
    _Named(("bearer", "token"), re.compile(r"(\s+)[A-Za-z0-9._~+/=\-]{16,}")),
    # NAME=value, NAME: value, name="value", "name": "value". The name must end with
    # the word, so that TokenError: or max_tokens=10 are left alone.
    _Named(
        (
            "token", "secret", "password", "passwd", "passphrase", "credential",
            "credentials", "apikey", "api_key", "api-key", "accesskey", "access_key",
            "access-key", "privatekey", "private_key", "private-key", "authkey", "auth_key",
        ),
        re.compile(r"([\"']?[ \t]*[:=][ \t]*)" + _VALUE),
    ),
]  # fmt: skip


def redact(text: str) -> str:
    """`text` with API keys, tokens, passwords and auth headers replaced by [redacted]."""
    lowered = _lowered(text)
    text = _redact_named(text, lowered)
    for shape in _SHAPES:
        # Gates use the text before the named pass: redacting only removes text.
        if any(needed in lowered for needed in shape.needs):
            keep = shape.keep
            text = shape.pattern.sub(
                lambda m, keep=keep: (m.group(keep) if keep else "") + REDACTED, text
            )
    return text


def _lowered(text: str) -> str:
    """`text` in lower case, character for character (so that positions still line up)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(ch.lower()[:1] or ch for ch in text)


def _redact_named(text: str, lowered: str) -> str:
    spans: list[tuple[int, int]] = []
    for named in _NAMED:
        for name in named.names:
            start = lowered.find(name)
            while start != -1:
                match = named.follow.match(text, start + len(name))
                if match is not None:
                    spans.append((match.end(1), match.end()))
                start = lowered.find(name, start + len(name))
    if not spans:
        return text
    pieces, position = [], 0
    for start, end in sorted(spans):
        if start < position:
            continue  # overlaps a value already redacted
        pieces += [text[position:start], REDACTED]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)
