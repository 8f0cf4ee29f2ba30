"""Which backend works here, what it enforces, and the one-line error when none does."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from caretz.sandbox.detect import (
    BwrapProbe,
    SandboxBackend,
    SandboxUnavailable,
    check_sandbox,
    probe_bwrap,
    render_check,
    require_backend,
)
from caretz.sandbox.policy import SandboxMode

MISSING = BwrapProbe(None, False, "not found on PATH")


def _refusing_bwrap(tmp_path: Path) -> str:
    """An executable that fails the way bwrap does where AppArmor refuses user namespaces."""
    path = tmp_path / "bwrap"
    path.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_here_bubblewrap_works(bwrap_path, landlock_abi):
    check = check_sandbox()
    assert check.backend is SandboxBackend.BWRAP
    assert check.bwrap == BwrapProbe(bwrap_path, True, "works")
    assert check.landlock_abi == landlock_abi
    assert check.problem is None and check.notice is None and not check.not_enforced
    assert require_backend(check) is SandboxBackend.BWRAP


def test_a_refused_bwrap_falls_back_to_landlock_and_says_so(tmp_path, landlock_abi):
    probe = probe_bwrap(_refusing_bwrap(tmp_path))
    assert probe == BwrapProbe(probe.path, False, "bwrap: setting up uid map: Permission denied")
    check = check_sandbox(bwrap=probe)
    assert check.backend is SandboxBackend.LANDLOCK
    assert check.notice and "setting up uid map" in check.notice
    assert "apt install bubblewrap" in check.notice
    assert any(".git/hooks" in item for item in check.not_enforced)
    assert any("hidden paths inside writable roots" in item for item in check.not_enforced)
    assert any("PID namespace" in item for item in check.not_enforced)


def test_neither_backend_stops_with_one_line_naming_both_fixes():
    check = check_sandbox(bwrap=MISSING, landlock_abi=0, platform="linux")
    assert check.backend is SandboxBackend.NONE
    assert check.problem is not None and "\n" not in check.problem
    assert "apt install bubblewrap" in check.problem and "--sandbox off" in check.problem
    try:
        require_backend(check)
    except SandboxUnavailable as error:
        assert str(error) == check.problem
    else:
        raise AssertionError("a missing sandbox must stop the start")


def test_sandbox_off_needs_no_backend():
    check = check_sandbox(SandboxMode.OFF, bwrap=MISSING, landlock_abi=0, platform="linux")
    assert check.problem is None
    assert require_backend(check) is SandboxBackend.NONE
    assert check.not_enforced == ("filesystem, network and processes: the sandbox is off",)


def test_other_platforms_get_a_clear_message_not_a_silent_no_op():
    check = check_sandbox(platform="darwin")
    assert check.backend is SandboxBackend.NONE
    assert check.problem and "needs Linux" in check.problem and "darwin" in check.problem
    assert "--sandbox off" in check.problem
    assert "error: " in render_check(check)


def test_landlock_before_abi_4_does_not_claim_the_network():
    check = check_sandbox(bwrap=MISSING, landlock_abi=3, platform="linux")
    assert check.backend is SandboxBackend.LANDLOCK
    assert any("network: not restricted" in item for item in check.not_enforced)
    assert not any(item.startswith("network: TCP") for item in check.enforced)


def test_render_and_json(bwrap_path):
    check = check_sandbox(SandboxMode.READ_ONLY, network=True)
    text = render_check(check)
    assert text.splitlines()[:4] == [
        "mode: read-only, network on",
        f"bubblewrap: works ({bwrap_path})",
        f"Landlock: ABI {check.landlock_abi}",
        "commands run with: bubblewrap",
    ]
    assert "  enforced: writes: nowhere (read-only mode)" in text
    data = json.loads(json.dumps(check.as_dict()))
    assert data["backend"] == "bwrap" and data["mode"] == "read-only"
    assert data["bwrap"]["works"] is True
