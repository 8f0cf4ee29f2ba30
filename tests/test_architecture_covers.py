"""The mount points bubblewrap creates on the host pass through one place, held by reading
the source and by building command lines:

- only sandbox/bwrap.py writes a mount whose target may lie in a user's folder; any other
  bwrap command line (the sandbox probe, the network namespace's holder) mounts only over
  fixed system paths that exist on every host;
- `bwrap_argv` is called only by the sandbox's launch, which hands its mount points on
  (`Launch.mount_points`), and `Sandbox.launch` only by `start_process`, which holds them
  in the session's `Covers` until the sandbox is gone (sandbox/covers.py);
- every target a command line mounts that is missing on the host inside a root bound
  read-write is among the mount points it reports.
"""

from __future__ import annotations

import ast
import functools
import os
from pathlib import Path

from caretz.sandbox.detect import check_sandbox
from caretz.sandbox.policy import build_policy, parse_mode
from caretz.sandbox.runner import open_sandbox
from tests.source_trees import parsed

CARETZ = Path(__file__).resolve().parents[1] / "caretz"
THE_ONE_PLACE = "sandbox/bwrap.py"
# bubblewrap's options that mount something at a target (creating it when missing), and
# how many arguments come before the target.
TARGET_AFTER = {
    **dict.fromkeys(("--bind", "--bind-try", "--ro-bind", "--ro-bind-try"), 2),
    **dict.fromkeys(("--dev-bind", "--dev-bind-try", "--bind-data", "--ro-bind-data"), 2),
    **dict.fromkeys(("--file", "--symlink", "--chmod"), 2),
    **dict.fromkeys(("--tmpfs", "--dir", "--proc", "--dev", "--mqueue", "--overlay"), 1),
    **dict.fromkeys(("--tmp-overlay", "--ro-overlay", "--remount-ro"), 1),
}
BWRAP_ONLY = set(TARGET_AFTER) - {"--file", "--chmod", "--dir"}
SYSTEM_TARGETS = {"/", "/dev", "/proc", "/proc/sys", "/proc/sysrq-trigger", "/tmp"}


def mounts_outside_system_paths(source: str) -> list[int]:
    """Lines where a literal list of arguments mounts at a target that is not a fixed
    system path (or not a literal at all)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.List | ast.Tuple):
            continue
        items = node.elts
        words = {item.value for item in items if isinstance(item, ast.Constant)}
        names = {item.id for item in items if isinstance(item, ast.Name)}
        if not (words & BWRAP_ONLY or "bwrap" in names):
            continue  # another program's options (sed's --file)
        for index, item in enumerate(items):
            if not (isinstance(item, ast.Constant) and item.value in TARGET_AFTER):
                continue
            at = index + TARGET_AFTER[item.value]
            target = items[at] if at < len(items) else None
            if not (isinstance(target, ast.Constant) and target.value in SYSTEM_TARGETS):
                found.append(item.lineno)
    return found


@functools.cache
def _modules() -> tuple[tuple[str, ast.Module], ...]:
    return tuple(
        (str(path.relative_to(CARETZ)), parsed(path)) for path in sorted(CARETZ.rglob("*.py"))
    )


def calls_of(name: str) -> dict[str, list[int]]:
    """Where a function or method called `name` is called, by module."""
    found: dict[str, list[int]] = {}
    for module, tree in _modules():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if called == name:
                found.setdefault(module, []).append(node.lineno)
    return found


def test_only_the_sandbox_command_line_mounts_inside_a_users_folder():
    offending = {
        str(path.relative_to(CARETZ)): lines
        for path in sorted(CARETZ.rglob("*.py"))
        if str(path.relative_to(CARETZ)) != THE_ONE_PLACE
        and (lines := mounts_outside_system_paths(path.read_text()))
    }
    assert offending == {}, (
        "a bwrap mount whose target may be in a user's folder is built outside "
        f"{THE_ONE_PLACE}: build it there, so its mount points are reported and removed"
    )


def test_the_check_finds_a_mount_at_a_users_path():
    assert mounts_outside_system_paths('argv = ["bwrap", "--tmpfs", str(root / ".caretz")]')
    assert mounts_outside_system_paths('argv = ["bwrap", "--bind", "/", "/home/me/.x"]')
    assert not mounts_outside_system_paths('argv = ["bwrap", "--ro-bind", "/", "/"]')


def test_command_lines_with_mount_points_are_built_and_started_in_one_place_each():
    assert calls_of("bwrap_argv") == {
        "sandbox/runner.py": calls_of("bwrap_argv")["sandbox/runner.py"]
    }
    launches = calls_of("launch")
    for servers in ("mcp_client/servers.py", "app/mcp_approval.py"):
        launches.pop(servers, None)  # McpServers.launch: MCP servers, not a sandbox
    assert set(launches) == {"tools/process.py", "sandbox/runner.py"}, launches
    assert len(launches["tools/process.py"]) == 1  # start_process, which holds the covers
    assert len(launches["sandbox/runner.py"]) == 1  # Sandbox.command: to look at, not run


def _targets(argv: list[str], bwrap: str) -> list[str]:
    targets = []
    start = argv.index(bwrap)  # after nsenter's own `--`
    for index, item in enumerate(argv[start:], start):
        if item == "--":
            break
        if item in TARGET_AFTER and item != "--remount-ro":
            targets.append(argv[index + TARGET_AFTER[item]])
    return targets


def test_every_missing_target_in_a_writable_root_is_reported(tmp_path: Path):
    work, other, home = tmp_path / "work", tmp_path / "other", tmp_path / "home"
    for folder in (work / "secrets", other / ".git", home):
        folder.mkdir(parents=True)
    (work / ".env").write_text("KEY=1\n")
    policy = build_policy(
        cwd=work,
        home=home,
        mode=parse_mode("workspace-write"),
        add_dirs=[str(other)],
        extra_hidden=[str(work / "secrets"), str(work / ".env")],
        extra_read_only=[str(work / "docs")],
    )
    check = check_sandbox(policy.mode, policy.network)
    assert check.bwrap.path, "bubblewrap is needed (apt install bubblewrap)"
    sandbox = open_sandbox(policy, check)
    launch = sandbox.launch(["true"], os.environ)
    launch.close()

    missing = {
        Path(target)
        for target in _targets(launch.argv, sandbox.bwrap_path)
        if not os.path.lexists(target)
        and any(Path(target).is_relative_to(root) for root in (work, other))
    }
    assert missing  # .caretz, .claude/commands, .git/hooks: covers to be made
    assert missing <= set(launch.mount_points)
    assert other / ".git" / "hooks" in launch.mount_points
