"""The example GitHub Actions workflow (examples/github-actions/caretz.yml), its shell steps
run here as a runner would run them: in a checkout, with the job's and the step's
environment, under `bash -eo pipefail`, against the loopback model server.

The install step installs this checkout (a copy of its sources, built offline by pip with
the project's build backend, its dependencies seen through a .pth of this environment's
site-packages). The `uses:` steps are GitHub's own actions: checkout is the temp repository
the steps run in, setup-python is the interpreter put first on PATH, and the upload step's
paths are checked to hold what it would upload.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import site
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.modelserver import ModelServer, text, tool

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "examples" / "github-actions" / "caretz.yml"
SECRET_KEY = "sk-ant-ci-secret-0123456789abcdef"
EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")


@dataclass
class Runner:
    """What a GitHub runner gives the job's steps, here in `root`."""

    root: Path
    server: ModelServer
    expressions: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    sudo_log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.workspace = self.root / "work" / "repo"
        self.temp = self.root / "runner-temp"
        self.summary = self.root / "step-summary.md"
        self.sudo_log = self.root / "sudo.log"

    def substitute(self, value: str) -> str:
        """`${{ … }}` replaced by its value; an expression this runner does not know fails."""

        def value_of(match: re.Match[str]) -> str:
            name = match.group(1)
            assert name in self.expressions, f"the test runner does not know ${{{{ {name} }}}}"
            return self.expressions[name]

        return EXPRESSION.sub(value_of, value)

    def run_step(
        self, step: dict[str, Any], job_env: dict[str, str]
    ) -> subprocess.CompletedProcess:
        script = self.root / "step.sh"
        script.write_text(step["run"])
        step_env = {name: self.substitute(str(v)) for name, v in (step.get("env") or {}).items()}
        return subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=self.workspace,
            env={**self.env, **job_env, **step_env},
            capture_output=True,
            text=True,
            timeout=180,
        )


def load_workflow() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text())


def prompt_default(workflow: dict[str, Any]) -> str:
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads the key `on` as True
    return triggers["workflow_dispatch"]["inputs"]["prompt"]["default"]


def sources_of_this_checkout(dest: Path) -> Path:
    """What pip builds caretz from: this checkout's package and project files (a copy, so
    the build leaves nothing in the checkout)."""
    dest.mkdir()
    shutil.copytree(ROOT / "caretz", dest / "caretz", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, dest / name)
    return dest


