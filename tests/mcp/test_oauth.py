"""OAuth for HTTP MCP servers against a real authorization server on loopback (the SDK's
server-side auth with a provider of the tests', tests/mcp/oauth_server.py): the login in a
"browser" (an httpx client that follows the authorization URL to caretz's loopback
listener, injected as the opener), its tokens kept private, used by a later run of the
real CLI, refreshed once expired, removed by `caretz mcp logout`; a server that asks
for a login caretz does not have is one line, and the run goes on."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from mcp.shared.auth import OAuthClientInformationFull

from caretz.commands.mcp import login_server
from caretz.config.settings import resolve_settings
from caretz.mcp_client.loopback import LoginRefused, Loopback
from caretz.mcp_client.servers import McpServers
from caretz.mcp_client.tokens import TOKENS_DIR, TokenStore
from caretz.runtime.mcp import configured_servers, planned_servers
from caretz.runtime.project_trust import project_trust
from caretz.tools.base import ToolContext
from tests.e2e.conftest import Caretz
from tests.mcp.conftest import BOUND_S, STARTUP_ROOM, free_port
from tests.mcp.oauth_server import LIFETIME_S, AuthServer, serve
from tests.mcp.test_headless import mcp_lines
from tests.modelserver import ModelServer, calls, text


@pytest.fixture(scope="module")
def http_auth() -> Iterator[AuthServer]:
    yield from serve()


@pytest.fixture(scope="module")
def sse_auth() -> Iterator[AuthServer]:
    yield from serve(sse=True)


class Browser:
    """The user's browser: it follows the authorization URL, and its redirects, to the end."""

    def __init__(self) -> None:
        self.visits: list[str] = []
        self.pages: list[httpx.Response] = []

    def __call__(self, url: str) -> None:
        self.visits.append(url)
        with httpx.Client(follow_redirects=True, timeout=BOUND_S) as client:
            self.pages.append(client.get(url))


def write_profile(transport: str, url: str, **oauth: Any) -> None:
    entry: dict[str, Any] = {"type": transport, "url": url, "startupTimeout": STARTUP_ROOM}
    if oauth:
        entry["oauth"] = oauth
    general = {
        "mcpServers": {"guarded": entry},
        "mcp": {"startupTimeout": STARTUP_ROOM},
        "permissions": {"allow": ["mcp__guarded__whoami"]},
    }
    Path(os.environ["CARETZ_CONFIG"]).write_text(json.dumps({"profiles": {"general": general}}))


def settings() -> Any:
    return resolve_settings({}, {**os.environ, "ANTHROPIC_API_KEY": "k"})


def kept_file(url: str) -> Path:
    return TokenStore(Path(os.environ["CARETZ_DATA_DIR"]) / TOKENS_DIR).path(url)


def every_other_file(data_dir: Path, kept: Path) -> str:
    """What caretz wrote in its data dir besides the kept login."""
    return "".join(
        path.read_text(errors="replace")
        for path in sorted(data_dir.rglob("*"))
        if path.is_file() and path != kept
    )


def test_a_login_is_kept_private_and_a_later_run_uses_it_without_a_browser(
    http_auth: AuthServer,
    caretz: Caretz,
    server: ModelServer,
    capsys: pytest.CaptureFixture[str],
):
    auth, url = http_auth, http_auth.url
    write_profile("http", url)
    browser = Browser()
    registered = len(auth.provider.clients)

    assert login_server(settings(), "guarded", caretz.workspace, browser) == 0

    said = capsys.readouterr()
    [visit] = browser.visits
    assert browser.pages[0].status_code == 200 and "logged in" in browser.pages[0].text
    assert visit in said.err  # for a machine without a browser
    query = parse_qs(urlsplit(visit).query)
    assert query["redirect_uri"][0].startswith("http://127.0.0.1:")
    assert query["code_challenge_method"] == ["S256"]
    assert len(auth.provider.clients) == registered + 1  # registered itself (RFC 7591)
    kept = kept_file(url)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    tokens = json.loads(kept.read_text())["tokens"]
    assert tokens["access_token"] in auth.provider.access
    assert str(kept) in said.out

    server.add(calls(("mcp__guarded__whoami", {})), text("Signed in."))
    run = caretz("-p", "am I signed in?")

    assert run.code == 0, run.stderr
    [result] = [b for b in server.requests[1].messages[-1]["content"] if b["type"] == "tool_result"]
    assert "you are signed in" in json.dumps(result["content"])
    assert browser.visits == [visit]  # no second login
    secrets = (tokens["access_token"], tokens["refresh_token"])
    written = every_other_file(caretz.data_dir, kept) + run.stdout + run.stderr + said.out
    assert not any(secret in written for secret in secrets)


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_an_expired_access_token_is_refreshed_without_a_browser(
    transport: str, http_auth: AuthServer, sse_auth: AuthServer, tmp_path: Path
):
    auth = http_auth if transport == "http" else sse_auth
    url = auth.url if transport == "http" else auth.sse_url
    write_profile(transport, url)
    browser = Browser()
    assert login_server(settings(), "guarded", tmp_path, browser) == 0
    kept = kept_file(url)
    before = json.loads(kept.read_text())["tokens"]
    refreshes = auth.provider.refreshes
    # A later session, two lifetimes on: the kept access token has expired.
    later = TokenStore(kept.parent, clock=lambda: time.time() + 2 * LIFETIME_S)
    current = settings()
    trust = project_trust(current, tmp_path)
    specs, _ = planned_servers(current, configured_servers(current, trust), tmp_path, trust)
    servers = McpServers.start(specs, [], current.profile.mcp, tmp_path / "logs", tokens=later)
    try:
        [status] = servers.statuses()
        assert status.state == "ready", status.detail
        # (FastMCP declares resources, so the two resource tools come with the server's own.)
        [whoami] = [tool for tool in servers.tools if tool.spec.name == "mcp__guarded__whoami"]
        assert whoami.run({}, ToolContext(workspace=tmp_path)).output == "you are signed in"
    finally:
        servers.close()

    assert auth.provider.refreshes == refreshes + 1
    after = json.loads(kept.read_text())["tokens"]
    assert after["access_token"] != before["access_token"]
    assert after["access_token"] in auth.provider.access
    assert len(browser.visits) == 1


