"""Telemetry passes through one place: the session's event log.

- The exporter is a listener on the log (`EventLog.subscribe`), attached where a session
  is built (`app/assembly.py`, the only importer of `caretz.telemetry`), so nothing in the
  loop, the tools or the guard calls it: new code that wants a span writes a record.
- It sees the session only as records: `caretz.telemetry` imports no part of the session
  but `caretz.session.records`.
- OpenTelemetry is imported only in `caretz/telemetry/`, and `app/assembly.py` loads that
  lazily, so a session with telemetry off imports none of it.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import caretz
from tests.source_trees import parsed

PACKAGE = Path(caretz.__file__).parent
SCRIPT = PACKAGE.parent / "benchmarks" / "code_shape.py"
TELEMETRY = "caretz.telemetry"
ATTACHED_IN = "caretz.app.assembly"
# What the telemetry package may use besides itself: the records, the judge's price, and
# leaves (a usage, the redaction, ConfigError, the version).
TELEMETRY_USES = {
    "caretz",
    "caretz.messages",
    "caretz.secrets",
    "caretz.config_base",
    "caretz.pricing",
}


def package_modules():
    spec = importlib.util.spec_from_file_location("code_shape", SCRIPT)
    assert spec is not None and spec.loader is not None
    shape = importlib.util.module_from_spec(spec)
    sys.modules["code_shape"] = shape
    spec.loader.exec_module(shape)
    return shape.read_package()


def inside(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def opentelemetry_imports(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        if any(inside(name, "opentelemetry") for name in names):
            lines.append(node.lineno)
    return lines


def test_only_the_telemetry_package_imports_opentelemetry():
    outside = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if "telemetry" not in path.relative_to(PACKAGE).parts[:1]
        for line in opentelemetry_imports(path)
    ]
    assert outside == []


def test_telemetry_is_attached_in_one_place_lazily_and_sees_only_records():
    modules = package_modules()
    importers = sorted(
        name
        for name, module in modules.items()
        if not inside(name, TELEMETRY) and any(inside(t, TELEMETRY) for t in module.imports)
    )
    assert importers == [ATTACHED_IN]
    assert not any(inside(t, TELEMETRY) for t in modules[ATTACHED_IN].eager)
    source = modules[ATTACHED_IN].path.read_text(encoding="utf-8")
    assert "log.subscribe(telemetry.on_event)" in source
    used = {
        target
        for name, module in modules.items()
        if inside(name, TELEMETRY)
        for target in module.imports
        if not inside(target, TELEMETRY) and not inside(target, "caretz.session.records")
    }
    assert used <= TELEMETRY_USES, used - TELEMETRY_USES