def python_for_the_runner(folder: Path) -> Path:
    """A fresh virtual environment standing in for setup-python's interpreter: caretz is
    not in it; its dependencies, pip and the build backend are seen through a .pth."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    (target,) = (folder / "lib").glob("python3*/site-packages")
    (target / "runner-deps.pth").write_text("".join(f"{p}\n" for p in site.getsitepackages()))
    return folder / "bin"


def fake_sudo(folder: Path, log: Path) -> Path:
    """`sudo` that only records what it was asked: a test never changes the machine."""
    folder.mkdir()
    sudo = folder / "sudo"
    sudo.write_text(f'#!/bin/sh\necho "$*" >> {log}\n')
    sudo.chmod(0o755)
    return folder


def project(workspace: Path) -> None:
    """The repository actions/checkout would have checked out."""
    workspace.mkdir(parents=True)
    (workspace / "notes.txt").write_text("hello from the notes\n")
    for command in (
        ["git", "init", "-q"],
        ["git", "add", "."],
        ["git", "-c", "user.name=ci", "-c", "user.email=ci@example.com", "commit", "-qm", "x"],
    ):
        subprocess.run(command, cwd=workspace, check=True)


@pytest.fixture
def runner(tmp_path, server) -> Runner:
    made = Runner(tmp_path, server)
    project(made.workspace)
    made.temp.mkdir()
    package = sources_of_this_checkout(tmp_path / "caretz-src")
    python_bin = python_for_the_runner(tmp_path / "hostedtoolcache")
    sudo_bin = fake_sudo(tmp_path / "fake-bin", made.sudo_log)
    made.expressions = {
        "vars.CARETZ_PACKAGE": str(package),
        "runner.temp": str(made.temp),
        "secrets.ANTHROPIC_API_KEY": SECRET_KEY,
        "inputs.prompt": prompt_default(load_workflow()),
        "github.run_id": "4242",
    }
    home = tmp_path / "home"
    home.mkdir()
    made.env = {
        "PATH": os.pathsep.join([str(python_bin), str(sudo_bin), os.environ["PATH"]]),
        "HOME": str(home),
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(made.workspace),
        "GITHUB_STEP_SUMMARY": str(made.summary),
        "RUNNER_TEMP": str(made.temp),
        # the loopback server stands in for the provider
        "ANTHROPIC_BASE_URL": server.url,
        # no profiles.json, as on a fresh runner
        "CARETZ_CONFIG": str(tmp_path / "no-profiles.json"),
        # pip builds and installs offline, with the build backend already here
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    return made


def test_the_workflow_runs_a_guarded_headless_run_and_keeps_its_session_and_result(runner):
    runner.server.add(tool("bash", command="cat notes.txt"), text("The notes say hello."))
    workflow = load_workflow()
    (job,) = workflow["jobs"].values()
    job_env = {name: runner.substitute(str(value)) for name, value in job["env"].items()}
    uploads: list[dict[str, Any]] = []
    for step in job["steps"]:
        if "uses" in step:
            if step["uses"].startswith("actions/upload-artifact@"):
                uploads.append(step)
            continue
        done = runner.run_step(step, job_env)
        assert done.returncode == 0, f"step {step.get('name')!r} failed:\n{done.stderr}"

    out = runner.temp / "caretz-out"
    result = json.loads((out / "result.json").read_text())
    assert (result["status"], result["exit_code"]) == ("done", 0)
    assert result["text"] == "The notes say hello."
    assert result["cost_usd"] is not None  # the budget flag needs a price: the default has one

    first = runner.server.requests[0]
    assert first.headers["x-api-key"] == SECRET_KEY  # the key from the secret
    assert prompt_default(workflow) in json.dumps(first.messages)

    # The run was guarded, its command sandboxed; the artifacts hold the session and result.
    (upload,) = uploads
    assert upload.get("if") == "always()"
    paths = [Path(line) for line in runner.substitute(upload["with"]["path"]).split()]
    assert all(path.is_dir() for path in paths)
    (session_log,) = [
        p for path in paths for p in path.glob(f"{result['session_id']}/events.jsonl")
    ]
    events = [json.loads(line) for line in session_log.read_text().splitlines()]
    started = events[0]
    assert started["type"] == "Session.Started" and started["loop_guard"] == "active"
    assert started["sandbox"]["mode"] != "off"
    (tool_result,) = [e for e in events if e["type"] == "Tool.Result"]
    assert tool_result["ok"] and "hello from the notes" in tool_result["output"]
    stream = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert stream[-1] == {"type": "result", **result}

    for path in paths:  # the key never reaches an artifact
        for file in path.rglob("*"):
            assert not file.is_file() or SECRET_KEY not in file.read_text(errors="replace")
    assert "The notes say hello." in runner.summary.read_text()
    assert "done (exit 0)" in runner.summary.read_text()


def test_the_install_step_names_what_to_set_when_the_package_variable_is_missing(runner):
    runner.expressions["vars.CARETZ_PACKAGE"] = ""  # an unset repository variable
    (job,) = load_workflow()["jobs"].values()
    job_env = {name: runner.substitute(str(value)) for name, value in job["env"].items()}
    (install,) = [step for step in job["steps"] if step.get("name") == "Install caretz"]
    done = runner.run_step(install, job_env)
    assert done.returncode != 0
    assert "set the repository variable CARETZ_PACKAGE" in done.stderr