# A browser for the real CLI, through $BROWSER (webbrowser's own way to name one): it
# follows the URL and its redirects to the end.
BROWSER = """#!{python}
import sys, httpx
httpx.get(sys.argv[1], follow_redirects=True, timeout=300).raise_for_status()
"""


def test_login_and_logout_from_the_cli_and_then_a_run_says_in_one_line_that_it_needs_one(
    http_auth: AuthServer, caretz: Caretz, server: ModelServer, tmp_path: Path
):
    write_profile("http", http_auth.url)
    browser = tmp_path / "browser"
    browser.write_text(BROWSER.format(python=sys.executable))
    browser.chmod(0o700)
    login = caretz("mcp", "login", "guarded", env={"BROWSER": str(browser), "DISPLAY": None})
    assert login.code == 0, login.stderr
    kept = kept_file(http_auth.url)
    assert "logged in to MCP server 'guarded'" in login.stdout and kept.exists()

    out = caretz("mcp", "logout", "guarded")

    assert out.code == 0 and "logged out of MCP server 'guarded'" in out.stdout, out.stderr
    assert not kept.exists()
    # The model calls its tool, so the run lasts until the server has answered.
    server.add(calls(("mcp__guarded__whoami", {})), text("Done without it."))
    run = caretz("-p", "am I signed in?")
    assert run.code == 0, run.stderr
    assert "needs a login" in json.dumps(server.requests[1].messages[-1]["content"])
    assert mcp_lines(run.stderr) == [
        "mcp: server 'guarded' needs a login: run `caretz mcp login guarded`; going on without it"
    ]
    assert not kept.exists()  # nothing was registered or kept behind the user's back


def test_a_client_registered_by_hand_asks_for_its_scopes_on_its_port(
    http_auth: AuthServer, tmp_path
):
    port = free_port()
    redirect = f"http://127.0.0.1:{port}/callback"
    http_auth.provider.clients["by-hand"] = OAuthClientInformationFull(
        client_id="by-hand",
        redirect_uris=[redirect],  # type: ignore[list-item]
        scope="mcp extra",
        token_endpoint_auth_method="none",
    )
    write_profile(
        "http", http_auth.url, clientId="by-hand", callbackPort=port, scopes=["mcp", "extra"]
    )
    registered = len(http_auth.provider.clients)
    browser = Browser()

    assert login_server(settings(), "guarded", tmp_path, browser) == 0

    query = parse_qs(urlsplit(browser.visits[0]).query)
    assert query["client_id"] == ["by-hand"] and query["redirect_uri"] == [redirect]
    assert query["scope"] == ["mcp extra"]
    assert len(http_auth.provider.clients) == registered  # not registered again
    assert "client" not in json.loads(kept_file(http_auth.url).read_text())


def test_a_refused_login_fails_in_one_line_and_keeps_nothing(
    http_auth: AuthServer, tmp_path, capsys: pytest.CaptureFixture[str]
):
    port = free_port()
    http_auth.provider.clients["refused"] = OAuthClientInformationFull(
        client_id="refused",
        redirect_uris=[f"http://127.0.0.1:{port}/callback"],  # type: ignore[list-item]
        scope="mcp",
        token_endpoint_auth_method="none",
    )
    http_auth.provider.refused_client = "refused"
    write_profile("http", http_auth.url, clientId="refused", callbackPort=port)

    assert login_server(settings(), "guarded", tmp_path, Browser()) == 1

    err = capsys.readouterr().err.splitlines()[-1]
    assert err == (
        "caretz: cannot log in to MCP server 'guarded': "
        "the authorization server refused: access_denied"
    )
    assert not kept_file(http_auth.url).exists()


