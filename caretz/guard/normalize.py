"""Make tool output comparable across runs, and name a failure by its telling line.

What changes from run to run (temp dirs, absolute paths, line numbers,
timestamps, durations, addresses, IDs, pids, local ports) is replaced by a
placeholder. What tells failures apart (messages, test names, exception types)
is kept as it is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from caretz.guard.command_lines import normalize_command
from caretz.guard.model import ToolObservation
from caretz.text import one_line, shorten

_FINGERPRINT_LINE_CHARS = 200

Replacement = str | Callable[[re.Match[str]], str]


@dataclass(frozen=True)
class _Rule:
    """One substitution. It runs only when its cheap preconditions hold.

    Python's `re` scans every position for every pattern, so patterns start
    with a literal where they can (its fast search), and the others wait for
    a substring (`needs`, lower-case) or a cheaper pattern (`hints`) to occur.
    """

    pattern: re.Pattern[str]
    replacement: Replacement
    needs: tuple[str, ...] = ()
    hints: tuple[re.Pattern[str], ...] = ()  # one of these must be found

    def apply(self, text: str, lowered: str) -> str:
        if self.needs and not any(needed in lowered for needed in self.needs):
            return text
        if self.hints and not any(hint.search(text) for hint in self.hints):
            return text
        return self.pattern.sub(self.replacement, text)


def _rule(
    pattern: str,
    replacement: Replacement,
    needs: tuple[str, ...] = (),
    hints: tuple[str, ...] = (),
) -> _Rule:
    return _Rule(re.compile(pattern), replacement, needs, tuple(map(re.compile, hints)))


def _hex_id(match: re.Match[str]) -> str:
    """A run of 7+ hex digits is an ID or hash when it mixes letters and digits."""
    word = match.group()
    text, start, end = match.string, match.start(), match.end()
    standalone = (start == 0 or not _WORD_CHAR.match(text[start - 1])) and (
        end == len(text) or not _WORD_CHAR.match(text[end])
    )
    mixed = any(c in "0123456789" for c in word) and any(c not in "0123456789" for c in word)
    return "<hex>" if standalone and mixed else word


_WORD_CHAR = re.compile(r"\w")

# Applied in this order.
_RULES: list[_Rule] = [
    # Terminal colours and cursor codes; carriage returns.
    _rule(r"\x1b\[[0-9;?]*[ -/]*[@-~]", "", needs=("\x1b",)),
    _rule(r"\r\n?", "\n", needs=("\r",)),
    _rule(
        r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
        "<id>",
        hints=(r"-[0-9a-fA-F]{4}-",),
    ),
    # Timestamps and dates: ISO 8601, Go's log format, bare clock times, epochs.
    _rule(
        r"\b\d{4}[-/]\d{2}[-/]\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:[.,]\d+)?"
        r"(?:Z|[+-]\d{2}:?\d{2}\b)?|\b)",
        lambda match: "<time>" if len(match.group()) > 10 else "<date>",
        hints=(r"-\d\d-\d\d", r"/\d\d/\d\d"),
    ),
    _rule(r"(?<![:\w.])\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b", "<time>", hints=(r":\d\d:\d\d",)),
    _rule(r"1(?<![\w.]1)[4-9]\d{8}(?:\d{3})?(?:\.\d+)?\b", "<time>"),
    # Memory addresses and offsets (Python reprs, Go panics).
    _rule(r"0x(?<!\w0x)[0-9a-fA-F]{4,}\b", "0x<addr>"),
    _rule(r"\+0x[0-9a-fA-F]+\b", "+0x<off>"),
    # Ports of local servers started by tests.
    _rule(
        r"\b(localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\]):\d{2,5}\b",
        r"\1:<port>",
        needs=("localhost", "127.0.0.1", "0.0.0.0", "[::"),
    ),
    # Paths: ./x, ../x and ~/x become /x, then the directory part of every absolute
    # path becomes <path>; the file name stays.
    _rule(r"\.(?<![\w.]\.)\.?/(?:\.\.?/)*(?=[\w.@+-])", "/"),
    _rule(r"~(?<!\w~)/(?=[\w.@+-])", "/"),
    _rule(r"/(?<![\w.~/<>:*)\]-]/)(?:[\w.@+,%-]+/)*(?=[A-Za-z_.@+-])", "<path>/"),
    _rule(
        r"\b[A-Za-z]:\\(?:[^\\\s\"'<>|]+\\)*(?=[^\\\s\"'<>|])",
        "<path>\\\\",
        needs=(":\\",),
    ),
    # Temp dir names outside a directory part; tempfile's tmpXXXXXXXX file names.
    _rule(r"go-build\d+", "go-build<N>"),
    _rule(r"pytest-of-[\w-]+", "pytest-of-<user>"),
    _rule(r"pytest-\d+\b(?!\.)", "pytest-N"),
    _rule(r"<path>/tmp\w{3,12}\b", "<path>/<tmp>"),
    # Line and column numbers.
    _rule(r"(\.[A-Za-z][A-Za-z0-9]{0,7}):\d+(?::\d+)?\b", r"\1:N"),
    # ("line 42", "Lines 3-5", "column 7", "col 7"; each starts with a literal to be fast)
    _rule(r"ine(?<=[Ll]ine)(?<!\w[Ll]ine)(s?\s+)\d+(?:\s*-\s*\d+)?", r"ine\1N", needs=("line",)),
    _rule(r"LINE(?<!\wLINE)(S?\s+)\d+", r"LINE\1N", needs=("line",)),
    _rule(r"olumn(?<=[Cc]olumn)(?<!\w[Cc]olumn)(\s+)\d+", r"olumn\1N", needs=("column",)),
    _rule(r"col(?<!\wcol)(\s+)\d+", r"col\1N", needs=("col ", "col\t")),
    # Durations: 0.53s, (1.2s), 12ms, 1m30s, 0m1.234s, "in 3.04 seconds".
    _rule(
        r"\d(?<![\w.]\d)\d*+(?:\.\d++)?(?:[nuµm]?s|m|h)(?:\d++(?:\.\d++)?(?:[nuµm]?s|m))*+\b",
        "<dur>",
    ),
    _rule(
        r"\d(?<![\w.]\d)\d*+(?:\.\d++)?\s+"
        r"(?:[Ss]econds?|[Ss]ecs?|[Mm]illiseconds?|[Mm]inutes?|[Mm]ins?)\b",
        "<dur>",
        needs=("second", "sec ", "secs", "minute", "min ", "mins"),
    ),
    # Process and goroutine ids.
    _rule(r"pid(?<!\wpid)([\s=:#]+)\d+\b", r"pid\1<pid>", needs=("pid",)),
    _rule(r"PID(?<!\wPID)([\s=:#]+)\d+\b", r"PID\1<pid>", needs=("pid",)),
    _rule(
        r"rocess(?<=[Pp]rocess)(?<!\w[Pp]rocess)([\s=:#]+)\d+\b",
        r"rocess\1<pid>",
        needs=("process",),
    ),
    _rule(r"goroutine \d+\b", "goroutine N"),
    # Hashes and hex ids: at least 7 hex digits mixing letters and digits.
    _rule(r"[0-9a-fA-F]{7,}", _hex_id),
]
_SPACES = re.compile(r" {2,}")
_BLANK_LINES = re.compile(r"\n{3,}")


@lru_cache(maxsize=256)
def normalize_output(text: str) -> str:
    """`text` without the parts that change from run to run.

    Cached: several checks normalize the same output of one tool call.
    """
    return _normalize(text)


def _normalize(text: str) -> str:
    lowered = text.lower()
    for rule in _RULES:
        text = rule.apply(text, lowered)
    # Whitespace: columns of tabs and spaces, blanks at line ends, runs of blank lines.
    text = _SPACES.sub(" ", text.replace("\t", " "))
    text = text.replace(" \n", "\n").replace("\n ", "\n")
    return _BLANK_LINES.sub("\n\n", text).strip()


# -- the telling line of a failure ------------------------------------------------

# The most telling lines: a named exception, a compiler or test diagnostic with a
# location, a failing test's name, a lint code, a shell's own complaint. Several
# small patterns, each starting with a literal, are much faster in Python's `re`
# than one alternation (error output can hold very long lines).
_STRONG_WORDS = (
    "panic:", "undefined:", "fatal:", "fatal error", "syntax error", "command not found",
    "No such file or directory", "Permission denied", "Segmentation fault", "not found",
    "cannot", "Cannot", "unable to",
)  # fmt: skip
_STRONG_PATTERNS = tuple(
    re.compile(pattern)
    for pattern in (
        r"Error(?<=[A-Za-z]Error)\b",  # TypeError, db.OperationalError
        r"Error(?<!\wError):",  # Error: …
        r"Exception(?<=[A-Za-z]Exception)\b",
        r"Failure(?<=[A-Za-z]Failure)\b",
        r"error(?<!\werror)(?:\[\w+\])?:",
        r"assert(?<!\wassert)(?:ion)?\b",
        r"\.[A-Za-z][A-Za-z0-9]{0,7}:\d+(?::\d+)?:\s+\S",
    )
)
# ... or how the line starts (matched at its start only).
_STRONG_START = re.compile(r"(?:FAILED|ERROR)\s+\S|---\s+FAIL:|FAIL:\s|[-*]?\s*[EFW]\d{3,4}\b")


def _is_strong(line: str) -> bool:
    return (
        _STRONG_START.match(line) is not None
        or any(word in line for word in _STRONG_WORDS)
        or any(pattern.search(line) for pattern in _STRONG_PATTERNS)
    )


# Weaker signs of a failure (lower-case): a word, not a diagnosis.
_WEAK_WORDS = ("error", "fail", "invalid", "denied", "refused", "timed out", "timeout", "abort")
# Lines that only restate that something failed: summaries, exit statuses, markup.
_NOISE = re.compile(
    r"^\s*(?:"
    r"FAIL(?:\s+\S+(?:\s+(?:\[[^\]]*\]|\S+))?)?"  # go test: FAIL / FAIL pkg 0.01s / FAIL pkg [build failed]
    r"|ok\s+\S+.*"
    r"|exit status \d+|exit code:? \d+|Exit code:? \d+"
    r"|make(?:\[\d+\])?: \*\*\* .*"
    r"|=+.*=+|-{3,}.*|_{3,}.*"
    r"|Traceback \(most recent call last\):"
    r"|During handling of the above exception.*"
    r"|(?:Your changes have NOT been applied|DO NOT re-run the same failed edit).*"
    r"|You either need to .*"
    r"|\(\d+ more lines (?:above|below)\)"
    r")\s*$"
)
# caretz's own notes on a tool result ("[exit code 1]", "(no output)"): they say
# that a call failed, never how, so two different failures must not share them.
_OWN_NOTE = re.compile(
    r"^(?:\[(?:exit code -?\d+|timed out after [^\]]*|cancelled[^\]]*"
    r"|background processes[^\]]*|\.\.\. [\d,]+ characters omitted \.\.\.)\]"
    r"|\(no output\))$"
)
# Markup around output (<returncode>1</returncode>, <output>): never the telling line.
_MARKUP = re.compile(r"^(?:</?\w+>)(?:.*</\w+>)?$")
# Source code shown in listings and tracebacks: it mentions errors without being one.
_CODE = re.compile(
    r"^(?:\d+:|>\s|(?:raise|except|def|class|import|return|if|elif|while|for)\b"
    r"|from\s+\S+\s+import\b)"
)
# Warnings mention failures without being one.
_WARNING_WORDS = ("Warning", "warning:")
# pytest's explanation lines ("E       TypeError: ..."): the first of the last block says it best.
_PYTEST_E = re.compile(r"^E\s+(\S.*)$", re.MULTILINE)
# Lines that each name one failure, so that two runs failing different sets differ.
_ITEM = re.compile(
    r"^\s*(?:(?:FAILED|ERROR)\s+\S+.*|---\s+FAIL:.*"
    r"|\S*\.[A-Za-z][A-Za-z0-9]{0,7}:\d+(?::\d+)?:\s+(?!.*Warning\b)\S.*)$",
    re.MULTILINE,
)


def error_line(text: str) -> str:
    """The raw line of `text` that best says what went wrong.

    The last line that diagnoses a failure (an exception, a located compiler or
    test message, a failing test); else the last line that mentions one; else the
    last non-empty line. Summaries such as "FAIL", "exit status 1" or pytest's
    "=== 1 failed ===" are used only when nothing else is there.
    """
    pytest_line = _pytest_explanation(text)
    if pytest_line:
        return pytest_line
    weak = fallback = noise = ""
    for line in reversed(text.splitlines()):
        stripped = line.strip()
        if not stripped or _MARKUP.match(stripped) or _OWN_NOTE.match(stripped):
            continue
        if _CODE.match(stripped):
            fallback = fallback or stripped
            continue
        if any(word in stripped for word in _WARNING_WORDS):
            weak = weak or stripped
            continue
        if _is_strong(stripped):
            return stripped
        if _NOISE.match(stripped):
            noise = noise or stripped
            continue
        if not weak and any(word in stripped.lower() for word in _WEAK_WORDS):
            weak = stripped
        fallback = fallback or stripped
    return weak or fallback or noise


def _pytest_explanation(text: str) -> str:
    """The first line of pytest's last "E ..." block, or "" when there is none."""
    if "\nE " not in text:
        return ""
    first = ""
    previous_end = -2
    for match in _PYTEST_E.finditer(text):
        if match.start() != previous_end + 1:
            first = match.group(1).strip()
        previous_end = match.end()
    return first


