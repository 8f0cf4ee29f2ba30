"""The agent's plan: a short task list it keeps with the `todo` tool.

A leaf (it imports nothing from caretz): the tool writes it, the guard's and the
goal evaluator's summaries show it, and the views draw it, all from the same
plain items read from the tool's arguments.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from caretz.lazy_dataclass import lazy_dataclass

PLAN_TOOL = "todo"
Status = Literal["pending", "in_progress", "done"]
STATUSES: tuple[Status, ...] = ("pending", "in_progress", "done")
MAX_ITEMS = 50
MAX_ITEM_CHARS = 300

# What other agents' plan tools call the same states; a model may well send them.
_SYNONYMS: dict[str, Status] = {
    "todo": "pending",
    "in progress": "in_progress",
    "in-progress": "in_progress",
    "active": "in_progress",
    "doing": "in_progress",
    "completed": "done",
    "complete": "done",
    "finished": "done",
}
_MARKS: dict[Status, str] = {"pending": "[ ]", "in_progress": "[>]", "done": "[x]"}


@lazy_dataclass(frozen=True)
class PlanItem:
    text: str
    status: Status = "pending"


Plan = tuple[PlanItem, ...]


def read_plan(args: Mapping[str, Any]) -> Plan:
    """The items of a `todo` call's arguments (`{"todos": [{"content", "status"}]}`).

    Raises ValueError, in words the model can act on, when they do not fit.
    """
    items = args.get("todos")
    if not isinstance(items, list):
        raise ValueError("todos must be a list of {content, status} objects")
    if len(items) > MAX_ITEMS:
        raise ValueError(f"a plan holds at most {MAX_ITEMS} items; merge the small ones")
    return tuple(_item(position, item) for position, item in enumerate(items, 1))


def _item(position: int, item: Any) -> PlanItem:
    if not isinstance(item, Mapping):
        raise ValueError(f"item {position} must be an object with content and status")
    text = item.get("content")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"item {position} needs a non-empty content")
    if len(text) > MAX_ITEM_CHARS:
        raise ValueError(f"item {position} is over {MAX_ITEM_CHARS} characters; shorten it")
    return PlanItem(" ".join(text.split()), _status(position, item.get("status", "pending")))


def _status(position: int, value: Any) -> Status:
    word = str(value).strip().lower()
    if word in STATUSES:
        return word
    if word in _SYNONYMS:
        return _SYNONYMS[word]
    raise ValueError(f"item {position} has status {value!r}: use pending, in_progress or done")


def plan_lines(plan: Iterable[PlanItem]) -> list[str]:
    """One line an item: `[x] done`, `[>] in progress`, `[ ] pending`."""
    return [f"{_MARKS[item.status]} {item.text}" for item in plan]


def plan_progress(plan: Plan) -> str:
    """`2 of 5 done`, or `empty` for a plan without items."""
    if not plan:
        return "empty"
    done = sum(item.status == "done" for item in plan)
    return f"{done} of {len(plan)} done"
