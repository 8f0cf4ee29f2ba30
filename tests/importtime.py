"""Which modules a real `caretz -p` run imports, read from `python -X importtime`."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

from tests.modelserver import ModelServer, RecordedRequest, Reply, text

# What `caretz -p` may import before its first request (see the file's header).
BUDGET = Path(__file__).parent / "data" / "import_budget.txt"


def modules_imported_by_a_run(
    cwd: Path, env: Mapping[str, str], *flags: str, prompt: str = "hello"
) -> set[str]:
    """Every module `caretz -p hello` imports (the model server must have a reply ready)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "caretz", "-p", prompt, *flags],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return imported_modules(done.stderr)


def imported_modules(stderr: str) -> set[str]:
    """The modules named by `-X importtime`'s lines in `stderr`."""
    return {
        line.rsplit("|", 1)[1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:")
    }


def modules_before_first_request(
    server: ModelServer, cwd: Path, env: Mapping[str, str], *flags: str
) -> list[str]:
    """The modules `caretz -p hello` imports until its first model request reaches
    `server`, in import order: the server ends the process (SIGKILL) when the request
    arrives, so nothing after it is imported. `env` must point caretz at `server`."""
    arrived = threading.Event()
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "caretz", "-p", "hello", *flags],
            cwd=cwd,
            env=dict(env),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )

        def end_the_run(_: RecordedRequest) -> Reply:
            process.kill()
            arrived.set()
            return text("never read")

        server.on(end_the_run)
        try:
            process.wait(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
        stderr.seek(0)
        output = stderr.read().decode(errors="replace")
    assert arrived.is_set(), f"caretz -p ended before its first request:\n{output}"
    names = [
        line.rsplit("|", 1)[1].strip()
        for line in output.splitlines()
        if line.startswith("import time:") and not line.endswith("package")
    ]
    return list(dict.fromkeys(names))


def floor_modules(cwd: Path, env: Mapping[str, str]) -> set[str]:
    """What `python -c "import typer, rich.console"` imports: the floor every run pays."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import typer, rich.console"],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        check=True,
    )
    return imported_modules(done.stderr)


def budget_key(module: str) -> str:
    """How the budget names a module: caretz's by name, any other by its top package."""
    return module if module.split(".")[0] == "caretz" else module.split(".")[0]


def read_budget(path: Path = BUDGET) -> set[str]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return {line for line in lines if line}


def outside_budget(modules: Iterable[str], budget: set[str], floor: set[str]) -> list[str]:
    """The modules, in import order, that are neither the floor's nor in `budget`."""
    return [m for m in modules if m not in floor and budget_key(m) not in budget]


def budget_entries(modules: Iterable[str], floor: set[str]) -> list[str]:
    """A budget that holds exactly `modules` beyond the floor: caretz's, then the rest."""
    keys = {budget_key(m) for m in modules if m not in floor}
    return sorted(keys, key=lambda key: (not key.startswith("caretz"), key))
