"""Every process caretz starts goes through the session's sandbox runner, or is one of
caretz's own programs, listed here with the reason it may run outside the sandbox.

What the project or the model can influence (a command, a hook, a custom command's `!`
line, a search) starts in `caretz/tools/process.py`'s `start_process`, which puts it in
the session's sandbox. A new place that starts a process fails this test until it goes
through `start_process`, or is added below with its reason (and then it had better run
nothing a repository or a model chose).
"""

from __future__ import annotations

from pathlib import Path

import caretz
from tests.spawn_sites import Site, find_sites

PACKAGE = Path(caretz.__file__).parent

# The session's sandbox runner: the one way to start what the project or the model can
# influence (the bash tool, jobs, the `!` shell, hooks, a custom command's `!` lines, rg).
SANDBOX_RUNNER = {("caretz/tools/process.py", "start_process"): "the session's sandbox runner"}

# caretz's own programs, started outside the sandbox, each with why that is safe.
TRUSTED_LAUNCHERS = {
    ("caretz/sandbox/detect.py", "probe_bwrap"): (
        "bwrap itself, the trusted one (caretz/trusted.py), tried once to see that it works"
    ),
    ("caretz/sandbox/runtime.py", "_make_netns"): (
        "bwrap making the session's network namespace around a process that only blocks"
    ),
    ("caretz/sandbox/netlisten.py", "listener_inside"): (
        "the trusted nsenter and caretz's interpreter running caretz's own script that "
        "binds the allowlist proxy's socket inside the namespace"
    ),
    ("caretz/sandbox/landlock.py", "_supervise"): (
        "the Landlock launcher forking the child that confines itself before it execs"
    ),
    ("caretz/sandbox/landlock.py", "_exec_restricted"): (
        "the Landlock launcher's child, exec'ing the command once the rules are in force"
    ),
    ("caretz/sandbox/gitwatch.py", "gitlinks"): (
        "the trusted git listing the index's gitlinks, with fsmonitor off and no global or "
        "system config"
    ),
    ("caretz/checkpoints/git.py", "ShadowGit.call"): (
        "the trusted git on the shadow checkpoint repository: no hooks, filters, attributes "
        "or global config"
    ),
    ("caretz/checkpoints/git.py", "ShadowGit.ensure_repo"): (
        "the trusted git making the shadow checkpoint repository in caretz's data dir"
    ),
    ("caretz/checkpoints/restore.py", "BlobReader.__init__"): (
        "the trusted git's cat-file reading blobs of the shadow repository"
    ),
    ("caretz/checkpoints/snapshot.py", "project_tracked"): (
        "the trusted git listing the project's tracked files for a checkpoint"
    ),
    ("caretz/checkpoints/snapshot.py", "user_exclude_file"): (
        "the trusted git reading where the user's own excludes file is"
    ),
    ("caretz/agent/prompts.py", "git_lines"): (
        "the trusted git's status for the system prompt, fsmonitor off, no optional locks"
    ),
    ("caretz/schedule/crontab.py", "Crontab._run"): (
        "crontab -l / crontab -: the user's own table, for `caretz schedule`"
    ),
    ("caretz/schedule/commands.py", "run_job"): (
        "`caretz schedule run`: the user's own job line (which runs caretz) as cron would"
    ),
    ("caretz/providers/local.py", "LocalServers._spawn"): (
        "caretz's own local model server (python -m caretz.providers.local)"
    ),
    ("caretz/worktrees/git.py", "RepoGit.call"): (
        "the trusted git on the user's repository for `--worktree` and `caretz worktree`, "
        "and cloning the plugin or marketplace the user names to `caretz plugin` (no hooks, "
        "no submodules, file/https/ssh only), with no inherited GIT_* that points it elsewhere"
    ),
    ("caretz/batch/child.py", "TaskProcess.__init__"): (
        "a batch task's caretz: caretz's own interpreter running caretz.batch.launch"
    ),
    ("caretz/batch/launch.py", "main"): (
        "caretz.batch.launch becoming `python -m caretz` with caretz's own interpreter"
    ),
    ("caretz/mcp_client/launch.py", "spawn"): (
        "an MCP stdio server from the user's profile or an approved .mcp.json entry, under "
        "the launcher without rules (its process group ends with caretz)"
    ),
}

