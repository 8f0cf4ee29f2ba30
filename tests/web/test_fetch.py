"""web_fetch's fetching, against a real loopback web server: Markdown out, the addresses
checked before any connection, the checked address connected to, redirects put to the
rules again, and the limits on type, size and time."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from caretz.web.model import (
    Elsewhere,
    FetchCancelled,
    FetchLimits,
    FetchRefused,
    FetchTimeout,
    Page,
)
from tests.web.conftest import DOCS_PAGE, Names, NoConnection, fetcher, never_cancelled, rules
from tests.web.server import Route, Seen, WebServer


def fetch(fetching, url: str, tmp_path: Path) -> Page | Elsewhere:
    return fetching.fetch(url, tmp_path, never_cancelled())


def test_a_page_comes_back_as_markdown_without_what_only_a_browser_needs(web, tmp_path):
    web.routes["/docs/install.html"] = Route(DOCS_PAGE)
    allowed = rules(tmp_path, allow=("WebFetch(domain:127.0.0.1)",))

    page = fetch(fetcher(allowed), web.url("/docs/install.html"), tmp_path)

    assert isinstance(page, Page)
    assert page.title == "Installing quillkit — quillkit 2.4 documentation"
    assert page.content_type == "text/html" and page.status == 200
    text = page.text
    assert text.startswith("# Installing quillkit\n")
    assert "## With pip" in text and "¶" not in text
    assert (
        '```console\n$ python3 -m venv .venv\n$ .venv/bin/pip install "quillkit[yaml]>=2.4"' in text
    )
    assert "```python\nimport quillkit" in text
    assert "| `yaml` | YAML front matter | 140 KB |" in text
    # Relative links and images point at absolute URLs; same-page links are plain text.
    assert f"[changelog]({web.url('/changelog.html#v2-4')})" in text
    assert f"({web.url('/_images/layers.png')})" in text
    assert "as the next section shows" in text
    # Scripts, styles, navigation, forms, the footer and data: images are gone.
    for gone in ("DOCS_OPTIONS", "font-family", "Toggle dark mode", "Search the docs",
                 "Introduction", "©", "data:image", "addCopyButton", "javascript:"):  # fmt: skip
        assert gone not in text, gone


def test_the_connection_goes_to_the_checked_address_under_the_host_s_name(web, tmp_path):
    # "docs.test" exists only in the test's resolver: the request can arrive only if the
    # fetch connected to the address it checked, naming the host in the request.
    web.routes["/page.txt"] = Route(b"plain words", content_type="text/plain")
    names = Names({"docs.test": ["127.0.0.1"]})
    allowed = rules(tmp_path, allow=("WebFetch(domain:docs.test)",))

    page = fetch(fetcher(allowed, names), web.url("/page.txt", "docs.test"), tmp_path)

    assert isinstance(page, Page) and page.text == "plain words"
    assert web.seen == [Seen("/page.txt", f"docs.test:{web.port}")]
    assert names.lookups == ["docs.test"]  # resolved once: nothing to rebind between
    assert page.exempted == ("docs.test",)


@pytest.mark.parametrize(
    ("answers", "why"),
    [
        (["10.1.2.3"], "a private address"),
        (["192.168.0.7"], "a private address"),
        (["169.254.169.254"], "a link-local address"),
        (["::ffff:10.0.0.1"], "a private address"),
        (["127.0.0.2"], "a loopback address"),
        (["93.184.216.34", "10.0.0.9"], "a private address"),  # one private answer is enough
    ],
)
def test_a_host_on_a_private_address_is_refused_before_any_connection(tmp_path, answers, why):
    names = Names({"intranet.test": answers})
    no_connection = NoConnection()
    # A rule for the whole tool, and one for a parent domain, do not name the host.
    allowed = rules(tmp_path, allow=("WebFetch", "WebFetch(domain:test)"))

    with pytest.raises(FetchRefused) as refused:
        fetch(
            fetcher(allowed, names, client_factory=no_connection), "http://intranet.test/", tmp_path
        )

    assert why in str(refused.value)
    assert "WebFetch(domain:intranet.test)" in str(refused.value)
    assert no_connection.made == 0


def test_an_address_written_in_the_url_is_checked_too(tmp_path):
    no_connection = NoConnection()
    allowed = rules(tmp_path, allow=("WebFetch",))
    for url, why in [
        ("http://10.0.0.1:8080/", "10.0.0.1 is a private address"),
        ("http://[::1]/", "::1 is a loopback address"),
        ("http://[::ffff:127.0.0.1]/", "is a loopback address"),
        ("http://0.0.0.0/", "an unspecified address"),
    ]:
        with pytest.raises(FetchRefused, match=why):
            fetch(fetcher(allowed, client_factory=no_connection), url, tmp_path)
    assert no_connection.made == 0


def test_a_rule_naming_the_address_lets_a_host_on_it_through(web, tmp_path):
    web.routes["/"] = Route(b"{}", content_type="application/json")
    names = Names({"dev.test": ["127.0.0.1"]})
    allowed = rules(tmp_path, allow=("WebFetch(domain:127.0.0.1)",))

    page = fetch(fetcher(allowed, names), web.url("/", "dev.test"), tmp_path)

    assert isinstance(page, Page) and page.text == "{}"


def test_a_redirect_on_the_same_host_is_followed(web, tmp_path):
    web.routes["/old"] = Route(status=301, headers={"Location": "/new"})
    web.routes["/new"] = Route(b"moved here", content_type="text/plain")
    allowed = rules(tmp_path, allow=("WebFetch(domain:127.0.0.1)",))

    page = fetch(fetcher(allowed), web.url("/old"), tmp_path)

    assert isinstance(page, Page) and page.text == "moved here"
    assert page.url == web.url("/new") and page.redirects == (web.url("/old"),)


def test_a_redirect_to_a_denied_host_is_refused_and_not_requested(web, tmp_path):
    web.routes["/away"] = Route(status=302, headers={"Location": web.url("/page", "localhost")})
    checked = rules(
        tmp_path, allow=("WebFetch(domain:127.0.0.1)",), deny=("WebFetch(domain:localhost)",)
    )

    with pytest.raises(FetchRefused) as refused:
        fetch(fetcher(checked), web.url("/away"), tmp_path)

    assert f"redirects to {web.url('/page', 'localhost')}" in str(refused.value)
    assert "denied by the deny rule WebFetch(domain:localhost)" in str(refused.value)
    assert web.paths() == ["/away"]


def test_a_redirect_to_a_host_no_rule_covers_is_handed_back_not_followed(web, tmp_path):
    web.routes["/away"] = Route(status=307, headers={"Location": web.url("/page", "localhost")})
    allowed = rules(tmp_path, allow=("WebFetch(domain:127.0.0.1)",))

    outcome = fetch(fetcher(allowed), web.url("/away"), tmp_path)

    assert outcome == Elsewhere(web.url("/away"), web.url("/page", "localhost"), 307)
    assert web.paths() == ["/away"]


def test_a_redirect_to_an_allowed_host_follows_and_checks_its_address(web, tmp_path):
    web.routes["/away"] = Route(status=302, headers={"Location": web.url("/page", "localhost")})
    web.routes["/page"] = Route(b"arrived", content_type="text/plain")
    names = Names({"localhost": ["127.0.0.1"], "public.test": ["93.184.216.34"]})
    allowed = rules(tmp_path, allow=("WebFetch(domain:127.0.0.1)", "WebFetch(domain:localhost)"))

    page = fetch(fetcher(allowed, names), web.url("/away"), tmp_path)

    assert isinstance(page, Page) and page.text == "arrived"
    assert web.seen == [
        Seen("/away", f"127.0.0.1:{web.port}"),
        Seen("/page", f"localhost:{web.port}"),
    ]

    # Allowed by a domain rule, but on a private address no rule names: refused.
    web.routes["/to-private"] = Route(status=302, headers={"Location": "http://intranet.test/"})
    names.table["intranet.test"] = ["10.9.9.9"]
    widened = rules(tmp_path, allow=("WebFetch(domain:127.0.0.1)", "WebFetch(domain:test)"))
    with pytest.raises(FetchRefused, match="intranet.test \\(10.9.9.9\\) is a private address"):
        fetch(fetcher(widened, names), web.url("/to-private"), tmp_path)


def test_redirects_stop_at_the_limit(web, tmp_path):
    web.routes["/loop"] = Route(status=302, headers={"Location": "/loop"})
    allowed = rules(tmp_path, allow=("WebFetch(domain:127.0.0.1)",))

    with pytest.raises(FetchRefused, match="redirects more than 3 times"):
        fetch(fetcher(allowed, limits=FetchLimits(max_redirects=3)), web.url("/loop"), tmp_path)

    assert web.paths() == ["/loop"] * 4


def test_a_body_that_is_not_text_is_refused(web, tmp_path):
    web.routes["/logo.png"] = Route(b"\x89PNG" + b"\0" * 100, content_type="image/png")
    web.routes["/blob"] = Route(b"\0\1\2", content_type=None)
    allowed = rules(tmp_path, allow=("WebFetch(domain:127.0.0.1)",))

    with pytest.raises(FetchRefused, match="is of type image/png; web_fetch reads only HTML"):
        fetch(fetcher(allowed), web.url("/logo.png"), tmp_path)
    with pytest.raises(FetchRefused, match="is of no stated type"):
        fetch(fetcher(allowed), web.url("/blob"), tmp_path)


def test_reading_stops_at_the_size_cap_even_for_a_compressed_bomb(web, tmp_path):
    web.routes["/big.txt"] = Route(b"x" * 300_000, content_type="text/plain")
    bomb = gzip.compress(b"a" * 50_000_000)  # 50 MB of text in ~50 KB
    web.routes["/bomb.txt"] = Route(
        bomb, content_type="text/plain", headers={"Content-Encoding": "gzip"}
    )
    allowed = rules(tmp_path, allow=("WebFetch(domain:127.0.0.1)",))
    capped = fetcher(allowed, limits=FetchLimits(max_bytes=100_000))

    big = fetch(capped, web.url("/big.txt"), tmp_path)
    bombed = fetch(capped, web.url("/bomb.txt"), tmp_path)

    assert isinstance(big, Page) and big.truncated and big.size == 100_000
    assert isinstance(bombed, Page) and bombed.truncated and len(bombed.text) == 100_000
    assert set(bombed.text) == {"a"}


def test_a_server_that_stops_sending_meets_the_time_limit(web, tmp_path):
    # It never sends more until the test ends: only the limit can end the fetch.
    web.routes["/slow"] = Route(b"<p>first words" + b" " * 100, stall_after=20)
    allowed = rules(tmp_path, allow=("WebFetch(domain:127.0.0.1)",))

    with pytest.raises(FetchTimeout):
        fetch(fetcher(allowed, limits=FetchLimits(timeout_s=0.5)), web.url("/slow"), tmp_path)


def test_an_interrupted_fetch_stops_at_the_next_chunk(web, tmp_path):
    web.routes["/slow"] = Route(b"<p>first words" + b" " * 100, stall_after=20)
    allowed = rules(tmp_path, allow=("WebFetch(domain:127.0.0.1)",))
    cancel = never_cancelled()
    cancel.set()

    with pytest.raises(FetchCancelled):
        fetcher(allowed).fetch(web.url("/slow"), tmp_path, cancel)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("ftp://example.com/file", "is not an http:// or https:// URL"),
        ("https://user:secret@example.com/", "a user name or password"),
        ("example.com/page", "is not an http:// or https:// URL"),
    ],
)
def test_urls_it_does_not_fetch(tmp_path, url, problem):
    no_connection = NoConnection()
    with pytest.raises(FetchRefused, match=problem):
        fetch(fetcher(rules(tmp_path), client_factory=no_connection), url, tmp_path)


def test_a_charset_the_page_declares_is_used(web, tmp_path):
    web.routes["/latin1.txt"] = Route(
        "café crème".encode("latin-1"), content_type="text/plain; charset=ISO-8859-1"
    )
    allowed = rules(tmp_path, allow=("WebFetch(domain:127.0.0.1)",))

    page = fetch(fetcher(allowed), web.url("/latin1.txt"), tmp_path)

    assert isinstance(page, Page) and page.text == "café crème"


def test_https_names_the_host_in_sni_and_checks_its_certificate(tmp_path, tls_pair):
    """Connected to the checked address, the TLS handshake still names the host and the
    certificate is checked against that name: one for another name fails."""
    import ssl

    import httpx

    certificate, key = tls_pair
    trusted = ssl.create_default_context(cafile=str(certificate))

    def trusting(timeout: httpx.Timeout, verify: object) -> httpx.Client:
        assert isinstance(verify, ssl.SSLContext)  # https asks for a verifying context
        return httpx.Client(timeout=timeout, verify=trusted, trust_env=False)

    names = Names({"docs.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})
    allowed = rules(tmp_path, allow=("WebFetch(domain:docs.test)", "WebFetch(domain:other.test)"))
    with WebServer(tls=tls_pair) as secure:
        secure.routes["/"] = Route(b"secret-free words", content_type="text/plain")
        page = fetch(
            fetcher(allowed, names, client_factory=trusting), secure.url("/", "docs.test"), tmp_path
        )
        with pytest.raises(FetchRefused, match="could not be reached: .*CERTIFICATE_VERIFY_FAILED"):
            fetch(
                fetcher(allowed, names, client_factory=trusting),
                secure.url("/", "other.test"),
                tmp_path,
            )

    assert isinstance(page, Page) and page.text == "secret-free words"
    assert secure.seen == [Seen("/", f"docs.test:{secure.port}")]


@pytest.fixture
def tls_pair(tmp_path) -> tuple[Path, Path]:
    """A self-signed certificate for docs.test (the real openssl)."""
    import subprocess

    certificate, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-subj", "/CN=docs.test", "-addext", "subjectAltName=DNS:docs.test",
         "-keyout", str(key), "-out", str(certificate)],
        check=True, capture_output=True,
    )  # fmt: skip
    return certificate, key


def test_an_address_that_cannot_be_reached_gives_way_to_the_host_s_next_one(web, tmp_path):
    # Nothing listens on 127.0.0.2 (the server is bound to 127.0.0.1): as an IPv6 address
    # is on a machine without an IPv6 route.
    web.routes["/"] = Route(b"second address", content_type="text/plain")
    names = Names({"two.test": ["127.0.0.2", "127.0.0.1"]})
    allowed = rules(tmp_path, allow=("WebFetch(domain:two.test)",))

    page = fetch(fetcher(allowed, names), web.url("/", "two.test"), tmp_path)

    assert isinstance(page, Page) and page.text == "second address"
    unreachable = Names({"none.test": ["127.0.0.2"]})
    with pytest.raises(FetchRefused, match="could not be reached"):
        fetch(fetcher(rules(tmp_path, allow=("WebFetch(domain:none.test)",)), unreachable),
              web.url("/", "none.test"), tmp_path)  # fmt: skip
