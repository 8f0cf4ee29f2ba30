"""caretz.lazy: a module declared at the top of another, imported on its first use."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import types
from pathlib import Path

import pytest

from caretz.lazy import lazy_module
from tests.importtime import imported_modules


@pytest.fixture
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A package `lazyprobe` with a module `lazyprobe.work` that counts its imports in the
    module `lazyprobe_gate`, and waits there for `release` when asked to."""
    package = tmp_path / "lazyprobe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "work.py").write_text(
        "import lazyprobe_gate as gate\n"
        "gate.runs.append(1)\n"
        "gate.entered.set()\n"
        "if gate.hold:\n"
        "    gate.release.wait(60)\n"
        "VALUE = object()\n"
        "def double(n):\n"
        "    return 2 * n\n"
    )
    gate = types.ModuleType("lazyprobe_gate")
    gate.runs, gate.hold = [], False
    gate.entered, gate.release = threading.Event(), threading.Event()
    monkeypatch.setitem(sys.modules, "lazyprobe_gate", gate)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield gate
    for name in ("lazyprobe", "lazyprobe.work"):
        sys.modules.pop(name, None)


def test_the_module_is_imported_on_first_use_and_not_before(probe):
    work = lazy_module("lazyprobe.work")
    assert "lazyprobe.work" not in sys.modules and "lazyprobe" not in sys.modules
    assert "not loaded yet" in repr(work)

    assert work.double(21) == 42

    assert sys.modules["lazyprobe.work"].VALUE is work.VALUE
    assert probe.runs == [1]
    assert "(loaded)" in repr(work)


def test_reads_go_to_the_module_so_later_changes_to_it_are_seen(probe):
    work = lazy_module("lazyprobe.work")
    work.double(1)
    sys.modules["lazyprobe.work"].double = lambda n: -n
    assert work.double(3) == -3
    assert "double" in dir(work)


def test_a_missing_attribute_reads_as_the_module_s_own_error(probe):
    work = lazy_module("lazyprobe.work")
    with pytest.raises(AttributeError, match="module 'lazyprobe.work' has no attribute 'triple'"):
        work.triple  # noqa: B018


def test_a_missing_module_fails_at_first_use_naming_it(probe):
    absent = lazy_module("lazyprobe.absent")  # declaring it finds nothing wrong yet
    with pytest.raises(ModuleNotFoundError, match="lazyprobe.absent"):
        absent.anything  # noqa: B018


def test_a_module_already_imported_is_returned_as_it_is():
    assert lazy_module("json") is json


def test_threads_that_race_to_first_use_get_the_one_module_imported_once(probe):
    probe.hold = True
    work = lazy_module("lazyprobe.work")
    start = threading.Barrier(4)
    seen: list[object] = []

    def first_use() -> None:
        start.wait(60)
        seen.append(work.VALUE)

    threads = [threading.Thread(target=first_use) for _ in range(4)]
    for thread in threads:
        thread.start()
    assert probe.entered.wait(60)  # one thread is inside the import; the others wait on it
    probe.release.set()
    for thread in threads:
        thread.join(60)

    assert probe.runs == [1]
    assert len(seen) == 4 and all(value is sys.modules["lazyprobe.work"].VALUE for value in seen)


def test_python_x_importtime_sees_a_module_loaded_on_first_use(probe, tmp_path: Path):
    """The start-up checks (tests/importtime.py) read what a run imports from -X importtime."""
    (tmp_path / "lazyprobe_gate.py").write_text(
        "import threading\nruns = []\nhold = False\nentered = threading.Event()\n"
    )
    code = "from caretz.lazy import lazy_module\nwork = lazy_module('lazyprobe.work')\nwork.VALUE\n"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "lazyprobe.work" in imported_modules(done.stderr)


def test_the_type_checker_reads_a_declaration_only_through_its_typed_import(tmp_path: Path):
    """A declaration beside `if TYPE_CHECKING: import x as name` is checked as module x; one
    without it is an `object`, so its first use fails the check instead of reading as Any."""
    lazy_source = Path(lazy_module.__code__.co_filename)
    (tmp_path / "typed.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from caretz.lazy import lazy_module\n"
        "if TYPE_CHECKING:\n"
        "    import json as coded\n"
        "else:\n"
        '    coded = lazy_module("json")\n'
        "def size() -> int:\n"
        "    return len(coded.dumps([1]))\n"
        "def wrong() -> int:\n"
        "    return coded.dumps([1])\n"
    )
    (tmp_path / "untyped.py").write_text(
        "from caretz.lazy import lazy_module\n"
        'coded = lazy_module("json")\n'
        "def size() -> int:\n"
        "    return len(coded.dumps([1]))\n"
    )
    found = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--config-file", "",
         "--follow-imports", "silent", "typed.py", "untyped.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={"MYPYPATH": str(lazy_source.parents[1]), "PATH": ""},
    )  # fmt: skip
    errors = [line for line in found.stdout.splitlines() if ": error:" in line]
    assert any(line.startswith("typed.py:10:") and "return-value" in line for line in errors)
    assert any(line.startswith("untyped.py:4:") and "attr-defined" in line for line in errors)
    assert len(errors) == 2, found.stdout
