"""The package's shape, as docs/architecture.md draws it: no import cycles, no module over
450 lines, and each package importing only what the table there allows.

Imports inside functions count; imports under `if TYPE_CHECKING:` do not, since they never run.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "code_shape.py"
MAX_LINES = 450

LEAVES = {
    "caretz",
    "caretz.messages",
    "caretz.text",
    "caretz.config_base",
    "caretz.secrets",
    "caretz.plan",
    "caretz.approvals",
    "caretz.trusted",  # which bwrap, git and interpreter caretz runs: sandbox and checkpoints
}
# What each package may import besides the leaves, lowest layer first.
MAY_IMPORT: dict[str, set[str]] = {
    **{leaf: set() for leaf in LEAVES},
    "caretz.usage_error": set(),
    "caretz.session": set(),
    "caretz.providers": set(),
    "caretz.pricing": set(),
    "caretz.checkpoints": set(),
    "caretz.permissions": set(),
    "caretz.sandbox": set(),
    "caretz.tools": {"caretz.permissions", "caretz.sandbox"},
    "caretz.slash_commands": set(),
    "caretz.hooks": {"caretz.tools"},  # the registry's seam, and ending a process group
    "caretz.mcp_client": {"caretz.tools", "caretz.sandbox"},  # its tools; the launcher
    "caretz.web": {"caretz.tools", "caretz.permissions"},  # its tools; the domain rules
    "caretz.guard": {"caretz.tools"},  # tools.policy's argument conventions only
    "caretz.goal": {"caretz.guard"},  # the guard's record, summary sections and reply readers
    "caretz.agent": {
        "caretz.goal",
        "caretz.guard",
        "caretz.providers",
        "caretz.session",
        "caretz.tools",
        "caretz.checkpoints",
    },
    "caretz.config": {
        "caretz.goal",
        "caretz.guard",
        "caretz.hooks",
        "caretz.providers",
        "caretz.pricing",
        "caretz.permissions",
        "caretz.sandbox",
        "caretz.mcp_client",
        "caretz.web",
    },
}
WIRING = {
    "caretz.agent",
    "caretz.checkpoints",
    "caretz.config",
    "caretz.goal",
    "caretz.guard",
    "caretz.hooks",
    "caretz.mcp_client",
    "caretz.permissions",
    "caretz.pricing",
    "caretz.providers",
    "caretz.sandbox",
    "caretz.session",
    "caretz.slash_commands",
    "caretz.tools",
    "caretz.usage_error",
    "caretz.web",
}
MAY_IMPORT["caretz.runtime"] = WIRING
MAY_IMPORT["caretz.eval"] = WIRING | {"caretz.runtime"}
MAY_IMPORT["caretz.ui"] = WIRING | {"caretz.runtime"}
MAY_IMPORT["caretz.commands"] = WIRING | {"caretz.runtime", "caretz.ui"}
MAY_IMPORT["caretz.schedule"] = {"caretz.config", "caretz.session", "caretz.usage_error"}
MAY_IMPORT["caretz.cli"] = {"caretz.commands", "caretz.config", "caretz.eval", "caretz.schedule"}
MAY_IMPORT["caretz.__main__"] = {"caretz.cli"}


@pytest.fixture(scope="module")
def shape():
    spec = importlib.util.spec_from_file_location("code_shape", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["code_shape"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def modules(shape):
    return shape.read_package()


def test_no_module_imports_another_that_imports_it_back(shape, modules):
    assert shape.cycles(modules) == []


def test_no_package_imports_another_that_imports_it_back(shape, modules):
    assert shape.cycles(shape.package_graph(modules)) == []


def test_no_module_is_over_450_lines(modules):
    over = {name: module.lines for name, module in modules.items() if module.lines > MAX_LINES}
    assert over == {}


def test_every_package_imports_only_what_the_architecture_allows(shape, modules):
    packages = shape.package_graph(modules)
    unknown = set(packages) - set(MAY_IMPORT)
    assert unknown == set(), "add new packages to MAY_IMPORT and docs/architecture.md"
    breaches = {
        name: sorted(package.imports - MAY_IMPORT[name] - LEAVES)
        for name, package in packages.items()
        if package.imports - MAY_IMPORT[name] - LEAVES
    }
    assert breaches == {}


def test_the_checker_sees_imports_inside_functions(shape, tmp_path):
    root = tmp_path / "caretz"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("def f():\n    from caretz import b\n")
    (root / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from caretz import c\n"
        "import caretz.a\n"
    )
    (root / "c.py").write_text("import caretz.b\n")
    found = shape.read_package(root)
    assert shape.cycles(found) == [["caretz.a", "caretz.b"]]
