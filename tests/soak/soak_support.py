"""What the soak tests share: ``a2a serve`` as an operator runs it, and clients that misbehave."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests
from support.gunicorn import ROOT, ServerProcess, free_port

__all__ = ["SlowHeaderClients", "a2a_serve", "blocking_send", "get_task", "measure",
           "subscribe_request"]

HERE = Path(__file__).resolve().parent


def a2a_serve(tmp_path: Path, *options: str, target: str = "examples.echo:app") -> ServerProcess:
    """``a2a serve TARGET`` on a free port, its SQLite file (if any) in ``tmp_path``;
    ``soak_app:app`` (this folder's agent) is importable."""
    port = free_port()
    argv = [sys.executable, "-m", "a2a_wsgi._cli", "serve", target,
            "--bind", f"127.0.0.1:{port}", "--log-level", "warning", *options]
    path = os.pathsep.join([str(HERE), str(ROOT)])
    return ServerProcess(argv, port=port, log_path=tmp_path / "server.log",
                         env={"A2A_DB": str(tmp_path / "a2a-tasks.sqlite3"), "PYTHONPATH": path})


def _rpc(url: str, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = requests.post(url, json=body, timeout=timeout, headers={"A2A-Version": "1.0"})
    response.raise_for_status()
    payload: dict[str, Any] = response.json()
    assert "result" in payload, payload
    result: dict[str, Any] = payload["result"]
    return result


def blocking_send(url: str, text: str = "hello", timeout: float = 10, *,
                  blocking: bool = True) -> dict[str, Any]:
    """A SendMessage (blocking unless told); the task it answered."""
    message = {"messageId": f"soak-{uuid.uuid4().hex}", "role": "ROLE_USER",
               "parts": [{"text": text}]}
    result = _rpc(url, "SendMessage", {"message": message,
                                       "configuration": {"returnImmediately": not blocking}},
                  timeout)
    task: dict[str, Any] = result["task"]
    return task


def get_task(url: str, task_id: str, timeout: float) -> dict[str, Any]:
    """GetTask from a fresh client (a new connection)."""
    return _rpc(url, "GetTask", {"id": task_id}, timeout)


def subscribe_request(task_id: str, last_event_id: str | None = None) -> bytes:
    """A raw JSON-RPC SubscribeToTask request (resuming after ``last_event_id`` if given)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask",
                       "params": {"id": task_id}}).encode()
    resume = f"Last-Event-ID: {last_event_id}\r\n" if last_event_id else ""
    return (f"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"A2A-Version: 1.0\r\n{resume}Content-Length: {len(body)}\r\n\r\n").encode() + body


def measure(pid: int) -> tuple[int, int]:
    """(open descriptors, RSS in KiB) of a process."""
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return fds, int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def workers_of(pid: int) -> list[int]:
    """The children of ``pid`` (gunicorn's workers)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return sorted(found)


class SlowHeaderClients:
    """``count`` connections that each send a request line, then one header line every
    ``every`` seconds, and never finish the request (a slowloris)."""

    def __init__(self, port: int, count: int, every: float = 2.0) -> None:
        self.port, self.count, self.every = port, count, every
        self.sockets: list[socket.socket] = []
        self.dropped = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._drip, daemon=True)

    def __enter__(self) -> SlowHeaderClients:
        for _ in range(self.count):
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            sock.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            self.sockets.append(sock)
        self._thread.start()
        return self

    def _drip(self) -> None:
        n = 0
        while not self._stop.wait(self.every):
            n += 1
            for sock in list(self.sockets):
                try:
                    sock.sendall(f"X-Slow-{n}: {n}\r\n".encode())
                except OSError:
                    self.sockets.remove(sock)
                    self.dropped += 1

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        for sock in self.sockets:
            sock.close()


@contextmanager
def clients_reading_nothing(port: int, body: bytes,
                            count: int) -> Iterator[Sequence[socket.socket]]:
    """``count`` connections that send ``body`` (a whole HTTP request) and never read."""
    socks = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before the handshake
            sock.settimeout(5)
            sock.connect(("127.0.0.1", port))
            sock.sendall(body)
            socks.append(sock)
        yield socks
    finally:
        for sock in socks:
            sock.close()


def wait_until(predicate: Any, timeout: float, step: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())
