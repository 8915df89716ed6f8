"""A real work tier for tests: Celery worker processes, ``a2a serve`` web tiers, a broker.

Each test stack gets its own queue name (RabbitMQ) and SQLite file, so runs on a
shared broker never meet; the queue is deleted when the stack stops. A missing
broker fails the test in CI (``CI=true``) and skips it elsewhere.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
import requests
from support.gunicorn import ROOT, ServerProcess, free_port, stop_group

__all__ = ["RABBITMQ", "Stack", "Worker", "WebTier", "need_broker", "until"]

RABBITMQ = "amqp://guest:guest@127.0.0.1:5672//"
_A2A = Path(sys.executable).parent / "a2a"
_CELERY = Path(sys.executable).parent / "celery"


def need_broker(host: str = "127.0.0.1", port: int = 5672) -> None:
    """Fail in CI, skip elsewhere, when the broker's port does not answer."""
    try:
        socket.create_connection((host, port), timeout=2).close()
    except OSError as exc:
        message = f"no broker on {host}:{port} ({exc})"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def until(predicate: Callable[[], bool], timeout: float, step: float = 0.1) -> bool:
    """Poll ``predicate`` until it holds or ``timeout`` seconds pass; whether it held."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True


class Worker:
    """``celery -A <app> worker`` in its own session (its pool processes in its group)."""

    def __init__(self, env: Mapping[str, str], log_path: Path, *, app: str,
                 concurrency: int = 2, pool: str = "prefork") -> None:
        self.log_path = log_path
        self._log = log_path.open("ab")
        argv = [str(_CELERY), "-A", app, "worker", "-Q", env["A2A_CELERY_QUEUE"],
                "-c", str(concurrency), "-P", pool, "--loglevel", "INFO",
                "-n", f"{uuid.uuid4().hex[:8]}@%h", "--without-mingle", "--without-gossip"]
        self.proc = subprocess.Popen(argv, cwd=ROOT, env={**os.environ, **env},
                                     start_new_session=True, stdout=subprocess.DEVNULL,
                                     stderr=self._log)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, timeout: float = 30) -> None:
        if not until(lambda: " ready." in self.log() or self.proc.poll() is not None, timeout):
            raise AssertionError(f"celery worker did not start:\n{self.log()}")
        if self.proc.poll() is not None:
            raise AssertionError(f"celery worker exited:\n{self.log()}")

    def kill(self) -> None:
        """SIGKILL the worker and its pool processes at once (a machine that died)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        stop_group(self.proc, timeout=20)
        self._log.close()


class WebTier:
    """``a2a serve <app> --workers N`` on a port (the same one again after a restart)."""

    def __init__(self, env: Mapping[str, str], log_path: Path, *, app: str, port: int,
                 workers: int = 2) -> None:
        argv = [str(_A2A), "serve", app, "--workers", str(workers),
                "--bind", f"127.0.0.1:{port}", "--graceful-timeout", "2"]
        self.server = ServerProcess(argv, port=port, log_path=log_path,
                                    env={**env, "PYTHONPATH": str(ROOT)})
        self.url = self.server.url
        self.server.wait_ready()

    def signal(self, sig: int) -> None:
        os.kill(self.server.proc.pid, sig)

    def stop(self) -> None:
        self.server.stop()


class Stack:
    """A web tier and a Celery worker of one app, on one queue and one SQLite file."""

    def __init__(self, tmp: Path, *, app: str = "examples.celery_agent",
                 broker: str = RABBITMQ, concurrency: int = 4, pool: str = "prefork",
                 extra_env: Mapping[str, str] | None = None, start_worker: bool = True) -> None:
        self.tmp, self.app, self.broker = tmp, app, broker
        self.port = free_port()
        self.queue = f"a2a-test-{uuid.uuid4().hex[:12]}"
        self.db = tmp / "tasks.sqlite3"
        self.env = {"A2A_CELERY_BROKER": broker, "A2A_CELERY_QUEUE": self.queue,
                    "A2A_DB": str(self.db), "A2A_STORE": "",
                    "A2A_BASE_URL": f"http://127.0.0.1:{self.port}/",
                    "A2A_TRUSTED_HOSTS": "127.0.0.1", **(extra_env or {})}
        self.concurrency, self.pool = concurrency, pool
        self.workers: list[Worker] = []
        self.web: WebTier | None = None
        if start_worker:
            self.add_worker()
        self.start_web()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def add_worker(self) -> Worker:
        worker = Worker(self.env, self.tmp / f"worker{len(self.workers)}.log",
                        app=f"{self.app}:celery", concurrency=self.concurrency, pool=self.pool)
        self.workers.append(worker)
        worker.wait_ready()
        return worker

    def start_web(self) -> WebTier:
        self.web = WebTier(self.env, self.tmp / "web.log", app=f"{self.app}:app",
                           port=self.port)
        return self.web

    def logs(self) -> str:
        parts = [f"--- {w.log_path.name}\n{w.log()}" for w in self.workers]
        if self.web is not None:
            parts.append(f"--- web\n{self.web.server.log()}")
        return "\n".join(parts)

    def stop(self) -> None:
        if self.web is not None:
            self.web.stop()
        for worker in self.workers:
            worker.stop()
        _delete_queue(self.broker, self.queue)


def _delete_queue(broker: str, queue: str) -> None:
    """Remove the run's queue from the shared broker (best effort)."""
    from kombu import Connection

    try:
        with Connection(broker, connect_timeout=2) as conn:
            conn.default_channel.queue_delete(queue)
    except Exception:
        pass


def rpc(url: str, method: str, params: dict[str, object], *, version: str = "1.0",
        timeout: float = 30) -> requests.Response:
    """A raw JSON-RPC call (the version header says which dialect)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return requests.post(url, json=body, headers={"A2A-Version": version}, timeout=timeout)
