"""What a command writes never decides what caretz or git runs later, end to end: the real
CLI, the loopback model server driving bash calls as a steered model would, real
bubblewrap and the Landlock fallback (bubblewrap off PATH), real git.

Each planted program or hook writes a marker file outside the workspace when it runs;
a sandboxed command cannot write there, so a marker means caretz (or the user's git)
ran the planted code outside the sandbox. No test may find one.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import caretz
from tests.e2e.conftest import Caretz, Run
from tests.e2e.sandbox_folders import project_folder, require, scratch_folder
from tests.modelserver import text, tool

# What the Landlock runs put on PATH (no bwrap): symlinks to the real programs.
TOOLS = ("bash", "sh", "cat", "cp", "mkdir", "chmod", "ls", "touch", "git", "env", "rm")


@pytest.fixture(autouse=True)
def bwrap_and_git_installed() -> None:
    require("bwrap", "git")


@pytest.fixture
def scratch() -> Iterator[Path]:
    yield from scratch_folder("caretz-e2e-trust-")


@pytest.fixture
def workspace(scratch: Path) -> Path:
    return project_folder(scratch)


@pytest.fixture
def marker(scratch: Path) -> Path:
    return scratch / "planted-code-ran"


@pytest.fixture(params=["bwrap", "landlock"])
def backend(request, scratch: Path) -> str:
    return request.param


@pytest.fixture
def base_path(backend: str, scratch: Path) -> str:
    """PATH for the run: the machine's, or (Landlock) a folder without bwrap."""
    if backend == "bwrap":
        return os.environ["PATH"]
    folder = scratch / "bin"
    folder.mkdir()
    for program in TOOLS:
        found = shutil.which(program)
        assert found, f"{program} is missing"
        (folder / program).symlink_to(found)
    return str(folder)


@pytest.fixture
def sandboxed(caretz: Caretz, scratch: Path, base_path: str) -> Caretz:
    home = scratch / "home"
    home.mkdir()
    caretz.env.update(HOME=str(home), PATH=base_path)
    return caretz


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=u", "-c", "user.email=u@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return done.stdout


def repository(workspace: Path) -> None:
    git(workspace, "init", "-q")
    git(workspace, "add", "README.md")
    git(workspace, "commit", "-qm", "start")


def results(caretz: Caretz, run: Run) -> list[dict[str, Any]]:
    return [e for e in caretz.events(run.session_id) if e["type"] == "Tool.Result"]


def fake(name: str, marker: Path) -> str:
    """A command that plants `name` in the project's venv: it records that it ran, then
    runs the real one (so nothing looks wrong)."""
    real = shutil.which(name)
    script = f'#!/bin/sh\necho {name} >> {marker}\nexec {real} "$@"\n'
    return f"cat > .venv/bin/{name} <<'EOF'\n{script}EOF\nchmod +x .venv/bin/{name}"


# -- trusted programs ------------------------------------------------------------------


def test_a_planted_bwrap_and_git_in_the_activated_venv_never_run(
    sandboxed, server, workspace, marker, backend, base_path
):
    repository(workspace)
    plant = "mkdir -p .venv/bin && " + " && ".join(fake(p, marker) for p in ("bwrap", "git"))
    server.add(tool("bash", command=plant), text("planted"))
    first = sandboxed("-p", "set up the venv")
    assert first.code == 0, first.stderr
    venv_bin = workspace / ".venv" / "bin"
    assert (venv_bin / "bwrap").exists() and (venv_bin / "git").exists()

    # The next session, with that venv activated: every command and a checkpoint.
    server.add(tool("bash", command="echo ran-inside"), tool("write", path="n.txt", content="x"))
    server.add(text("done"))
    path = f"{venv_bin}{os.pathsep}{base_path}"
    run = sandboxed("-p", "go", env={"PATH": path, "VIRTUAL_ENV": str(workspace / ".venv")})

    assert run.code == 0, run.stderr
    inside = f"inside the writable project {workspace}"
    git_line = f"git on PATH is {venv_bin}/git, {inside}; caretz skips it and runs "
    assert git_line in run.stderr
    if backend == "bwrap":
        assert f"bwrap on PATH is {venv_bin}/bwrap, {inside}; caretz skips it and runs" in (
            run.stderr
        )
    else:
        assert f"bubblewrap is unusable (bwrap on PATH is {venv_bin}/bwrap, {inside}; " in (
            run.stderr
        )
    assert "ran-inside" in results(sandboxed, run)[0]["output"]
    created = [e for e in sandboxed.events(run.session_id) if e["type"] == "Checkpoint.Created"]
    assert created, "the checkpoint ran with the trusted git"
    assert not marker.exists(), marker.read_text()


