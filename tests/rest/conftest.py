"""HTTP+JSON end to end: a served A2AApp, spoken to with plain requests on real sockets."""

from __future__ import annotations

import logging

import pytest


@pytest.fixture(autouse=True)
def _quiet_werkzeug() -> None:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
