"""The network allowlist end to end: the real CLI, a scripted model running curl and pip
through the bash tool, real bubblewrap (and the Landlock fallback), and loopback servers
reached by names that `sandbox.hosts` pins to 127.0.0.1.

An allowed name gets through (plain HTTP and CONNECT), another is refused with a line the
model reads, `pip download` fetches a wheel the test built from a loopback simple index,
with the network "off" nothing gets out, and in the interactive session a refused host
is allowed for the session from the prompt.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pip as pip_module
import pytest

from tests.e2e.conftest import Caretz
from tests.e2e.sandbox_folders import project_folder, require, scratch_folder
from tests.modelserver import text, tool
from tests.sandbox.netservers import LoopbackServer, loopback_http, serve_index

LANDLOCK_PROGRAMS = ("bash", "curl", "env", "cat", "ls")


@pytest.fixture(autouse=True)
def programs_installed() -> None:
    require("bwrap", "nsenter", "curl")


@pytest.fixture
def scratch() -> Iterator[Path]:
    yield from scratch_folder("caretz-e2e-net-")


@pytest.fixture
def workspace(scratch: Path) -> Path:
    return project_folder(scratch)


@pytest.fixture
def upstream() -> Iterator[LoopbackServer]:
    with loopback_http() as server:
        yield server


@pytest.fixture(params=["bwrap", "landlock"])
def backend(request: pytest.FixtureRequest, scratch: Path) -> dict[str, str]:
    """The environment that picks each backend (a PATH without bwrap: Landlock)."""
    if request.param == "bwrap":
        return {}
    bin_dir = scratch / "bin"
    bin_dir.mkdir()
    for program in LANDLOCK_PROGRAMS:
        found = shutil.which(program)
        assert found, f"{program} is missing"
        (bin_dir / program).symlink_to(found)
    (bin_dir / "python3").symlink_to(os.path.realpath(sys.executable))
    return {"PATH": str(bin_dir)}


def allow(caretz: Caretz, network: object, hosts: dict[str, str] | None = None) -> None:
    sandbox = {"network": network, "hosts": hosts or {}}
    caretz.write_config({"profiles": {"general": {"sandbox": sandbox}}})


def results(caretz: Caretz, args: tuple[str, ...], env: dict[str, str] | None = None):
    run = caretz(*args, env=env)
    assert run.code == 0, run.stderr
    events = caretz.events(run.session_id)
    return [e["output"] for e in events if e["type"] == "Tool.Result"], events


def test_curl_reaches_an_allowed_name_and_is_refused_another(caretz, server, upstream, backend):
    allow(caretz, ["pypi.test"], {"pypi.test": "127.0.0.1"})
    base = f"pypi.test:{upstream.port}"
    server.add(
        tool("bash", command=f"curl -sS http://{base}/plain"),
        tool("bash", command=f"curl -sS --proxytunnel http://{base}/tunnel"),
        tool("bash", command=f"curl -sS http://other.test:{upstream.port}/"),
        text("done"),
    )

    (plain, tunnel, refused), events = results(caretz, ("-p", "fetch"), backend)

    assert plain == tunnel == f"hello from {base}"
    assert [seen.path for seen in upstream.seen] == ["/plain", "/tunnel"]
    line = (
        f"caretz refused a connection to other.test:{upstream.port}: not in the network "
        'allowlist. To allow it, add "other.test" to sandbox.network in profiles.json.'
    )
    assert refused.splitlines() == [line, f"[network] {line}"]  # curl's body, then caretz's
    [event] = [e for e in events if e["type"] == "Sandbox.NetworkRefused"]
    assert (event["host"], event["port"]) == ("other.test", upstream.port)
    system = server.requests[0].system
    assert "network only through caretz's HTTP/HTTPS proxy" in system and "to: pypi.test;" in system
    started = next(e for e in events if e["type"] == "Session.Started")
    assert started["sandbox"]["allowed_hosts"] == ["pypi.test"]


def test_pip_downloads_from_an_allowed_loopback_index(caretz, server, upstream, workspace):
    wheel = serve_index(upstream, "tinypkg", "1.0")
    allow(caretz, ["pypi.test"], {"pypi.test": "127.0.0.1"})
    index = f"http://pypi.test:{upstream.port}/simple/"
    # The sandbox has a /tmp of its own, so a checkout (and its venv) under /tmp is not seen
    # from inside: pip goes into the project, run by the base interpreter (outside /tmp).
    shutil.copytree(Path(pip_module.__file__).parent, workspace / "_pip" / "pip")
    python = Path(sys.base_prefix) / "bin" / "python3"
    pip = (
        f"PYTHONPATH=_pip {python} -m pip download --isolated --no-cache-dir --no-deps "
        f"--disable-pip-version-check --trusted-host pypi.test --index-url {index} "
        "-d downloads tinypkg==1.0"
    )
    server.add(tool("bash", command=pip), text("done"))

    (output,), _ = results(caretz, ("-p", "download"))

    assert "Successfully downloaded tinypkg" in output, output
    assert (workspace / "downloads" / wheel).read_bytes() == upstream.files[f"/files/{wheel}"][1]
    assert [seen.path for seen in upstream.seen] == ["/simple/tinypkg/", f"/files/{wheel}"]


def test_with_the_network_off_nothing_gets_out(caretz, server, upstream):
    allow(caretz, "off", {"pypi.test": "127.0.0.1"})
    server.add(
        tool("bash", command=f"curl -sS --max-time 10 http://pypi.test:{upstream.port}/; echo $?"),
        tool("bash", command=f"curl -sS --max-time 10 http://127.0.0.1:{upstream.port}/; echo $?"),
        tool("bash", command="env | grep -ic _proxy="),
        text("done"),
    )

    (by_name, by_address, proxies), events = results(caretz, ("-p", "fetch"))

    assert by_name.splitlines()[-1] == "6"  # could not resolve: no DNS, no proxy
    assert by_address.splitlines()[-1] == "7"  # could not connect: the session's own loopback
    assert proxies.splitlines()[0] == "0"
    assert upstream.seen == []
    assert not [e for e in events if e["type"].startswith("Sandbox.Network")]


def test_a_refused_host_is_allowed_for_the_session_at_the_prompt(
    terminal, caretz, server, upstream
):
    allow(caretz, ["pypi.test"], {"later.test": "127.0.0.1"})  # pinned, not listed
    fetch = f"curl -sS http://later.test:{upstream.port}/"
    server.add(tool("bash", command=fetch), tool("bash", command=fetch), text("Fetched."))

    term = terminal()
    term.type("fetch it")
    term.expect("caretz asks: let commands reach later.test for the rest of this session\\?")
    term.expect("allow\\? ")
    term.child.send("y\r")
    term.expect("Fetched.")
    session_id = term.ctrl_d()

    outputs = [e for e in caretz.events(session_id) if e["type"] == "Tool.Result"]
    first, second = (e["output"] for e in outputs)
    assert first.endswith(
        "[network] the user allowed later.test for this session: run the command again"
    )
    assert second == f"hello from later.test:{upstream.port}"
    assert [seen.path for seen in upstream.seen] == ["/"]
    kinds = [e["type"] for e in caretz.events(session_id) if e["type"].startswith("Sandbox.Net")]
    assert kinds == ["Sandbox.NetworkRefused", "Sandbox.NetworkAllowed"]