def test_the_loopback_answers_only_the_request_with_the_state_it_waits_for():
    async def scenario() -> None:
        loopback = await Loopback.open()
        loopback.expect("https://as.example/authorize?state=right&client_id=c")
        base = loopback.redirect_uri
        async with httpx.AsyncClient(timeout=BOUND_S) as browser:
            stray = await browser.get(f"{base}?code=stolen&state=wrong")
            other = await browser.get(base.replace("/callback", "/favicon.ico"))
            assert stray.status_code == other.status_code == 400
            good = await browser.get(f"{base}?code=abc&state=right&iss=https://as.example")
            again = await browser.get(f"{base}?code=def&state=right")
        assert good.status_code == 200 and again.status_code == 400
        answer = await loopback.answer()
        assert (answer.code, answer.iss) == ("abc", "https://as.example")
        await loopback.close()

        refused = await Loopback.open()
        refused.expect("https://as.example/authorize?state=s")
        async with httpx.AsyncClient(timeout=BOUND_S) as browser:
            await browser.get(f"{refused.redirect_uri}?error=access_denied&state=s")
        with pytest.raises(LoginRefused, match="refused: access_denied"):
            await refused.answer()
        await refused.close()

    asyncio.run(scenario())


def test_an_entrys_oauth_key_is_checked_expanded_and_its_secret_never_shown(tmp_path):
    from caretz.config.mcp_servers import project_servers
    from caretz.config.show import show_settings
    from caretz.config_base import ConfigError
    from caretz.mcp_client.approvals import entry_data
    from caretz.mcp_client.config import McpServerEntry
    from caretz.mcp_client.plan import Configured, spec_for

    with pytest.raises(ValueError, match="oauth belong to an HTTP server"):
        McpServerEntry.model_validate({"command": "srv", "oauth": {"scopes": ["a"]}})
    with pytest.raises(ValueError, match="a clientSecret belongs to a clientId"):
        McpServerEntry.model_validate({"url": "https://x.example", "oauth": {"clientSecret": "s"}})
    with pytest.raises(ValueError, match="callbackPort"):
        McpServerEntry.model_validate({"url": "https://x.example", "oauth": {"callbackPort": 0}})
    plain = {"type": "http", "url": "https://x.example/mcp"}
    # An entry without oauth is approved as it was before the key existed.
    assert entry_data(McpServerEntry.model_validate(plain)) == {
        "type": "http", "command": None, "args": [], "env": {}, "url": plain["url"],
        "headers": {}, "startupTimeout": None,
    }  # fmt: skip
    oauth = {
        "clientId": "${ID}",
        "clientSecret": "${SECRET}",
        "scopes": ["read"],
        "callbackPort": 9,
    }
    entry = McpServerEntry.model_validate({**plain, "oauth": oauth})
    spec = spec_for(Configured("web", entry, "profiles.json"), {"ID": "cid", "SECRET": "s3"}, "/")
    assert (spec.oauth.client_id, spec.oauth.client_secret) == ("cid", "s3")
    assert (spec.oauth.scopes, spec.oauth.callback_port) == (("read",), 9)

    # .mcp.json is shared with other tools: their keys under oauth are left alone.
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"web": {**plain, "oauth": {"clientId": "c", "theirs": 1}}}})
    )
    [server] = project_servers(tmp_path)
    assert server.entry.oauth is not None and server.entry.oauth.client_id == "c"
    # profiles.json is strict, and `caretz config show` says a secret is set, never what it is.
    config = Path(os.environ["CARETZ_CONFIG"])
    config.write_text(
        json.dumps(
            {"profiles": {"general": {"mcpServers": {"web": {**plain, "oauth": {"theirs": 1}}}}}}
        )
    )
    with pytest.raises(ConfigError, match="theirs"):
        settings()
    secret = {"clientId": "c", "clientSecret": "hunter2-secret"}
    config.write_text(
        json.dumps({"profiles": {"general": {"mcpServers": {"web": {**plain, "oauth": secret}}}}})
    )
    shown = show_settings(settings(), {})
    assert shown["mcpServers"]["web"]["oauth"]["clientSecret"] == "set"
    assert "hunter2-secret" not in json.dumps(shown)


def test_slash_mcp_login_logs_in_and_the_servers_tool_joins_the_conversation(
    http_auth: AuthServer, caretz: Caretz, server: ModelServer, tmp_path: Path, terminal
):
    write_profile("http", http_auth.url)
    browser = tmp_path / "browser"
    browser.write_text(BROWSER.format(python=sys.executable))
    browser.chmod(0o700)
    server.add(calls(("mcp__guarded__whoami", {})), text("Signed in now."))
    term = terminal(env={"BROWSER": str(browser)})

    term.expect("needs a login: run /mcp login guarded; going on without it")
    term.type("/mcp login guarded")
    term.expect("guarded: logged in and started, 1 tool")
    term.type("am I signed in?")
    term.expect("Signed in now.")
    term.ctrl_d()

    [result] = [
        b for b in server.requests[-1].messages[-1]["content"] if b["type"] == "tool_result"
    ]
    assert "you are signed in" in json.dumps(result["content"])
    assert kept_file(http_auth.url).exists()