def test_only_a_planted_git_on_path_means_no_checkpoints_and_one_line(
    sandboxed, server, workspace, marker, scratch
):
    venv_bin = workspace / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "git").write_text(f"#!/bin/sh\necho git >> {marker}\n")
    (venv_bin / "git").chmod(0o755)
    only = scratch / "only-bash"
    only.mkdir()
    (only / "bash").symlink_to(shutil.which("bash") or "bash")
    (only / "bwrap").symlink_to(shutil.which("bwrap") or "bwrap")
    server.add(tool("write", path="n.txt", content="x"), text("done"))

    run = sandboxed("-p", "go", env={"PATH": f"{venv_bin}{os.pathsep}{only}"})

    assert run.code == 0, run.stderr
    assert (
        f"git on PATH is {venv_bin}/git, inside the writable project {workspace}; caretz "
        "does not run it"
    ) in run.stderr
    assert "checkpoints are off" in run.stderr
    assert not marker.exists()


# -- caretz's own installation ----------------------------------------------------------


def venv_with_caretz(folder: Path) -> Path:
    """A virtual environment at `folder` that imports this caretz and its dependencies,
    through one .pth file of plain paths (whatever way caretz is installed here)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    (target,) = (folder / "lib").glob("python3*/site-packages")
    checkout = Path(caretz.__file__).resolve().parent.parent
    paths = [str(checkout), *site.getsitepackages()]
    (target / "caretz-here.pth").write_text("".join(f"{path}\n" for path in paths))
    return target


def test_caretz_installed_in_the_project_is_read_only_to_commands(
    sandboxed, server, workspace, marker, backend
):
    site_packages = venv_with_caretz(workspace / ".cvenv")
    planted = site_packages / "planted.pth"
    relative = planted.relative_to(workspace)
    line = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')"
    server.add(
        tool("bash", command=f'echo "{line}" > {relative}; echo x > .cvenv/bin/python3'),
        tool("write", path=str(relative), content=line + "\n"),
        text("done"),
    )
    python = str(workspace / ".cvenv" / "bin" / "python")
    command = [python, "-m", "caretz", "-p", "go"]

    def run_caretz(*args: str) -> subprocess.CompletedProcess[str]:
        env = sandboxed.environment()
        return subprocess.run(
            [*command[:3], *(args or command[3:])],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    done = run_caretz()

    if backend == "landlock":
        assert done.returncode == 2, done.stderr
        assert "the Landlock fallback cannot keep it read-only for commands" in done.stderr
        assert server.requests == []
        check = run_caretz("sandbox", "check")
        assert check.returncode == 1
        assert "error: caretz is installed inside a writable root" in check.stdout
        return
    assert done.returncode == 0, done.stderr
    assert "caretz is installed inside the project" in done.stderr
    assert not planted.exists()
    server.add(text("second session"))
    assert run_caretz().returncode == 0
    assert not marker.exists()


# -- git's control files and nested repositories ----------------------------------------


def test_git_never_runs_what_a_command_planted(sandboxed, server, workspace, marker):
    repository(workspace)
    monitor = f"touch {marker}; false"
    commondir = (
        "cp -r .git .cache-git && "
        f"git --git-dir=.cache-git config core.fsmonitor '{monitor}' && "
        'echo "$PWD/.cache-git" > .git/commondir; ls .git/commondir'
    )
    nested = (
        "mkdir sub && cd sub && git init -q && "
        f"git config core.fsmonitor '{monitor}' && echo x > f && git add f && "
        "git -c user.name=a -c user.email=a@b commit -qm x && cd .. && git add sub"
    )
    hooks = f"printf '#!/bin/sh\\ntouch {marker}\\n' > .git/hooks/pre-commit; echo '*' > .git/info/exclude"
    server.add(tool("bash", command=commondir), tool("bash", command=nested))
    server.add(tool("bash", command=hooks), text("done"))

    run = sandboxed("-p", "go")

    assert run.code == 0, run.stderr
    outputs = [result["output"] for result in results(sandboxed, run)]
    assert (
        f"[caretz] {workspace}/.git/commondir: created by a command; caretz moved it"
        in (outputs[0])
    )
    assert (
        f"[caretz] {workspace}/sub/.git: a nested repository linked into the index" in (outputs[1])
    )
    undone = [e for e in sandboxed.events(run.session_id) if e["type"] == "Sandbox.GitUndone"]
    assert len(undone) >= 2
    shown = sandboxed("sessions", "show", run.session_id).stdout
    assert f"    [caretz] {workspace}/.git/commondir: created by a command" in shown
    assert not (workspace / ".git" / "commondir").exists()
    assert (workspace / ".git" / "info" / "exclude").read_text() != "*\n"
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    # The user's own git afterwards.
    git(workspace, "status")
    git(workspace, "commit", "--allow-empty", "-qm", "after")
    assert not marker.exists()


def test_a_rewind_restores_an_edit_after_a_command_wrote_star_to_the_exclude_file(
    sandboxed, server, workspace
):
    repository(workspace)
    (workspace / "notes.txt").write_text("my notes\n")  # untracked, never committed
    server.add(tool("bash", command="echo '*' >> .git/info/exclude"), text("ok"))
    assert sandboxed("-p", "hide everything").code == 0

    server.add(tool("bash", command="echo lost > notes.txt; echo lost > README.md"), text("ok"))
    run = sandboxed("-p", "edit")
    assert run.code == 0, run.stderr
    assert (workspace / "notes.txt").read_text() == "lost\n"

    rewound = sandboxed("rewind", run.session_id, "--turn", "1", "--files-only")

    assert rewound.code == 0, rewound.stderr
    assert (workspace / "notes.txt").read_text() == "my notes\n"
    assert (workspace / "README.md").read_text() == "hello\n"


def test_a_linked_nested_repository_keeps_its_config(sandboxed, server, workspace, marker, backend):
    repository(workspace)
    vendor = workspace / "vendor"
    vendor.mkdir()
    git(vendor, "init", "-q")
    (vendor / "lib.py").write_text("LIB = 1\n")
    git(vendor, "add", "lib.py")
    git(vendor, "commit", "-qm", "lib")
    git(workspace, "add", "vendor")
    git(workspace, "commit", "-qm", "vendor")
    config = (vendor / ".git" / "config").read_text()
    plant = f"git -C vendor config core.fsmonitor 'touch {marker}; false'; echo planted"
    server.add(tool("bash", command=plant), text("done"))

    run = sandboxed("-p", "go")

    assert run.code == 0, run.stderr
    (output,) = [result["output"] for result in results(sandboxed, run)]
    if backend == "bwrap":  # read-only: the command could not write it
        assert "could not write config file .git/config" in output
    else:  # writable under Landlock: put back after the call
        assert f"[caretz] {vendor}/.git/config: changed by a command; caretz put it back" in output
    assert (vendor / ".git" / "config").read_text() == config
    git(workspace, "status")
    assert not marker.exists()


def test_a_planted_bash_never_runs_a_command_outside_the_sandbox(
    caretz, server, workspace, marker, scratch
):
    """With the sandbox off (or a command escalated out of it), the shell itself is one of
    the programs caretz runs on the host: a bash planted in the activated venv is passed
    over for the trusted one."""
    venv_bin = workspace / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    subprocess.run(["bash", "-c", fake("bash", marker)], cwd=workspace, check=True)
    home = scratch / "home"
    home.mkdir()
    server.add(tool("bash", command="echo ran-outside"), text("done"))
    path = f"{venv_bin}{os.pathsep}{os.environ['PATH']}"
    env = {"PATH": path, "HOME": str(home), "VIRTUAL_ENV": str(workspace / ".venv")}

    run = caretz("-p", "go", "--sandbox", "off", "--permission-mode", "yolo", env=env)

    assert run.code == 0, run.stderr
    assert "ran-outside" in json.dumps([request.body for request in server.requests])
    assert not marker.exists(), "the planted bash ran"
