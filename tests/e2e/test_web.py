"""web_fetch through the real CLI (`-p`), the loopback model server and a loopback web
server: Markdown back under an allow rule, the headless refusal saying how to allow it, a
denied domain, a redirect to a denied domain, and a loopback address no rule names."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import Caretz
from tests.modelserver import ModelServer, RecordedRequest, text, tool
from tests.web.conftest import DOCS_PAGE
from tests.web.server import Route, WebServer

ALLOW_LOOPBACK = "WebFetch(domain:127.0.0.1)"


@pytest.fixture
def web() -> Iterator[WebServer]:
    with WebServer() as server:
        server.routes["/docs/install.html"] = Route(DOCS_PAGE)
        yield server


def fetch_result(request: RecordedRequest) -> dict[str, Any]:
    [block] = [b for b in request.messages[-1]["content"] if b.get("type") == "tool_result"]
    content = block.get("content", "")
    text_of = content if isinstance(content, str) else "".join(b["text"] for b in content)
    return {"error": block.get("is_error", False), "text": text_of}


def fetch_once(caretz: Caretz, server: ModelServer, url: str, *flags: str):
    server.add(tool("web_fetch", url=url), text("Done."))
    run = caretz("-p", "read the install page", *flags)
    assert run.code == 0, run.stderr
    return run, fetch_result(server.requests[1])


def test_an_allow_rule_for_the_domain_gets_the_page_as_markdown(caretz, server, web):
    url = web.url("/docs/install.html")

    run, result = fetch_once(caretz, server, url, "--allowed-tools", ALLOW_LOOPBACK)

    assert not result["error"], result["text"]
    assert result["text"].startswith(f"{url} · HTTP 200 · text/html")
    assert "# Installing quillkit" in result["text"]
    assert "```console\n$ python3 -m venv .venv" in result["text"]
    assert "DOCS_OPTIONS" not in result["text"]
    assert web.paths() == ["/docs/install.html"]
    assert "web_fetch" in server.requests[0].tool_names


def test_headless_without_a_rule_refuses_and_says_how_to_allow_it(caretz, server, web):
    run, result = fetch_once(caretz, server, web.url("/docs/install.html"))

    assert result["error"]
    assert f'add {ALLOW_LOOPBACK} to "permissions.allow" in .caretz/settings.json' in result["text"]
    assert "nobody can approve in a headless run" in result["text"]
    hints = [line for line in run.stderr.splitlines() if "--allowed-tools" in line]
    assert hints == [
        f"denied for want of someone to ask: allow it for a run with --allowed-tools "
        f"'{ALLOW_LOOPBACK}', or for good under permissions.allow (profiles.json or "
        ".caretz/settings.json)"
    ]
    assert web.seen == []


def test_a_denied_domain_is_refused_even_beside_an_allow_rule(caretz, server, web):
    run, result = fetch_once(
        caretz,
        server,
        web.url("/docs/install.html"),
        "--allowed-tools",
        ALLOW_LOOPBACK,
        "--disallowed-tools",
        ALLOW_LOOPBACK,
    )

    assert result["error"]
    assert "is denied by the deny rule WebFetch(domain:127.0.0.1)" in result["text"]
    assert web.seen == []


def test_a_redirect_to_a_denied_domain_is_refused(caretz, server, web):
    web.routes["/moved"] = Route(status=302, headers={"Location": web.url("/secret", "localhost")})

    run, result = fetch_once(
        caretz,
        server,
        web.url("/moved"),
        "--allowed-tools",
        ALLOW_LOOPBACK,
        "--disallowed-tools",
        "WebFetch(domain:localhost)",
    )

    assert result["error"]
    assert result["text"] == (
        f"web_fetch did not fetch {web.url('/moved')}: {web.url('/moved')} redirects to "
        f"{web.url('/secret', 'localhost')}, and web_fetch is denied by the deny rule "
        "WebFetch(domain:localhost) (--disallowed-tools)"
    )
    assert web.paths() == ["/moved"]


def test_a_loopback_address_no_rule_names_is_refused_before_any_request(caretz, server, web):
    # A bare WebFetch rule allows every domain, but names no host on the user's machine.
    run, result = fetch_once(
        caretz, server, web.url("/docs/install.html", "localhost"), "--allowed-tools", "WebFetch"
    )

    assert result["error"]
    assert "localhost (127.0.0.1) is a loopback address" in result["text"]
    assert "unless an allow rule names it: WebFetch(domain:localhost)" in result["text"]
    assert web.seen == []


def test_read_only_mode_offers_web_fetch_and_obeys_its_rules(caretz, server, web):
    url = web.url("/docs/install.html")

    run, result = fetch_once(
        caretz, server, url, "--permission-mode", "read-only", "--allowed-tools", ALLOW_LOOPBACK
    )

    assert "web_fetch" in server.requests[0].tool_names
    assert "edit" not in server.requests[0].tool_names
    assert not result["error"] and "# Installing quillkit" in result["text"]


def test_the_repl_asks_about_a_new_domain_and_always_saves_it(
    terminal, caretz, server, web, workspace
):
    web.routes["/docs/config.html"] = Route(b"<main><h1>Configuring</h1></main>")
    server.add(
        tool("web_fetch", url=web.url("/docs/install.html")),
        tool("web_fetch", url=web.url("/docs/config.html")),  # the same domain: unasked
        text("Read both pages."),
    )
    term = terminal()

    term.type("read the docs")
    term.expect("caretz asks before it runs (?:\x1b\\[[0-9;]*m)*web_fetch")
    term.expect("why: (?:\x1b\\[[0-9;]*m)*web_fetch reaches the network outside the sandbox")
    term.expect(r"yes, always: saves WebFetch\(domain:127\.0\.0\.1\) to \.caretz/settings\.json")
    term.expect("allow\\? ")
    term.child.send("a\r")
    term.expect("Read both pages.")
    term.ctrl_d()

    assert web.paths() == ["/docs/install.html", "/docs/config.html"]
    saved = (workspace / ".caretz" / "settings.json").read_text()
    assert ALLOW_LOOPBACK in saved
    last = fetch_result(server.requests[2])
    assert not last["error"] and "# Configuring" in last["text"]
    screen = "".join(term.transcript)
    assert screen.count("caretz asks before it runs") == 1


def test_a_run_that_fetches_no_page_never_imports_the_html_converter(caretz, server, web):
    from tests.importtime import modules_imported_by_a_run

    def heavy(modules: set[str]) -> set[str]:
        return {name for name in modules if name.split(".")[0] in ("bs4", "markdownify")}

    server.add(text("hi"))
    without = modules_imported_by_a_run(caretz.workspace, caretz.environment())
    server.add(tool("web_fetch", url=web.url("/docs/install.html")), text("Done."))
    fetching = modules_imported_by_a_run(
        caretz.workspace, caretz.environment(), "--allowed-tools", ALLOW_LOOPBACK
    )

    assert heavy(without) == set()
    assert {"bs4", "markdownify"} <= heavy(fetching)
