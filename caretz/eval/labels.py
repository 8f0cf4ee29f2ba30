"""What a trajectory should have been judged: stuck from which step, or productive.

A corpus trajectory carries its label (`label: {stuck, first_stuck_step, kind,
stuck_until, confidence}`). A user's own sessions get theirs from a small JSON
file keyed by trajectory ID (`<session>#turnN`, as `guard replay` prints them)
or by session ID:

    {"20261130-101500-ab12#turn2": {"stuck": true, "first_stuck_step": 14},
     "20261129-090000-cd34": {"stuck": false}}

A session ID labels every turn of that session, so it may only say "stuck"
when the session has one turn (a step number means one turn). A label in the
file replaces the corpus's own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from caretz.eval.replay import Trajectory

PRODUCTIVE = "productive"
STUCK_KIND = "stuck"  # the kind of a stuck label that names none


class LabelError(Exception):
    """A labels file or label that cannot be used; the message names it."""


@dataclass(frozen=True, kw_only=True)
class Label:
    stuck: bool
    first_stuck_step: int | None = None  # set when stuck
    stuck_until: int | None = None  # the last stuck step, when the agent recovered
    kind: str = PRODUCTIVE
    low_confidence: bool = False  # reported, but not scored

    def expects_stuck(self, step: int) -> bool:
        """Whether a judge asked at `step` should answer "stuck": inside the stuck
        stretch, from the first stuck step to `stuck_until` (or the end)."""
        if not self.stuck or self.first_stuck_step is None:
            return False
        until = self.stuck_until if self.stuck_until is not None else step
        return self.first_stuck_step <= step <= until


@dataclass(frozen=True)
class Labelled:
    trajectory: Trajectory
    label: Label


def parse_label(data: Any, where: str) -> Label:
    """A label from its JSON object; raises LabelError naming `where`."""
    if not isinstance(data, Mapping) or not isinstance(data.get("stuck"), bool):
        raise LabelError(f'{where}: a label needs "stuck": true or false')
    stuck = data["stuck"]
    first = _step(data, "first_stuck_step", where)
    until = _step(data, "stuck_until", where)
    if stuck and first is None:
        raise LabelError(f'{where}: a stuck label needs "first_stuck_step"')
    if first is not None and until is not None and until < first:
        raise LabelError(f'{where}: "stuck_until" comes before "first_stuck_step"')
    kind = data.get("kind") or (STUCK_KIND if stuck else PRODUCTIVE)
    return Label(
        stuck=stuck,
        first_stuck_step=first if stuck else None,
        stuck_until=until if stuck else None,
        kind=str(kind),
        low_confidence=data.get("confidence") == "low",
    )


def _step(data: Mapping[str, Any], key: str, where: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise LabelError(f"{where}: {key!r} must be a step number (0 or more)")
    return value


def load_labels(path: Path) -> dict[str, Label]:
    """The labels file: {"trajectory-or-session-id": {"stuck": …, …}}."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LabelError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LabelError(f"{path}: not a JSON labels file ({exc})") from None
    if not isinstance(data, dict):
        raise LabelError(f"{path}: expected an object of labels by trajectory or session ID")
    return {str(key): parse_label(value, f"{path}: {key}") for key, value in data.items()}


@dataclass
class Labelling:
    labelled: list[Labelled]
    unlabelled: list[str]  # trajectory IDs skipped: no label anywhere
    unused: list[str]  # keys of the labels file that matched no trajectory


def apply_labels(
    trajectories: Sequence[Trajectory], labels: Mapping[str, Label] | None = None
) -> Labelling:
    """Each trajectory with its label: from the file (by trajectory, then session
    ID), else its own; the ones with none are listed, not scored."""
    labels = labels or {}
    _check_session_labels(trajectories, labels)
    result = Labelling([], [], [])
    used: set[str] = set()
    for trajectory in trajectories:
        key = _key_for(trajectory, labels)
        if key is not None:
            used.add(key)
            result.labelled.append(Labelled(trajectory, labels[key]))
        elif trajectory.label:
            where = f"{trajectory.source}: {trajectory.id}"
            result.labelled.append(Labelled(trajectory, parse_label(trajectory.label, where)))
        else:
            result.unlabelled.append(trajectory.id)
    result.unused = [key for key in labels if key not in used]
    return result


def session_of(trajectory_id: str) -> str:
    return trajectory_id.split("#", 1)[0]


def _key_for(trajectory: Trajectory, labels: Mapping[str, Label]) -> str | None:
    if trajectory.id in labels:
        return trajectory.id
    session = session_of(trajectory.id)
    if session != trajectory.id and session in labels:
        return session
    return None


def _check_session_labels(trajectories: Sequence[Trajectory], labels: Mapping[str, Label]) -> None:
    turns: dict[str, list[str]] = {}
    for trajectory in trajectories:
        session = session_of(trajectory.id)
        if session != trajectory.id and trajectory.id not in labels:
            turns.setdefault(session, []).append(trajectory.id)
    for key, label in labels.items():
        if label.stuck and len(turns.get(key, [])) > 1:
            raise LabelError(
                f"label {key!r}: the session has {len(turns[key])} turns; "
                f"label the stuck turn by its ID (e.g. {turns[key][0]!r})"
            )
