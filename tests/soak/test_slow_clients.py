"""Slow clients cannot take the server: ``a2a serve`` as the plain install runs it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import requests
from soak_support import SlowHeaderClients, a2a_serve, blocking_send, get_task

pytestmark = pytest.mark.slow


def test_forty_slow_header_clients_do_not_delay_get_task(tmp_path: Path) -> None:
    """40 connections sending one header line every 2 s: GetTask from a fresh client is
    answered within 1 s throughout (README's install, default worker class, one worker)."""
    with a2a_serve(tmp_path) as server:
        server.wait_ready()
        task = blocking_send(server.url)
        with SlowHeaderClients(server.port, 40, every=2.0) as slow:
            latencies = []
            deadline = time.monotonic() + 12  # six header lines from each slow client
            while time.monotonic() < deadline:
                started = time.monotonic()
                try:
                    got = get_task(server.url, task["id"], timeout=1.0)
                except requests.Timeout:
                    pytest.fail(f"GetTask timed out after {len(latencies)} answers "
                                f"with {len(slow.sockets)} slow clients connected")
                latencies.append(time.monotonic() - started)
                assert got["id"] == task["id"]
                time.sleep(0.25)
            # the slow clients were still connected (and so still held their places)
            assert len(slow.sockets) == 40, slow.dropped
    assert len(latencies) >= 20
    assert max(latencies) < 1.0, latencies
