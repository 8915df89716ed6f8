"""Hundreds of open streams on one ``a2a serve`` worker: short calls still answer, and a
client that goes away frees everything of its stream within 2 s (no descriptor kept)."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from multiprocess_support import APP_PATH, MultiprocessAgent, fresh_peer
from support.gunicorn import ROOT, ServerProcess, free_port

from a2a_wsgi import A2AApp
from a2a_wsgi.settings import StreamSettings

app = A2AApp(MultiprocessAgent(), streams=StreamSettings(heartbeat_interval=1.0))

pytestmark = pytest.mark.slow


def _serve(tmp_path: Path, *extra: str) -> ServerProcess:
    port = free_port()
    a2a = Path(sys.executable).parent / "a2a"  # the venv's own command, not PATH's
    argv = [str(a2a), "serve", "test_many_streams:app", "--bind", f"127.0.0.1:{port}",
            "--graceful-timeout", "1", *extra]
    path = os.pathsep.join(str(p) for p in [*APP_PATH, ROOT])
    return ServerProcess(argv, port=port, log_path=tmp_path / "serve.log",
                         env={"PYTHONPATH": path})


def _workers(master: int) -> list[int]:
    """The pids whose parent is ``master`` (gunicorn's workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == master:
                found.append(int(entry.name))
    return found


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _open_stream(port: int, task_id: str) -> socket.socket:
    """A SubscribeToTask stream on a raw socket, read up to its first event."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask",
                       "params": {"id": task_id}}).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"A2A-Version: 1.0\r\nContent-Length: " + str(len(body)).encode() +
                 b"\r\n\r\n" + body)
    seen = b""
    while b"\ndata:" not in seen:
        chunk = sock.recv(65536)
        assert chunk, seen
        seen += chunk
    assert seen.startswith(b"HTTP/1.1 200"), seen[:200]
    return sock


@pytest.fixture()
def hanging(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[ServerProcess, str,
                                                                                int]]:
    server = _serve(tmp_path, *request.param)
    with server:
        server.wait_ready()
        deadline = time.monotonic() + 10
        while not _workers(server.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        (worker,) = _workers(server.proc.pid)
        task = fresh_peer(server.url).send("hang", blocking=False)
        yield server, task["id"], worker
        fresh_peer(server.url).rpc("cancel", {"id": task["id"]})


def _settled_fds(pid: int, ceiling: int, within: float) -> tuple[int, float]:
    """Wait until the worker holds at most ``ceiling`` descriptors; (count, seconds taken)."""
    started = time.monotonic()
    while True:
        count = _fds(pid)
        took = time.monotonic() - started
        if count <= ceiling or took > within:
            return count, took
        time.sleep(0.05)


@pytest.mark.parametrize("hanging", [("--worker-class", "gevent")], indirect=True,
                         ids=["gevent"])
def test_four_hundred_streams_on_one_gevent_worker(hanging: Any) -> None:
    server, task_id, worker = hanging
    baseline = _fds(worker)
    streams: list[socket.socket] = []
    try:
        streams += [_open_stream(server.port, task_id) for _ in range(400)]
        # Every stream is really open on the worker (a few descriptors of the baseline may
        # have been a passing connection).
        assert _fds(worker) >= baseline + 390
        for _ in range(20):  # short calls are not queued behind the streams
            started = time.monotonic()
            assert "result" in fresh_peer(server.url).rpc("get", {"id": task_id})
            assert time.monotonic() - started < 1
    finally:
        for sock in streams:
            sock.close()
    count, took = _settled_fds(worker, baseline + 5, within=2.0)
    assert count <= baseline + 5, f"{count - baseline} descriptors still held after {took:.1f} s"


@pytest.mark.parametrize("hanging", [("--worker-class", "gthread", "--threads", "32")],
                         indirect=True, ids=["gthread"])
def test_hung_up_streams_free_their_threads_within_two_seconds_under_gthread(
        hanging: Any) -> None:
    server, task_id, worker = hanging
    baseline = _fds(worker)
    streams = [_open_stream(server.port, task_id) for _ in range(20)]  # 24 places of 32
    for sock in streams:
        sock.close()
    count, took = _settled_fds(worker, baseline + 2, within=2.0)
    assert count <= baseline + 2, f"{count - baseline} descriptors still held after {took:.1f} s"
    again = [_open_stream(server.port, task_id) for _ in range(20)]  # the places are back
    for sock in again:
        sock.close()


def _read_to_end(sock: socket.socket, within: float) -> bytes:
    sock.settimeout(within)
    seen = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return seen
            seen += chunk
    except OSError:
        return seen


@pytest.mark.parametrize("worker_class", ["gevent", "gthread"])
def test_sigterm_ends_open_streams_cleanly_under_a2a_serve(tmp_path: Path,
                                                         worker_class: str) -> None:
    """A graceful stop ends every stream with the end of its response (the client resumes
    with Last-Event-ID) and the worker exits cleanly, under both worker models."""
    server = _serve(tmp_path, "--worker-class", worker_class)
    with server:
        server.wait_ready()
        task = fresh_peer(server.url).send("hang", blocking=False)
        streams = [_open_stream(server.port, task["id"]) for _ in range(5)]
        signalled = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(timeout=15)
        took = time.monotonic() - signalled
        ends = [_read_to_end(sock, 5) for sock in streams]
        for sock in streams:
            sock.close()
        log = server.log()
    assert took < 5, f"exit took {took:.1f} s:\n{log[-2000:]}"
    assert "Exception in worker process" not in log and "BlockingSwitchOutError" not in log
    assert all(end.endswith(b"0\r\n\r\n") for end in ends), [end[-40:] for end in ends]
