"""grep and glob run ripgrep inside the session's sandbox, on bubblewrap and on Landlock.

What rg itself can reach is checked with a stand-in for the rg binary (the search tools
take the binary to run) that does what a walk led astray would: read a credential
store and write outside the roots. Whatever the excludes and the path checks do with
rg's output, the process that walks the tree is the sandbox's.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from caretz.sandbox.detect import check_sandbox
from caretz.sandbox.policy import SandboxMode
from caretz.sandbox.runner import open_sandbox
from caretz.tools.base import ToolContext
from caretz.tools.file_list import list_files
from caretz.tools.search import GlobTool, GrepTool
from tests.sandbox.conftest import SECRET_KEY

STRAY = """#!/bin/sh
cat {key} >&2
echo out > {outside}/rg-wrote
exit 2
"""


@pytest.fixture(params=["bwrap", "landlock"])
def sandbox(request, make_policy, bwrap_sandbox, landlock_sandbox):
    make = bwrap_sandbox if request.param == "bwrap" else landlock_sandbox
    return make(make_policy())


@pytest.fixture
def stray_rg(scratch: Path, home: Path) -> Path:
    """An rg that reads `~/.ssh/id_rsa` and writes outside the roots, then fails."""
    outside = scratch / "outside"
    outside.mkdir()
    rg = scratch / "bin" / "rg"
    rg.parent.mkdir()
    rg.write_text(STRAY.format(key=home / ".ssh" / "id_rsa", outside=outside))
    rg.chmod(0o755)
    return rg


def test_rg_walks_inside_the_sandbox(sandbox, stray_rg: Path, scratch: Path):
    ctx = ToolContext(workspace=sandbox.policy.cwd, sandbox=sandbox)

    grep = GrepTool(rg=stray_rg).run({"pattern": "x"}, ctx)
    glob = GlobTool(rg=stray_rg).run({"pattern": "**/*.py"}, ctx)

    for result in (grep, glob):
        assert not result.ok and SECRET_KEY not in result.output
        assert result.output.startswith(("grep failed", "glob failed"))  # with rg's stderr
    assert not (scratch / "outside" / "rg-wrote").exists()


def test_with_the_sandbox_off_rg_runs_as_it_is(make_policy, scratch, stray_rg):
    """The stand-in does reach the key without a sandbox: the test above would see it."""
    policy = make_policy(mode=SandboxMode.OFF)
    sandbox = open_sandbox(policy, check_sandbox(policy.mode))
    ctx = ToolContext(workspace=sandbox.policy.cwd, sandbox=sandbox)

    result = GrepTool(rg=stray_rg).run({"pattern": "x"}, ctx)

    assert SECRET_KEY in result.output
    assert (scratch / "outside" / "rg-wrote").exists()


def test_the_folder_listing_for_people_runs_in_the_sandbox_too(sandbox, scratch: Path):
    (sandbox.policy.cwd / "src").mkdir()
    (sandbox.policy.cwd / "src" / "app.py").write_text("print()\n")
    ctx = ToolContext(workspace=sandbox.policy.cwd, sandbox=sandbox)
    assert list_files(ctx, limit=10).paths == ["README", "src/app.py"]
    off = dataclasses.replace(
        sandbox, policy=dataclasses.replace(sandbox.policy, mode=SandboxMode.OFF)
    )
    assert list_files(ToolContext(workspace=off.policy.cwd, sandbox=off), limit=10).paths == [
        "README",
        "src/app.py",
    ]


def test_an_rg_installed_under_the_hosts_tmp_runs_in_the_sandbox(sandbox, tmp_path: Path):
    """caretz installed in a clone under /tmp: the sandbox's /tmp hides the host's, so
    the packaged rg is bound where caretz runs it from, read-only."""
    from caretz.tools.ripgrep import rg_path

    assert str(tmp_path).startswith("/tmp/")
    rg = tmp_path / "venv" / "bin" / "rg"
    rg.parent.mkdir(parents=True)
    rg.write_bytes(rg_path().read_bytes())
    rg.chmod(0o755)
    (sandbox.policy.cwd / "app.py").write_text("import json\n")
    ctx = ToolContext(workspace=sandbox.policy.cwd, sandbox=sandbox)

    found = GrepTool(rg=rg).run({"pattern": "import json"}, ctx)

    assert found.ok and "app.py:1:import json" in found.output, found.output


def test_a_search_the_sandbox_cannot_start_is_a_failure_not_no_matches(
    bwrap_sandbox, make_policy, scratch: Path
):
    sandbox = bwrap_sandbox(make_policy())
    (sandbox.policy.cwd / "app.py").write_text("import json\n")
    ctx = ToolContext(workspace=sandbox.policy.cwd, sandbox=sandbox)
    gone = scratch / "no-such-dir" / "rg"  # nothing there for the sandbox to exec

    result = GrepTool(rg=gone).run({"pattern": "import json"}, ctx)

    assert not result.ok and result.output.startswith("grep could not run in the sandbox: bwrap")
