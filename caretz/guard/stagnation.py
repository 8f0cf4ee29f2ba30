"""Whether a run has gone flat: the signal that brings the periodic check sooner.

A call moves the run when it changes a task file (an edit not made before, a
rewrite of a file the turn already knew, a file the tools report changed, a
shell command that writes files, run for the first time) or when it returns
something new: for a failure, an error class no earlier failure of the turn had;
for anything else, a word or number that neither an earlier result, an earlier
call nor the call's own arguments held. Outputs are compared after the guard's
normalization (paths, times, durations, ids), and an error class is the
failure's telling line with quoted parts, numbers and the words of the command
masked (a command killed at its time limit is one class whatever it printed
first). So a script that keeps reporting "0 rows matched" for whatever it was
asked, one import error reached through one launcher after another, or a build
killed at its time limit each time, moves nothing.

The run looks flat when the last `window` calls were varied (one call made again
and again is a poll or a retry: the identical-call check's, with its holds), none
of them changed a task file and at most 30% of them returned anything new (half
when the agent, in that stretch, wrote again a message or a plan it had already
written). The signal never asks the judge: the periodic check
(`triggers.CheckEveryTrigger`) asks after `stagnation.checkEvery` calls instead
of `checkEvery` while the run looks flat.
"""

from __future__ import annotations

import hashlib
import re
from collections import deque
from typing import Any

from caretz.guard.model import ToolObservation
from caretz.guard.normalize import call_signature, failure_core, normalize_output
from caretz.messages import Message
from caretz.plan import PLAN_TOOL
from caretz.tools.policy import path_arguments

