"""Slow consumers: a subscriber that stops reading is cut with a resumable position, and
hundreds of them cost bounded memory, given back once they leave."""

from __future__ import annotations

import re
import socket
import time
from pathlib import Path

import pytest
from soak_support import (
    a2a_serve,
    blocking_send,
    clients_reading_nothing,
    measure,
    subscribe_request,
    wait_until,
    workers_of,
)

pytestmark = pytest.mark.slow


def read_all(sock: socket.socket, timeout: float) -> tuple[bytes, bool]:
    """Everything the server sends until it closes (True) or ``timeout`` passes (False)."""
    sock.settimeout(timeout)
    data = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            chunk = sock.recv(1 << 20)
            if not chunk:
                return data, True
            data += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return data, False


def complete_ids(data: bytes) -> list[int]:
    """The SSE ids of events received in full (an ``id:`` line followed by a whole ``data:``
    line and the blank line that ends the event)."""
    event = rb"id: (\d+)\r?\ndata: [^\r\n]*\r?\n\r?\n"
    return [int(m.group(1)) for m in re.finditer(event, data)]


@pytest.mark.parametrize("worker_class", ["gevent", "gthread"])
def test_a_subscriber_that_stops_reading_is_cut_and_resumes(tmp_path: Path,
                                                            worker_class: str) -> None:
    with a2a_serve(tmp_path, "--worker-class", worker_class,
                   target="soak_app:cut_app") as server:
        server.wait_ready()
        task = blocking_send(server.url, "hold 50000", blocking=False)  # 500 KB/s of events
        with clients_reading_nothing(server.port, subscribe_request(task["id"]), 1) as socks:
            time.sleep(4)  # buffers fill in well under a second; the cut comes 1 s later
            data, closed = read_all(socks[0], timeout=10)
        assert closed, "the server kept a stream whose client read nothing"
        ids = complete_ids(data)
        assert ids, data[:300]
        # resuming from the last event read in full gives the next one, none skipped
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as again:
            again.sendall(subscribe_request(task["id"], str(ids[-1])))
            resumed = b""
            while not complete_ids(resumed):
                chunk = again.recv(1 << 16)
                assert chunk, resumed[:300]
                resumed += chunk
        assert complete_ids(resumed)[0] == ids[-1] + 1
        assert "Traceback" not in server.log(), server.log()


def _rss_mb(pids: list[int]) -> list[float]:
    return [measure(pid)[1] / 1024 for pid in pids]


def test_three_hundred_subscribers_that_never_read(tmp_path: Path) -> None:
    """300 subscribers that never read: each worker's RSS stays within +100 MB while they
    are connected and is back within 20 MB of its start once they have left."""
    with a2a_serve(tmp_path, "--workers", "2", target="soak_app:cut_app") as server:
        server.wait_ready()
        assert wait_until(lambda: len(workers_of(server.proc.pid)) == 2, timeout=20)
        pids = workers_of(server.proc.pid)
        blocking_send(server.url)  # both workers warm: first request served, store open
        task = blocking_send(server.url, "hold 2000", blocking=False)
        time.sleep(1)
        start = _rss_mb(pids)
        peak = list(start)
        with clients_reading_nothing(server.port, subscribe_request(task["id"]), 300):
            for _ in range(16):
                time.sleep(0.5)
                peak = [max(p, now) for p, now in zip(peak, _rss_mb(pids), strict=True)]
        assert all(p - s <= 100 for p, s in zip(peak, start, strict=True)), (start, peak)
        def back() -> bool:
            return all(now - s <= 20 for now, s in zip(_rss_mb(pids), start, strict=True))

        assert wait_until(back, timeout=15), (start, peak, _rss_mb(pids))
