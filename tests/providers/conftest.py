"""The providers' tests: `serve` starts a loopback server that speaks HTTP by hand."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.providers.raw_http import Handler, RawServer


@pytest.fixture
def serve() -> Iterator[Callable[[Handler], RawServer]]:
    started: list[RawServer] = []

    def start(handler: Handler) -> RawServer:
        started.append(RawServer(handler))
        return started[-1]

    yield start
    for server in started:
        server.close()
