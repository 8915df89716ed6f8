"""Start and stop real server processes (gunicorn, ``a2a serve``) for tests.

Each server runs in its own session, so its workers share its process group and
:meth:`ServerProcess.stop` ends them all, SIGKILL if SIGTERM is not enough. Its
stderr goes to a file: a full pipe would stall gunicorn, and the file is what a
failed start shows.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import requests

__all__ = ["READY_PATH", "ROOT", "ServerProcess", "WORKER_CLASSES", "free_port", "gunicorn_argv",
           "start_gunicorn", "stop_group"]

#: The checkout: servers run from here, so ``examples.echo:app`` imports.
ROOT = Path(__file__).resolve().parents[2]
#: The path a started server answers on once it can serve.
READY_PATH = ".well-known/agent-card.json"


def free_port() -> int:
    """A loopback port nobody holds right now (the server binds it a moment later)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_group(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """SIGTERM the process group, SIGKILL it if it lingers: workers go with their master."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=timeout)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)


class ServerProcess:
    """One server process (and its workers) in its own process group, logging to a file."""

    def __init__(self, argv: Sequence[str], *, port: int, log_path: Path,
                 env: Mapping[str, str] | None = None) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}/"
        self.log_path = log_path
        self._log = log_path.open("wb")
        self.proc = subprocess.Popen(list(argv), cwd=ROOT, env={**os.environ, **(env or {})},
                                     start_new_session=True, stdout=subprocess.DEVNULL,
                                     stderr=self._log)

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log(self) -> str:
        """What the server wrote to stderr so far."""
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, deadline: float | None = None) -> requests.Response:
        """Poll the agent card until it answers; fail with the log if the server died first."""
        deadline = time.monotonic() + 30 if deadline is None else deadline
        while True:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"server on port {self.port} did not start:\n{self.log()}")
            try:
                return requests.get(self.url + READY_PATH, timeout=5)
            except requests.RequestException:
                time.sleep(0.1)

    def stop(self) -> None:
        """End the whole process group and close the log (idempotent)."""
        stop_group(self.proc)
        self._log.close()


def _has_control_socket() -> bool:
    """Whether the installed gunicorn makes a control socket (and so takes the option)."""
    from gunicorn.config import KNOWN_SETTINGS  # type: ignore[import-untyped]

    return any(setting.name == "control_socket_disable" for setting in KNOWN_SETTINGS)


#: The worker models the library supports: a thread per request, or a greenlet.
WORKER_CLASSES = ("gthread", "gevent")


def gunicorn_argv(app: str, *, port: int, workers: int = 1, threads: int = 8,
                  graceful_timeout: float | None = 1, worker_class: str = "gthread",
                  keepalive: int | None = None) -> list[str]:
    """``python -m gunicorn`` with a worker that holds SSE streams, bound to loopback,
    configured as docs/deployment.md says (``-c python:a2a_wsgi.gunicorn_config``: each
    worker tells its apps what it is and starts them at boot). ``keepalive``: seconds an
    idle connection stays open (gunicorn's default, 2, when None).

    No control socket: gunicorn 25.1+ would otherwise create one under ``$HOME`` (older
    ones, which the lowest pins install, have neither the socket nor the option).
    """
    argv = [sys.executable, "-m", "gunicorn", "-c", "python:a2a_wsgi.gunicorn_config",
            "-k", worker_class, "--workers", str(workers), "-b", f"127.0.0.1:{port}"]
    argv += ["--no-control-socket"] if _has_control_socket() else []
    argv += ["--threads", str(threads)] if worker_class == "gthread" else []
    if graceful_timeout is not None:
        argv += ["--graceful-timeout", str(graceful_timeout)]
    if keepalive is not None:
        argv += ["--keep-alive", str(keepalive)]
    return [*argv, app]


def start_gunicorn(app: str, *, log_path: Path, env: Mapping[str, str] | None = None,
                   pythonpath: Sequence[Path] = (), workers: int = 1,
                   threads: int = 8, worker_class: str = "gthread",
                   keepalive: int | None = None) -> ServerProcess:
    """Start gunicorn serving ``app`` (``module:name``) on a free port; not yet ready.

    ``pythonpath`` goes before the checkout on the workers' ``PYTHONPATH``, so a test
    module can itself be the app.
    """
    port = free_port()
    path = os.pathsep.join(str(p) for p in [*pythonpath, ROOT])
    argv = gunicorn_argv(app, port=port, workers=workers, threads=threads,
                         worker_class=worker_class, keepalive=keepalive)
    return ServerProcess(argv,
                         port=port, log_path=log_path, env={**(env or {}), "PYTHONPATH": path})
