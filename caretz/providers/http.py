"""httpx, imported one way for every provider: without its command-line client.

`import httpx` also imports httpx's own command-line client whenever click and Rich are
installed, as they are beside Typer: click, Rich's progress bars and pygments' lexers,
about a third of httpx's import, which caretz never runs. A None entry in `sys.modules`
makes that one import fail, and httpx puts a stub in its place (its `main` then says the
client is not installed). Import httpx from here, never directly.
"""

from __future__ import annotations

import functools
import ssl
import sys

sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

import httpx  # noqa: E402

__all__ = ["httpx", "plain_client"]


def plain_client(url: str, **options: object) -> httpx.Client:
    """A client for `url`: one for plain HTTP (a local server) loads no CA bundle, since it
    never speaks TLS and redirects are not followed; one for HTTPS verifies as httpx does."""
    verify = tls_context() if url.startswith("https:") else False
    return httpx.Client(verify=verify, **options)  # type: ignore[arg-type]


@functools.cache
def tls_context() -> ssl.SSLContext:
    # Loading the CA bundle takes ~80 ms; the session's provider and the judge's share one.
    return httpx.create_ssl_context()
