"""Real bubblewrap and Landlock runs in tmp dirs outside /tmp (the sandbox's /tmp is private).

A test that needs bwrap or Landlock fails when it is missing: CI installs bubblewrap.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from caretz.sandbox.detect import BwrapProbe, SandboxBackend, check_sandbox
from caretz.sandbox.envfilter import EnvFilter
from caretz.sandbox.landlock import abi_version
from caretz.sandbox.policy import SandboxPolicy, build_policy
from caretz.sandbox.runner import Sandbox, open_sandbox

SECRET_KEY = "id_rsa-private-key-material"


@pytest.fixture
def bwrap_path() -> str:
    path = shutil.which("bwrap")
    assert path, "bubblewrap is missing: apt install bubblewrap (the sandbox tests need it)"
    return path


@pytest.fixture
def landlock_abi() -> int:
    abi = abi_version()
    assert abi >= 1, "this kernel has no Landlock (the fallback tests need it)"
    return abi


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A dir under /var/tmp: visible (read-only) inside the sandbox, unlike /tmp."""
    path = Path(tempfile.mkdtemp(prefix="caretz-sbx-test-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def home(scratch: Path) -> Path:
    """A HOME with credential stores in it, and one ordinary dotfile."""
    home = scratch / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET_KEY)
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("aws_secret_access_key = abc")
    (home / ".docker").mkdir()
    (home / ".docker" / "config.json").write_text('{"auths": {"x": "token"}}')
    (home / ".netrc").write_text("machine x login u password p")
    (home / ".bashrc").write_text("ordinary dotfile")
    return home


@pytest.fixture
def work(scratch: Path) -> Path:
    """The working directory: a git repository with one file."""
    work = scratch / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (work / "README").write_text("hello")
    return work


PolicyMaker = Callable[..., SandboxPolicy]


@pytest.fixture
def make_policy(work: Path, home: Path) -> PolicyMaker:
    def make(**overrides: object) -> SandboxPolicy:
        arguments: dict = {"cwd": work, "home": home}
        arguments.update(overrides)
        return build_policy(**arguments)

    return make


@pytest.fixture
def bwrap_sandbox(bwrap_path: str) -> Callable[[SandboxPolicy], Sandbox]:
    def make(policy: SandboxPolicy, env_filter: EnvFilter | None = None) -> Sandbox:
        sandbox = open_sandbox(policy, check_sandbox(policy.mode, policy.network), env_filter)
        assert sandbox.backend is SandboxBackend.BWRAP
        return sandbox

    return make


@pytest.fixture
def landlock_sandbox(landlock_abi: int) -> Callable[[SandboxPolicy], Sandbox]:
    """The Landlock fallback, as caretz would pick it where bwrap is not installed."""
    missing = BwrapProbe(None, False, "not found on PATH")

    def make(policy: SandboxPolicy) -> Sandbox:
        check = check_sandbox(policy.mode, policy.network, bwrap=missing)
        sandbox = open_sandbox(policy, check)
        assert sandbox.backend is SandboxBackend.LANDLOCK
        return sandbox

    return make
