"""One GET to an address already checked: the connection goes to that address, the
request names the host (Host header, TLS SNI and certificate check), and the body is read
within a byte cap and a deadline.

A fresh client per request: a pooled TLS connection to one address must never carry a
request for another host. No proxy, no .netrc (`trust_env=False`): the address that was
checked is the one connected to, and nothing of the user's is sent along.
"""

from __future__ import annotations

import functools
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx

from caretz import __version__
from caretz.web.address import Address
from caretz.web.model import FetchCancelled, FetchRefused, FetchTimeout, FetchUnreachable

ACCEPT = "text/html, text/markdown;q=0.95, text/*;q=0.9, application/json;q=0.8, */*;q=0.1"
CONNECT_TIMEOUT_S = 10.0
# Builds the client for one request (tests hand in one over a transport that records).
ClientFactory = Callable[[httpx.Timeout, "ssl.SSLContext | bool"], httpx.Client]


@dataclass(frozen=True)
class Body:
    data: bytes
    truncated: bool  # the response was longer than the cap; `data` is its start


def plain_client(timeout: httpx.Timeout, verify: ssl.SSLContext | bool) -> httpx.Client:
    return httpx.Client(timeout=timeout, verify=verify, trust_env=False, follow_redirects=False)


@contextmanager
def open_response(
    url: httpx.URL,
    address: Address,
    deadline: float,
    client_factory: ClientFactory = plain_client,
) -> Iterator[httpx.Response]:
    """The response to GET `url`, connected to `address`; its body not read yet."""
    remaining = _remaining(deadline)
    timeout = httpx.Timeout(remaining, connect=min(remaining, CONNECT_TIMEOUT_S))
    secure = url.scheme == "https"
    headers = {
        "Host": _host_header(url),
        "User-Agent": f"caretz/{__version__} (web_fetch)",
        "Accept": ACCEPT,
        "Accept-Encoding": "gzip, deflate",
    }
    extensions = {"sni_hostname": url.raw_host.decode("ascii")} if secure else {}
    target = url.copy_with(host=str(address), fragment=None)
    try:
        with client_factory(timeout, _tls_context() if secure else False) as client:
            request = client.build_request("GET", target, headers=headers, extensions=extensions)
            response = client.send(request, stream=True)
            try:
                yield response
            finally:
                response.close()
    except httpx.ConnectTimeout:
        raise FetchUnreachable(f"{url}: {address} did not accept a connection in time") from None
    except httpx.TimeoutException:
        raise FetchTimeout(f"{url} did not answer in time (webFetch.timeout)") from None
    except httpx.ConnectError as error:
        raise FetchUnreachable(f"{url} could not be reached: {_error_text(error)}") from None
    except (httpx.HTTPError, httpx.InvalidURL, ValueError) as error:
        # httpx reads a redirect's Location as it answers: one that is no URL (`http:foo`
        # from an https page, a bad port or host name) is the page's fault.
        raise FetchRefused(f"{url} could not be fetched: {_error_text(error)}") from None
    except ssl.SSLError as error:
        raise FetchRefused(f"{url}: TLS failed: {error.reason or error}") from None


def read_body(
    response: httpx.Response,
    url: httpx.URL,
    max_bytes: int,
    deadline: float,
    cancel: threading.Event,
) -> Body:
    """The decoded body, at most `max_bytes` of it: reading stops at the cap, so a huge or
    endless response (or a compressed bomb) costs no more than the cap. `cancel` and the
    deadline are checked as each piece arrives; a server that sends nothing meets the read
    timeout, which is what is left of the time limit."""
    decode = _decoder(response.headers.get("content-encoding", ""))
    data = bytearray()
    try:
        for raw in response.iter_raw():  # each piece as it arrives, not a fixed size
            if cancel.is_set():
                raise FetchCancelled("the fetch was interrupted")
            if time.monotonic() > deadline:
                raise FetchTimeout(f"{url} took longer than the time limit (webFetch.timeout)")
            data += decode(raw, max_bytes - len(data) + 1)
            if len(data) > max_bytes:
                return Body(bytes(data[:max_bytes]), True)
    except httpx.TimeoutException:
        raise FetchTimeout(f"{url} stopped sending (webFetch.timeout)") from None
    except httpx.HTTPError as error:
        raise FetchRefused(f"reading {url} failed: {_error_text(error)}") from None
    except zlib.error:
        raise FetchRefused(f"{url} sent a body its Content-Encoding cannot decode") from None
    return Body(bytes(data), False)


def _decoder(encoding: str) -> Callable[[bytes, int], bytes]:
    name = encoding.strip().lower()
    if name in ("", "identity"):
        return lambda raw, _limit: raw
    if name not in ("gzip", "x-gzip", "deflate"):
        raise FetchRefused(f"the response is encoded as {encoding!r}, which caretz does not read")
    # 47 = 32 + 15: a gzip or a zlib header, read from the data. A bounded output per call
    # is what keeps a small compressed chunk from growing past the cap in memory.
    inflater = zlib.decompressobj(47)
    return lambda raw, limit: inflater.decompress(raw, max(limit, 1))


def _remaining(deadline: float) -> float:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise FetchTimeout("the time limit ran out")
    return remaining


def _host_header(url: httpx.URL) -> str:
    host = url.raw_host.decode("ascii")
    host = f"[{host}]" if ":" in host else host
    default = {"http": 80, "https": 443}.get(url.scheme)
    return host if url.port in (None, default) else f"{host}:{url.port}"


def _error_text(error: Exception) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]


@functools.cache
def _tls_context() -> ssl.SSLContext:
    # Loading the CA bundle takes ~80 ms: once per process, and only for an https fetch.
    return httpx.create_ssl_context()