@lru_cache(maxsize=256)
def _failure_text(output: str) -> str:
    line = _normalize(error_line(output))
    if not line:
        return ""
    others = {_normalize(item.strip()) for item in _ITEM.findall(output)}
    # A test runner's summary line for the same failure ("FAILED t.py::test - <line>")
    # is that failure again, not another one.
    others = {other for other in others if other != line and not other.endswith(f" {line}")}
    more = f" (+{len(others)} more)" if others else ""
    return shorten(line, _FINGERPRINT_LINE_CHARS) + more


def tool_label(tool: str) -> str:
    """A tool's name as the docs print it: "bash" → "Bash"."""
    return tool[:1].upper() + tool[1:]


def failure_fingerprint(obs: ToolObservation) -> str:
    """What a failure is, normalized: "Bash: <path>/db_test.go:N: undefined: testDB".

    Two runs with the same fingerprint failed the same way; when several tests or
    diagnostics failed, the count of the others is part of it ("(+2 more)").
    """
    text = _failure_text(obs.output)
    if not text:
        # The output says nothing: the failing call itself is what repeats, so two
        # different silent failures (`test -f a`, `grep -q x b`) stay apart.
        status = f"exit {obs.exit_code}" if obs.exit_code is not None else "no output"
        call = shorten(_normalize(_call_text(obs.args)), _FINGERPRINT_LINE_CHARS)
        text = f"{call} → {status}" if call else status
    return f"{tool_label(obs.tool)}: {text}"


_TEST_ID_PREFIX = re.compile(r"^(?:FAILED|ERROR)\s+\S+\s+-\s+")


def failure_core(obs: ToolObservation) -> str:
    """The failure itself, whichever tool or command showed it: the telling line
    without the tool's name or a test runner's `FAILED <test id> - ` prefix, with
    the count of other failures kept. "" when the output names no failure."""
    return _TEST_ID_PREFIX.sub("", _failure_text(obs.output))


def _call_text(args: dict[str, Any]) -> str:
    command = args.get("command")
    if isinstance(command, str):
        return one_line(command)
    return encode_args(args)


def encode_args(args: dict[str, Any]) -> str:
    """A call's arguments as sorted-key compact JSON: equal arguments, equal text."""
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def call_signature(tool: str, args: dict[str, Any]) -> str:
    """A call's identity for identical-call checks: tool plus sorted-key compact JSON,
    with a command line as it runs (`guard/command_lines.py`)."""
    command = args.get("command")
    if isinstance(command, str):
        normalized = normalize_command(command)
        if normalized != command:
            args = {**args, "command": normalized}
    return f"{tool}({encode_args(args)})"