# Imports of a module named at run time, which could hand back subprocess: each names only
# caretz's own modules.
MODULE_LOADERS = {
    ("caretz/lazy.py", "LazyModule._lazy_module"): (
        "lazy_module's import, of the literal names its declarations give (checked above)"
    ),
    ("caretz/checkpoints/__init__.py", "__getattr__"): (
        "the package's own submodules, by the names in its _MODULE_OF table"
    ),
}

ALLOWED = {**SANDBOX_RUNNER, **TRUSTED_LAUNCHERS, **MODULE_LOADERS}


def test_every_process_caretz_starts_goes_through_the_sandbox_runner_or_is_its_own():
    unlisted = [
        f"{site.path}:{site.line} {site.function} ({site.what})"
        for site in find_sites(PACKAGE)
        if (site.path, site.function) not in ALLOWED
    ]
    assert unlisted == [], (
        "these start a process outside the session's sandbox runner: start it with "
        "caretz/tools/process.py's start_process, or list it in TRUSTED_LAUNCHERS with why "
        "it runs nothing the project or the model chose"
    )


def test_every_listed_place_still_starts_a_process():
    found = {(site.path, site.function) for site in find_sites(PACKAGE)}
    assert sorted(set(ALLOWED) - found) == []
    assert all(reason.strip() for reason in ALLOWED.values())


SNEAKY = """
import os
import subprocess as sp
import asyncio
from os import posix_spawnp as start
from subprocess import run
from asyncio import subprocess as aio
from caretz.lazy import lazy_module
import importlib
from mcp.client.stdio import stdio_client

later = lazy_module("pty")
Process = sp.Popen[bytes]  # a type: starts nothing


def direct(argv: list[str]) -> sp.Popen[bytes]:
    return sp.Popen(argv)


def aliased(argv):
    start(argv[0], argv, {})
    run(argv)


def passed_on(argv):
    return call_later(os.execvp, argv)


class Async:
    async def shell(self, loop, line):
        await asyncio.create_subprocess_shell(line)
        await aio.create_subprocess_exec("x")
        await loop.subprocess_exec(object, "x")


def dynamic():
    importlib.import_module("multiprocessing").Process()
    later.spawn(["sh"])


def mcp_server(parameters):
    return stdio_client(parameters)
"""


def test_the_checker_finds_each_way_to_start_a_process(tmp_path: Path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "sneaky.py").write_text(SNEAKY)

    found = [(site.function, site.what) for site in find_sites(package)]

    assert found == [
        ("Async.shell", "<loop>.subprocess_exec"),
        ("Async.shell", "asyncio.create_subprocess_shell"),
        ("Async.shell", "asyncio.subprocess.create_subprocess_exec"),
        ("aliased", "os.posix_spawnp"),
        ("aliased", "subprocess.run"),
        ("direct", "subprocess.Popen"),
        ("dynamic", "import_module('multiprocessing')"),
        ("dynamic", "pty.spawn"),
        ("mcp_server", "mcp.client.stdio.stdio_client"),
        ("passed_on", "os.execvp"),
    ]


def test_a_site_is_named_by_its_file_and_function():
    site = Site("caretz/x.py", "Class.method", "subprocess.run", 3)
    assert (site.path, site.function) == ("caretz/x.py", "Class.method")


OWN_POPEN = """
import subprocess


class Mine(subprocess.Popen):
    pass


Short = Mine
"""

USES_OWN = """
from pkg.own import Short


def made(argv):
    return Short(argv)
"""


def test_a_popen_of_the_trees_own_and_its_aliases_are_found_where_they_are_made(
    tmp_path: Path,
):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "own.py").write_text(OWN_POPEN)
    (package / "uses.py").write_text(USES_OWN)

    found = [(site.path, site.function) for site in find_sites(package)]

    assert found == [("pkg/uses.py", "made")]  # defining and naming it start nothing
