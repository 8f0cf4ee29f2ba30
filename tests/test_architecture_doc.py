"""docs/architecture.md stays true: every module it names exists, and the count of event
types it states is the records' count."""

from __future__ import annotations

import re
from pathlib import Path

from caretz.session.records.parse import RECORD_TYPES

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "caretz"

# A path in backticks: `caretz/agent/turn.py`, `tools/result_cap.py`, `ui/`, `stream_json.py`.
BACKTICKED_PATH = re.compile(r"`([\w./]+(?:\.py|/))`")


def table_rows(heading: str) -> list[list[str]]:
    """The cells of each row of the table whose first header cell is `heading`."""
    rows: list[list[str]] = []
    inside = False
    for line in DOC.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|"):
            inside = False
        elif cells[0] == heading:
            inside = True
        elif inside and not set(cells[0]) <= set("-: "):
            rows.append(cells)
    return rows


def found(name: str, package: Path) -> bool:
    """Whether `name` (a file or folder path) is a module of caretz: from the repository's
    root, from caretz/, or inside `package` (the row's own package, at any depth)."""
    name = name.rstrip("/")
    if (ROOT / name).exists() or (PACKAGE / name).exists():
        return True
    return any(package.rglob(name)) if package.is_dir() else False


def missing_in_module_table() -> list[str]:
    missing = []
    for cells in table_rows("module"):
        first = BACKTICKED_PATH.findall(cells[0])
        assert first, f"a module row names no path: {cells[0]}"
        package = ROOT / (first[0] if first[0].endswith("/") else Path(first[0]).parent)
        for name in BACKTICKED_PATH.findall(" | ".join(cells)):
            if not found(name, package):
                missing.append(f"{name} (in the row of {first[0]})")
    return missing


def test_every_module_the_doc_names_exists():
    assert missing_in_module_table() == []
    assert [name for name in paths_in_text() if not (ROOT / name).exists()] == []


def paths_in_text() -> list[str]:
    """Every module or folder path the doc's prose names from the repository's root (not
    `.caretz/…`, a project's folder, nor `caretz/NAME`, a branch)."""
    words = re.findall(r"(?<![\w.])((?:caretz|tests|benchmarks)/[\w./-]*)", DOC.read_text())
    names = {word.rstrip(".") for word in words}
    return sorted(name for name in names if name.endswith((".py", "/")))


def test_every_package_of_the_import_table_exists():
    rows = table_rows("package")
    assert rows, "no package table in docs/architecture.md"
    names = [name for cells in rows for name in re.findall(r"`(\w+)`", cells[0])]
    missing = [
        name
        for name in names
        if not (PACKAGE / f"{name}.py").is_file() and not (PACKAGE / name).is_dir()
    ]
    assert missing == []


def test_the_leaves_drawn_exist():
    drawing = next(line for line in DOC.read_text().splitlines() if "leaves, imported by" in line)
    names = re.findall(r"([\w/]+(?:\.py|/))", drawing.split(":", 1)[1])
    assert names
    assert [name for name in names if not (PACKAGE / name).exists()] == []


def test_the_count_of_event_types_is_the_records():
    stated = re.findall(r"`events\.jsonl`: (\d+) types", DOC.read_text())
    assert stated, "docs/architecture.md no longer states how many event types there are"
    assert [int(count) for count in stated] == [len(RECORD_TYPES)]
