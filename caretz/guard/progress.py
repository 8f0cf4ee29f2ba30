"""Signs of progress in a turn, and the check that asks when a stretch shows none.

A call shows progress when it changes a task file in a way not seen before (a
new edit, a file the tools report changed) or when it returns something new:
an output, or for a failure its core (`normalize.failure_core`), that no
earlier call returned. Names of scratch files (files this turn created) are
masked first, so the same reproduction under a fresh name is nothing new, and
creating a scratch file is not progress by itself. Scratch files used at most
once after they were created are listed for the judge.
"""

from __future__ import annotations

import hashlib
import re
from collections import deque
from typing import Any

from caretz.guard.counting import Count
from caretz.guard.detector import Detector, fire
from caretz.guard.detectors_config import NoProgressConfig
from caretz.guard.model import Firing, ToolObservation, TurnContext, Verdict
from caretz.guard.normalize import call_signature, failure_core, normalize_output
from caretz.tools.policy import path_arguments

RECENT = 12  # calls over which new outputs are counted for the summary
MAX_SCRATCH = 50  # scratch files followed at most (memory and time stay bounded)
_EDIT_TOOLS = frozenset({"edit", "multi_edit", "apply_patch"})
_CREATE_TOOLS = frozenset({"write", "create"})


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=12).digest()


def _basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


class ProgressTracker:
    """What a turn has changed and learned so far, one tool result at a time."""

    def __init__(self) -> None:
        self.calls = 0
        self.progressed = 0  # calls that showed progress
        self.since_progress = 0  # calls in a row, up to the latest, that showed none
        self.task_files: dict[str, int] = {}  # path → changes, newest last
        self.scratch: dict[str, int] = {}  # created file → later calls that used it
        self.recent_new: deque[bool] = deque(maxlen=RECENT)
        self._outputs: set[bytes] = set()
        self._edits: set[bytes] = set()
        self._seen_paths: set[str] = set()
        self._pattern: re.Pattern[str] | None = None

    def observe(self, obs: ToolObservation) -> bool:
        """Record one call; whether it showed progress."""
        self.calls += 1
        self._use_scratch(obs)
        changed = self._changed(obs)
        new_output = self._new_output(obs)
        self.recent_new.append(new_output)
        progress = changed or new_output
        if progress:
            self.progressed += 1
            self.since_progress = 0
        else:
            self.since_progress += 1
        return progress

    @property
    def recent_new_outputs(self) -> int:
        return sum(self.recent_new)

    def unused_scratch(self) -> list[str]:
        """Scratch files used at most once after they were created."""
        return [name for name, uses in self.scratch.items() if uses <= 1]

    # -- what changed ----------------------------------------------------------------
    def _changed(self, obs: ToolObservation) -> bool:
        paths = _paths(obs)
        created = self._created(obs, paths)
        for path in paths:
            self._seen_paths.add(path)
        if obs.failed is True or created:
            return False
        changed = [p for p in obs.files_changed if _basename(p) not in self.scratch]
        if obs.tool in _EDIT_TOOLS:
            signature = _digest(call_signature(obs.tool, obs.args))
            if signature in self._edits:
                return False  # the same edit again (an undo and redo): nothing new
            self._edits.add(signature)
            task_paths = [p for p in paths if _basename(p) not in self.scratch]
            changed = changed or task_paths or ([] if paths else ["(the open file)"])
        for path in changed:
            self.task_files[path] = self.task_files.pop(path, 0) + 1
        return bool(changed)

    def _created(self, obs: ToolObservation, paths: list[str]) -> bool:
        """A new file written this turn: a scratch file until it is used more."""
        if obs.tool not in _CREATE_TOOLS or not paths or obs.failed is True:
            return False
        new = [p for p in paths if p not in self._seen_paths]
        for path in new:
            if len(self.scratch) < MAX_SCRATCH:
                self.scratch.setdefault(_basename(path), 0)
                self._pattern = None
        return bool(new)

    def _use_scratch(self, obs: ToolObservation) -> None:
        if not self.scratch:
            return
        text = " ".join(str(value) for value in obs.args.values())
        for name in self.scratch:
            if name in text:
                self.scratch[name] += 1

    # -- what was learned ------------------------------------------------------------
    def _new_output(self, obs: ToolObservation) -> bool:
        if obs.failed is True:
            text = "failed\x00" + failure_core(obs)
        else:
            text = normalize_output(obs.output).strip()
            if not text:
                return False  # an empty output tells nothing new
        text = self._mask_scratch(text)
        digest = _digest(text)
        if digest in self._outputs:
            return False
        self._outputs.add(digest)
        return True

    def _mask_scratch(self, text: str) -> str:
        if not self.scratch:
            return text
        if self._pattern is None:
            names = sorted(self.scratch, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(_stem(n)) for n in names))
        return self._pattern.sub("<scratch>", text)


def _stem(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name[1:] else name


def _paths(obs: ToolObservation) -> list[str]:
    paths = path_arguments(obs.args)
    if paths:
        return paths
    # A corpus `create`/`open`: SWE-agent names the file as the command's first word.
    command = obs.args.get("command")
    corpus_tool: Any = obs.args.get("corpus_tool")
    if corpus_tool == "create" and isinstance(command, str):
        words = command.split()
        return words[1:2] if len(words) > 1 and words[0] == "create" else words[:1]
    return []


class NoProgressDetector(Detector):
    """`calls` calls in a row with no sign of progress: ask the judge.

    It catches effort that changes nothing (views, searches and listings of the
    same places, the same failure reproduced under fresh names) sooner than the
    routine `checkEvery`. Any verdict restarts the count: the judge has just
    seen the turn as it is. After a "not stuck" answer about its own stretch, the
    next one must be twice as long, until a call shows progress again.
    """

    name = "no-progress"

    def __init__(self, config: NoProgressConfig):
        self.config = config
        self._reset_turn()

    def _reset_turn(self) -> None:
        self._progress = ProgressTracker()
        self._count = Count()
        self._need = self.config.calls  # doubles while the judge calls a stretch progress

    def begin_turn(self, ctx: TurnContext) -> None:
        self._reset_turn()

    def after_tool(self, obs: ToolObservation) -> Firing | None:
        if self._progress.observe(obs):
            self._count, self._need = Count(), self.config.calls
            return None
        count = self._count.add()
        if not count.reached(self._need):
            return None
        calls = count.since
        count.restart()
        stretch = self._progress.since_progress
        return fire(
            self.name,
            f"{calls} calls without progress",
            f"{calls} calls in a row changed no task file and returned nothing new",
            step=obs.index,
            message=(f"The last {calls} calls changed no task file and returned nothing new."),
            count=calls,
            # One stretch without progress is one pattern, however long it grows.
            pattern=f"since call {obs.index - stretch + 1}",
            size=stretch,
        )

    def after_verdict(self, firing: Firing, verdict: Verdict) -> None:
        self._count.restart()

    def hold(self, firing: Firing) -> None:
        # "Not stuck" about a stretch without progress (a wait, a long poll): ask
        # again only after twice as long a stretch, until something new comes.
        if firing.detector == self.name:
            self._need *= 2
