"""One name per concept, and records built by keyword, held for all of caretz/ by an AST scan.

- Two classes in caretz/ never share a name: a reader (and grep) finds one thing under each.
  The few exceptions are listed with why.
- A dataclass-like (`@dataclass`, `@lazy_dataclass`, a NamedTuple) with more than four
  fields is made by keyword: it is declared `kw_only`, and no call in caretz/, tests/ or
  benchmarks/ hands such a class positional arguments. The session's records take keywords
  only by construction (`Record.__init__(**values)`).
"""

from __future__ import annotations

import ast
import inspect
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from tests.source_trees import parsed

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "caretz"

# Names two classes may share, and why: the Python API's stream records (docs/python-api.md)
# are its public, frozen copies of the same thing the provider streams or the model calls,
# kept apart so the API's shape does not follow the provider's.
SHARED_NAMES = {
    "TextDelta": "api/events.py: the public copy of the provider's answer delta",
    "ThinkingDelta": "api/events.py: the public copy of the provider's reasoning delta",
    "ToolCall": "api/events.py: the public copy of messages.ToolCall, with the calling agent",
    "Retrying": "api/events.py: the public copy of the provider's retry, `discarded` a flag",
}

# More fields than this and a record is made by keyword.
MOST_POSITIONAL = 4
DATACLASS_DECORATORS = {"dataclass", "lazy_dataclass"}


def _trees(*folders: str) -> Iterator[tuple[Path, ast.Module]]:
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path, parsed(path)


def _classes() -> Iterator[tuple[str, ast.ClassDef]]:
    for path, tree in _trees("caretz"):
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                yield str(path.relative_to(PACKAGE)), node


def _name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Name):
        return target.id
    return target.attr if isinstance(target, ast.Attribute) else ""


def _fields(node: ast.ClassDef) -> list[str]:
    return [
        statement.target.id
        for statement in node.body
        if isinstance(statement, ast.AnnAssign)
        and isinstance(statement.target, ast.Name)
        and "ClassVar" not in ast.unparse(statement.annotation)
    ]


def _dataclass_decorator(node: ast.ClassDef) -> ast.expr | None:
    for decorator in node.decorator_list:
        if _name(decorator) in DATACLASS_DECORATORS:
            return decorator
    return None


def _kw_only(decorator: ast.expr) -> bool:
    return isinstance(decorator, ast.Call) and any(
        keyword.arg == "kw_only" and ast.literal_eval(keyword.value) is True
        for keyword in decorator.keywords
    )


def _wide_records() -> dict[str, list[str]]:
    """The dataclass-likes of caretz/ with more than MOST_POSITIONAL fields, by name."""
    wide: dict[str, list[str]] = defaultdict(list)
    for where, node in _classes():
        is_named_tuple = any(_name(base) == "NamedTuple" for base in node.bases)
        if _dataclass_decorator(node) is None and not is_named_tuple:
            continue
        if len(_fields(node)) > MOST_POSITIONAL:
            wide[node.name].append(f"{where}:{node.lineno}")
    return wide


def test_no_two_classes_share_a_name():
    where: dict[str, list[str]] = defaultdict(list)
    for path, node in _classes():
        where[node.name].append(f"{path}:{node.lineno}")
    shared = {name: places for name, places in where.items() if len(places) > 1}
    unexplained = {name: places for name, places in shared.items() if name not in SHARED_NAMES}
    assert unexplained == {}, "give each concept one name (or list the exception, with why)"
    assert set(SHARED_NAMES) <= set(shared), "an exception no longer needed: remove it"


def test_wide_dataclasses_are_keyword_only():
    positional = [
        f"{where}:{node.lineno} {node.name}"
        for where, node in _classes()
        if (decorator := _dataclass_decorator(node)) is not None
        and len(_fields(node)) > MOST_POSITIONAL
        and not _kw_only(decorator)
    ]
    assert positional == [], f"declare kw_only=True (more than {MOST_POSITIONAL} fields)"


def test_wide_records_are_built_by_keyword():
    wide = _wide_records()
    assert {"Checked", "SessionParts", "AgentWiring"} <= set(wide)
    calls = [
        f"{path.relative_to(ROOT)}:{node.lineno} {ast.unparse(node)[:80]}"
        for path, tree in _trees("caretz", "tests", "benchmarks")
        for node in _wide_calls(tree, set(wide) - _own_classes(path, tree))
        if node.args
    ]
    assert calls == [], "pass a wide record's fields by keyword"


def _own_classes(path: Path, tree: ast.Module) -> set[str]:
    """A test's or benchmark's own classes, which may share a name with one of caretz's."""
    if path.is_relative_to(PACKAGE):
        return set()
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}


def _wide_calls(tree: ast.Module, wide: set[str]) -> Iterator[ast.Call]:
    """Calls that make one of the `wide` classes: by its name, or as `cls(…)` in its own
    class methods."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _name(node.func) in wide:
            yield node
        if isinstance(node, ast.ClassDef) and node.name in wide:
            for inner in ast.walk(node):
                if isinstance(inner, ast.Call) and _name(inner.func) == "cls":
                    yield inner


def test_session_records_take_keywords_only():
    from caretz.session.records.base import Record

    kinds = {parameter.kind for parameter in inspect.signature(Record.__init__).parameters.values()}
    assert kinds == {inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.VAR_KEYWORD}
