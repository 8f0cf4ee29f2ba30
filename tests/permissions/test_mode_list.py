"""The permission modes are listed once, in `permissions/modes.py` (`PERMISSION_MODES`):
the flags, the REPL's `/permissions` and ACP's mode option read that list, so a new mode
cannot be missing from one of them. An AST scan fails on a second list of them."""

from __future__ import annotations

import ast
from pathlib import Path

from caretz.acp.options import MODE_TEXTS
from caretz.permissions.modes import PERMISSION_MODES

ROOT = Path(__file__).resolve().parents[2]
THE_LIST = "caretz/permissions/modes.py"


def mode_lists(tree: ast.AST) -> list[int]:
    """Lines of a tuple, list or set literal that names every permission mode."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Tuple | ast.List | ast.Set)
        and node.elts
        and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)
        and {e.value for e in node.elts} >= set(PERMISSION_MODES)
    ]


def test_the_permission_modes_are_listed_once():
    found = {
        path.relative_to(ROOT).as_posix(): lines
        for path in sorted((ROOT / "caretz").rglob("*.py"))
        if (lines := mode_lists(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert THE_LIST in found  # the scan sees the one list
    copies = {name: lines for name, lines in found.items() if name != THE_LIST}
    assert copies == {}, f"read caretz.permissions.modes.PERMISSION_MODES instead: {copies}"


def test_acp_describes_each_mode_in_the_list_order():
    assert tuple(MODE_TEXTS) == PERMISSION_MODES


def test_the_scan_finds_a_copied_list():
    copied = 'MODES = ("auto", "ask", "read-only", "plan", "yolo")\nOTHER = ("auto", "ask")'
    assert mode_lists(ast.parse(copied)) == [1]
