"""`sandbox.network` as "off", "on", true, false or a list of hosts, `sandbox.hosts`, and what
`caretz sandbox check` says each enforces."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from caretz.config.sandbox import sandbox_policy
from caretz.config.settings import Settings, resolve_settings
from caretz.config_base import ConfigError
from caretz.sandbox.allowlist import build_allowlist
from caretz.sandbox.detect import BwrapProbe, check_sandbox, render_check
from caretz.sandbox.policy import SandboxMode
from caretz.trusted import Program, Programs

WORKS = BwrapProbe("/usr/bin/bwrap", True, "works")
MISSING = BwrapProbe(None, False, "not found on PATH")


def settings_with(**sandbox: object) -> Settings:
    profile = {"profiles": {"general": {"sandbox": sandbox}}}
    Path(os.environ["CARETZ_CONFIG"]).write_text(json.dumps(profile))
    return resolve_settings({}, dict(os.environ))


@pytest.mark.parametrize(
    ("value", "host"), [(False, False), ("off", False), (True, True), ("on", True)]
)
def test_off_and_on_keep_their_old_meaning(tmp_path, value, host):
    policy = sandbox_policy(settings_with(network=value), tmp_path, os.environ)

    assert policy.network is host and policy.allowlist is None


def test_a_list_keeps_the_network_off_with_an_allowlist(tmp_path):
    chosen = settings_with(network=["pypi.org", "*.github.com"], hosts={"pypi.org": "10.0.0.2"})
    policy = sandbox_policy(chosen, tmp_path, os.environ)

    assert policy.network is False
    assert policy.allowlist is not None
    assert policy.allowlist.entries == ("pypi.org", "*.github.com")
    assert policy.allowlist.allows("api.github.com")
    assert policy.allowlist.pinned_address("pypi.org") == "10.0.0.2"


@pytest.mark.parametrize(
    ("sandbox", "says"),
    [
        ({"network": "some"}, 'profiles.general.sandbox.network: use "off", "on" or a list'),
        ({"network": ["pypi.org", 3]}, "profiles.general.sandbox.network: use"),
        ({"network": ["*"]}, "profiles.general.sandbox.network: '*': for every host"),
        (
            {"network": ["pypi.org"], "hosts": {"pypi.org": "pypi.internal"}},
            "sandbox.hosts: 'pypi.org' maps to 'pypi.internal', which is no address",
        ),
    ],
)
def test_a_bad_network_setting_is_one_line_naming_it(sandbox, says):
    with pytest.raises(ConfigError) as error:
        settings_with(**sandbox)

    assert says in str(error.value) and "\n" not in str(error.value)


def test_the_check_says_what_the_proxy_enforces_under_bubblewrap():
    allowlist = build_allowlist(["package-registries", "*.github.com"])
    check = check_sandbox(SandboxMode.WORKSPACE_WRITE, False, bwrap=WORKS, allowlist=allowlist)
    text = render_check(check)

    assert "network only package-registries, *.github.com, through caretz's proxy" in text
    assert (
        "enforced: network: only the allowed hosts, through caretz's HTTP and HTTPS proxy" in text
    )
    assert "not enforced: network: HTTPS through the proxy is a tunnel, not inspected" in text
    assert "network: off (the session's own loopback" not in text
    assert check.as_dict()["allowed_hosts"] == ["package-registries", "*.github.com"]


def test_the_check_says_plainly_what_landlock_leaves_open():
    allowlist = build_allowlist(["pypi.org"])
    tcp = check_sandbox(
        SandboxMode.WORKSPACE_WRITE, False, bwrap=MISSING, landlock_abi=4, allowlist=allowlist
    )
    old = check_sandbox(
        SandboxMode.WORKSPACE_WRITE, False, bwrap=MISSING, landlock_abi=3, allowlist=allowlist
    )

    assert any("TCP connect to the proxy's port only" in line for line in tcp.enforced)
    assert any("UDP and other non-TCP traffic" in line for line in tcp.not_enforced)
    assert not any(line.startswith("network:") for line in old.enforced)
    assert any(
        "not restricted (needs Landlock ABI 4, this kernel has 3): only programs that use "
        "HTTP_PROXY" in line
        for line in old.not_enforced
    )


def test_the_network_on_has_no_allowlist_to_tell():
    allowlist = build_allowlist(["pypi.org"])
    check = check_sandbox(SandboxMode.WORKSPACE_WRITE, True, bwrap=WORKS, allowlist=allowlist)

    assert check.allowed_hosts is None and "network on" in render_check(check)


def test_the_check_says_the_allowlist_needs_nsenter_under_bubblewrap():
    allowlist = build_allowlist(["pypi.org"])
    found = Program("x", "/usr/bin/x")
    without = Programs(bwrap=found, git=found, python=found, nsenter=Program("nsenter", None))
    check = check_sandbox(
        SandboxMode.WORKSPACE_WRITE, False, bwrap=WORKS, allowlist=allowlist, programs=without
    )

    assert any("the allowlist needs nsenter" in line for line in check.not_enforced)
