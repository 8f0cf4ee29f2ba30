from __future__ import annotations

import pytest

from tests.telemetry.collector import Collector, start_collector


@pytest.fixture
def collector() -> Collector:
    received, server = start_collector()
    yield received
    server.shutdown()
    server.server_close()
