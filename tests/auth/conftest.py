"""Real sockets on 127.0.0.1 for the auth tests; every server is stopped at teardown."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.wsgi_server import Served


@pytest.fixture(autouse=True)
def _quiet_werkzeug() -> None:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[..., Any]], Served]]:
    servers: list[Served] = []

    def start(app: Callable[..., Any]) -> Served:
        served = Served(app)
        servers.append(served)
        return served

    yield start
    for served in servers:
        served.stop()
