"""Clients that subscribe and hang up, over and over, under ``a2a serve``'s gevent worker.

A held stream there parks (a2a_wsgi._parking): gunicorn's handler for its connection ends
and a file made from the socket keeps the descriptor open until the stream ends. So each
subscription that a client abandons must still end, and close its connection: after
hundreds of them the workers hold no more descriptors than before and their memory
stops growing.
"""

from __future__ import annotations

import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from soak_support import a2a_serve, blocking_send, measure, subscribe_request, workers_of

pytestmark = pytest.mark.slow

#: Subscriptions abandoned after the warm-up, and how many clients do it at once.
ROUNDS, CLIENTS = 600, 4


def _subscribe_and_hang_up(port: int, task_id: str) -> None:
    """Subscribe, read the snapshot and one update (the stream parked and was resumed
    between them), then close the connection without a word."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(subscribe_request(task_id))
        seen = b""
        while seen.count(b"\ndata:") < 2:
            chunk = sock.recv(65536)
            assert chunk, seen[-300:]
            seen += chunk
        assert seen.startswith(b"HTTP/1.1 200"), seen[:300]


def _abandon(port: int, task_id: str, count: int) -> None:
    with ThreadPoolExecutor(CLIENTS) as pool:  # (list(): a client's failure is raised here)
        list(pool.map(lambda _: _subscribe_and_hang_up(port, task_id), range(count)))


def test_abandoned_parked_streams_leave_no_descriptor_behind(tmp_path: Path) -> None:
    with a2a_serve(tmp_path, "--workers", "2", target="soak_app:app") as server:
        server.wait_ready()
        workers = workers_of(server.proc.pid)
        assert len(workers) == 2, workers
        task = blocking_send(server.url, "hold 10", blocking=False)
        _abandon(server.port, task["id"], 100)  # warm-up: each worker's threads and heap
        time.sleep(2)
        before = {pid: measure(pid) for pid in workers}
        _abandon(server.port, task["id"], ROUNDS)
        time.sleep(2)  # the last hang-ups reach their streams
        after = {pid: measure(pid) for pid in workers}
        log = server.log()
    for pid in workers:
        (fds_before, rss_before), (fds_after, rss_after) = before[pid], after[pid]
        assert fds_after <= fds_before + 5, (pid, before, after)
        assert rss_after <= rss_before * 1.25, (pid, before, after)
    assert "Traceback" not in log, log[-3000:]
