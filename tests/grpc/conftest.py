"""gRPC tests: real grpcio servers on 127.0.0.1 in front of real A2AApps (the grpc extra)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from grpc_support import Both, grpc_app, served_both


@pytest.fixture(autouse=True)
def _quiet_werkzeug() -> None:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)


@pytest.fixture(scope="module")
def both() -> Iterator[Both]:
    """One app per module, served over HTTP and gRPC (push and the extended card declared)."""
    with served_both(grpc_app()) as served:
        yield served
