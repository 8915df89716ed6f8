"""What the fault tests share: their agent, the gunicorn app built from it, and helpers.

Imported both by pytest and by gunicorn workers (``fault_support:app`` is the
app when ``FAULT_STORE`` names a store). Nothing here fakes a library part:
faults are injected from outside (signals, sockets, locks, a TCP proxy).
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import requests
from support.gunicorn import ROOT, ServerProcess, free_port, gunicorn_argv

from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi.settings import RuntimeSettings, StreamSettings

__all__ = [
    "APP_PATH",
    "LEASE_SECONDS",
    "FaultAgent",
    "RerunFaultAgent",
    "TcpProxy",
    "build_app",
    "proxy_to",
    "reset_close",
    "rpc",
    "start_server",
    "thread_count_settles",
]

#: Short leases, so a stopped worker's task is recovered within seconds.
LEASE_SECONDS = 1.5
#: PYTHONPATH for gunicorn workers: this folder (the app) and tests/ (support).
APP_PATH = (ROOT / "tests" / "faults", ROOT / "tests")


class FaultAgent(Agent):
    """``hang`` runs until canceled; ``burst:N[:SIZE]`` emits N artifacts (SIZE bytes
    of padding each) as fast as it can; ``sleep:S`` replies after S seconds;
    anything else is echoed."""

    name = "Fault Test Agent"

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        kind, _, arg = (message.text or "").partition(":")
        if kind == "hang":
            deadline = time.monotonic() + 60
            while not context.is_cancelled() and time.monotonic() < deadline:
                time.sleep(0.02)
            return None
        if kind == "burst":
            count, _, size = arg.partition(":")
            pad = "x" * int(size or 0)
            for n in range(int(count)):
                context.emit_artifact(f"chunk {n} {pad}", artifact_id=f"burst-{n}")
            return reply("burst done")
        if kind == "sleep":
            time.sleep(float(arg))
            return reply("slept")
        return reply(message.text or "")


def build_app(store: Any, *, agent: Agent | None = None, **options: Any) -> A2AApp:
    """An app with fast heartbeats and short leases (a dropped stream is noticed quickly)."""
    options.setdefault("streams", StreamSettings(heartbeat_interval=0.2))
    options.setdefault("runtime", RuntimeSettings(lease_seconds=LEASE_SECONDS, poll_interval=0.05))
    return A2AApp(agent or FaultAgent(), base_url="http://127.0.0.1/", store=store, **options)


class RerunFaultAgent(FaultAgent):
    """The same agent, declared safe to run again after its server stopped."""

    rerun_on_worker_loss = True


def _served_agent() -> FaultAgent:
    return RerunFaultAgent() if os.environ.get("FAULT_RERUN") else FaultAgent()


app = (build_app(os.environ["FAULT_STORE"], agent=_served_agent())
       if os.environ.get("FAULT_STORE") else None)


def start_server(store: str, log_path: Any, *, workers: int = 1, threads: int = 16,
                 graceful_timeout: float = 1, worker_class: str = "gthread",
                 rerun: bool = False) -> ServerProcess:
    """gunicorn serving :data:`app` on ``store`` (``rerun``: with :class:`RerunFaultAgent`);
    not yet ready."""
    port = free_port()
    argv = gunicorn_argv("fault_support:app", port=port, workers=workers, threads=threads,
                         graceful_timeout=graceful_timeout, worker_class=worker_class)
    path = os.pathsep.join(str(p) for p in (*APP_PATH, ROOT))
    return ServerProcess(argv, port=port, log_path=log_path,
                         env={"FAULT_STORE": store, "PYTHONPATH": path,
                              **({"FAULT_RERUN": "1"} if rerun else {})})


def rpc(url: str, method: str, params: Any, *, timeout: float = 10) -> tuple[dict[str, Any], float]:
    """One 1.0 JSON-RPC call on a fresh connection; the response and its duration."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    started = time.monotonic()
    response = requests.post(url, json=body, timeout=timeout,
                             headers={"A2A-Version": "1.0", "Connection": "close"})
    elapsed = time.monotonic() - started
    assert response.status_code == 200, response.text
    return dict(response.json()), elapsed


def reset_close(sock: socket.socket) -> None:
    """Close with SO_LINGER 0: the peer gets a TCP RST, as from a crashed client.

    ``shutdown(SHUT_RD)`` first wakes a thread blocked in ``recv`` on it (a bare
    close from another thread would leave that thread, and the socket, alive).
    """
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    try:
        sock.shutdown(socket.SHUT_RD)
    except OSError:
        pass
    sock.close()


def thread_count_settles(target: int, timeout: float) -> int:
    """Wait until this process runs at most ``target`` threads; the last count seen."""
    deadline = time.monotonic() + timeout
    while True:
        count = threading.active_count()
        if count <= target or time.monotonic() > deadline:
            return count
        time.sleep(0.05)


class TcpProxy:
    """A loopback TCP relay to ``upstream`` that a test can take down and bring back.

    ``down()`` closes the listening socket (new connections are refused) and
    resets every relayed connection, like a database host going away;
    ``up()`` listens on the same port again; ``blackhole()`` keeps every
    connection open but forwards nothing, like a network partition.
    """

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.port = free_port()
        self._lock = threading.Lock()
        self._socks: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._blackhole = False
        self.up()

    def blackhole(self, on: bool = True) -> None:
        self._blackhole = on

    def up(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        self._spawn(self._accept, listener)

    def down(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            try:
                listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() thread on Linux
            except OSError:
                pass
            listener.close()
        with self._lock:
            socks, self._socks = self._socks, set()
        for sock in socks:
            try:
                reset_close(sock)
            except OSError:
                pass

    def close(self) -> None:
        self.down()
        for thread in self._threads:
            thread.join(timeout=5)

    def _spawn(self, target: Any, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed by down()
            if self._blackhole:
                with self._lock:
                    self._socks.add(client)  # held open, never answered
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                if self._listener is not listener:
                    client.close()
                    server.close()
                    return
                self._socks.update((client, server))
            self._spawn(self._pipe, client, server)
            self._spawn(self._pipe, server, client)

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                if not self._blackhole:
                    dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):  # shutdown wakes the other direction's recv
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()


@contextmanager
def proxy_to(host: str, port: int) -> Iterator[TcpProxy]:
    proxy = TcpProxy((host, port))
    try:
        yield proxy
    finally:
        proxy.close()
