"""Which modules a real `caretz -p` run imports, read from `python -X importtime`."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

from tests.modelserver import ModelServer, RecordedRequest, Reply, text


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