QUIET_SHARE = 0.3  # at most this share of the window's calls may bring something new
REPEATED_WORDS_SHARE = 0.5  # ... when the agent says again what it had said
MAX_TOKENS = 200_000  # words remembered per turn; beyond it every output counts as new
MIN_MESSAGE_WORDS = 4  # a shorter message ("Done.") repeats without meaning much

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
# The normalizer's own placeholders (<path>, <date>, <dur> …): never news.
_PLACEHOLDERS = frozenset(
    {"id", "time", "date", "addr", "off", "port", "path", "N", "user", "tmp", "dur", "pid", "hex"}
)
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`")
_NUMBER = re.compile(r"\d+")
# Kinds of failure that many programs report, each in its own words: a failure of
# one of these kinds is that kind, whichever command, tool or message showed it.
_KINDS = {
    "timed_out": r"\btimed out\b|\btimeout(?:error|expired)?\b|deadline exceeded",
    "connection_refused": r"connection refused|econnrefused|could not connect|failed to connect"
                          r"|connection reset",
    "permission_denied": r"permission denied|eacces|operation not permitted",
    "out_of_memory": r"out of memory|memoryerror|oomkilled|cannot allocate memory",
    "module_not_found": r"no module named|modulenotfounderror|cannot find module"
                        r"|could not import module",
    "symbol_not_found": r"cannot find symbol|undefined reference|unresolved reference"
                        r"|undefined: |is not defined\b",
    "command_not_found": r"command not found|not recognized as an internal",
    "no_such_file": r"no such file or directory|enoent|does not exist",
}  # fmt: skip
_KIND = re.compile("|".join(f"(?P<{k}>{p})" for k, p in _KINDS.items()), re.IGNORECASE)
# Where a failure says what kind it is: its telling line and the end of its output
# (a time limit's note, a shell's last word).
_TAIL_CHARS = 400
_EDIT_TOOLS = frozenset({"edit", "multi_edit", "apply_patch"})
_WRITE_TOOLS = frozenset({"write", "create"})
# A shell command that changes files or the machine: in-place editors, redirections
# into a file, tee, patch, file and package managers, git's commands that rewrite
# the tree, services started or restarted. They often print nothing when they work.
_SHELL_WRITE = re.compile(
    r"\b(?:sed|perl)\s+(?:-\S+\s+)*-[a-zA-Z]*i"
    r"|(?<![<>&\d])>{1,2}\s*(?!&|/dev/)[\w./~$\"'-]"
    r"|\b(?:tee|patch|cp|mv|rm|mkdir|ln|chmod|chown|touch|install|rsync|unzip)\s"
    r"|\btar\s+-?\w*x"
    r"|\b(?:pip3?|npm|yarn|pnpm|apt-get|apt|apk|brew|cargo|gem|poetry|uv|go)\s+"
    r"(?:\S+\s+){0,4}?(?:install|add|get|sync|ci)\b"
    r"|\bgit\s+(?:apply|checkout|restore|am|cherry-pick|revert|add|commit|mv|rm|reset|stash)\b"
    r"|\b(?:systemctl|service)\s+(?:\S+\s+)?(?:start|restart|reload|enable)\b"
    r"|\bdocker(?:-compose|\s+compose)?\s+(?:run|build|up|start|restart)\b"
)


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=12).digest()


def tokens(text: str) -> set[str]:
    return set(_TOKEN.findall(text))


def _argument_text(args: dict[str, Any]) -> str:
    return " ".join(str(value) for value in args.values())


def error_class(obs: ToolObservation, masked: set[str]) -> str:
    """A failure's kind, whatever command showed it: one of the common kinds its
    output names, else its telling line with quoted parts, numbers and the command's
    own words masked."""
    text = failure_core(obs)
    kind = _KIND.search(f"{text}\n{obs.output[-_TAIL_CHARS:]}")
    if kind is not None and kind.lastgroup is not None:
        return kind.lastgroup.replace("_", " ")
    if not text:
        lines = normalize_output(obs.output).splitlines()
        text = lines[-1] if lines else f"exit {obs.exit_code}"
    text = _NUMBER.sub("N", _QUOTED.sub("Q", text))
    return _TOKEN.sub(lambda m: "A" if m.group() in masked else m.group(), text)


class Stagnation:
    """What the last calls of a turn brought: see the module docstring."""

    def __init__(self, window: int = 10):
        self.window = window
        self.begin_turn()

    def begin_turn(self) -> None:
        self._seen: set[str] = set(_PLACEHOLDERS)
        self._classes: set[str] = set()
        self._edits: set[bytes] = set()
        self._paths: set[str] = set()
        self._said: set[str] = set()
        self._plans: set[bytes] = set()
        self._calls = 0
        # Per call of the window: (brought something new, changed a task file, the call).
        self._recent: deque[tuple[bool, bool, bytes]] = deque(maxlen=max(self.window, 1))
        self._repeated_at = -1  # the call count when a message or plan was last repeated

    # -- observing ---------------------------------------------------------------------
    def observe(self, obs: ToolObservation) -> None:
        self._calls += 1
        words = tokens(_argument_text(obs.args))
        call = _digest(call_signature(obs.tool, obs.args))
        changed = self._changed(obs, call)
        if obs.failed is True:
            kind = error_class(obs, words)
            new = kind not in self._classes
            self._classes.add(kind)
        else:
            new = self._learns(tokens(normalize_output(obs.output)) - words)
        self._remember(words)
        if obs.tool == PLAN_TOOL:
            self._plan_said(obs.args)
        self._recent.append((new, changed, call))

    def observe_response(self, message: Message) -> None:
        """The agent's words: a message that only says again what it said before."""
        said = tokens(message.content)
        if len(said) >= MIN_MESSAGE_WORDS and said <= self._said:
            self._repeated_at = self._calls
        if len(self._said) < MAX_TOKENS:
            self._said |= said

    # -- the signal --------------------------------------------------------------------
    def flat(self) -> bool:
        """The last `window` calls were varied, changed no task file and brought
        (almost) nothing new. One call made again and again (a poll, a retry) is
        the identical-call check's, whose holds know when to ask again."""
        recent = self._recent
        if len(recent) < self.window or any(changed for _, changed, _ in recent):
            return False
        if 2 * len({call for _, _, call in recent}) < len(recent):
            return False
        return self.new_in_window() <= self.allowed()

    def new_in_window(self) -> int:
        return sum(new for new, _, _ in self._recent)

    def allowed(self) -> int:
        repeated = self._repeated_at >= 0 and self._repeated_at >= self._calls - self.window
        return int((REPEATED_WORDS_SHARE if repeated else QUIET_SHARE) * self.window)

    # -- what moved --------------------------------------------------------------------
    def _learns(self, words: set[str]) -> bool:
        fresh = words - self._seen
        self._remember(fresh)
        return bool(fresh) or len(self._seen) >= MAX_TOKENS

    def _remember(self, words: set[str]) -> None:
        if len(self._seen) < MAX_TOKENS:
            self._seen |= words

    def _changed(self, obs: ToolObservation, signature: bytes) -> bool:
        """Whether the call changed a task file in a way not seen before this turn."""
        paths = path_arguments(obs.args)
        known = [p for p in paths if p in self._paths]
        self._paths.update(paths)
        if obs.failed is True:
            return False
        if signature in self._edits:
            return False  # the same change again (an undo and redo) changes nothing new
        writes = (
            obs.tool in _EDIT_TOOLS
            or (obs.tool in _WRITE_TOOLS and bool(known))
            or bool(obs.files_changed)
            or _shell_writes(obs)
        )
        if writes:
            self._edits.add(signature)
        return writes

    def _plan_said(self, args: dict[str, Any]) -> None:
        plan = _digest(repr(args.get("todos")))
        if plan in self._plans:
            self._repeated_at = self._calls
        self._plans.add(plan)


def _shell_writes(obs: ToolObservation) -> bool:
    command = obs.args.get("command")
    return obs.tool == "bash" and isinstance(command, str) and bool(_SHELL_WRITE.search(command))
