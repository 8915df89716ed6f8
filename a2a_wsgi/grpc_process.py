"""``a2a serve --grpc HOST:PORT``: the gRPC process beside gunicorn's workers.

grpcio does not survive gunicorn's fork nor gevent's patched sockets (docs/grpc.md), so
``a2a serve`` starts ``python -m a2a_wsgi.grpc`` as a process of its own, on the task store
the workers open (none named: the SQLite file, for both), with ``$A2A_GRPC_URL`` exported
so that every worker's card lists the gRPC interface. It is stopped (SIGTERM, then a wait)
when gunicorn exits, and stops by itself if ``a2a serve`` dies first: its stdin is a pipe
from ``a2a serve``, which closes with it.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import MutableMapping
from dataclasses import dataclass

from .serve_checks import EXIT_EXTRA, EXIT_GRPC, StartupFailure, check_address

__all__ = ["GrpcProcess", "check_grpc", "grpc_environ", "grpc_url", "start_grpc_process"]

_WILDCARD_HOSTS = {"0.0.0.0", "::", ""}
#: Seconds the gRPC process gets beyond its own grace to stop, before it is killed.
_STOP_MARGIN = 10.0


def grpc_url(host: str, port: int) -> str:
    """The interface URL the card lists for ``--grpc host:port`` (``host:port``, the
    form gRPC targets take); a wildcard host is this machine's name."""
    shown = socket.getfqdn() if host in _WILDCARD_HOSTS else host
    return f"[{shown}]:{port}" if ":" in shown else f"{shown}:{port}"


def grpc_environ(host: str, port: int, environ: MutableMapping[str, str]) -> None:
    """What the workers and the gRPC process must agree on, set in ``environ`` unless
    the deployment set it: the card's gRPC URL, and a store both open (the SQLite file,
    ``sqlite://``: ``$A2A_DB`` or ./a2a-tasks.sqlite3, for an app that names none)."""
    environ.setdefault("A2A_GRPC_URL", grpc_url(host, port))
    environ.setdefault("A2A_STORE", "sqlite://")


def check_grpc(host: str, port: int, http: tuple[str, int]) -> None:
    """The ``--grpc`` address can be listened on and the extra is here; else StartupFailure."""
    if importlib.util.find_spec("grpc") is None:
        raise StartupFailure(EXIT_EXTRA, "--grpc needs the 'grpc' extra, which is not "
                                         "installed here: pip install 'a2a-wsgi[grpc]'")
    if port == 0:
        raise StartupFailure(EXIT_GRPC, "--grpc needs a port (not 0): the card names it")
    if (host, port) == http:
        raise StartupFailure(EXIT_GRPC, f"--grpc and --bind name the same address "
                                        f"{grpc_url(host, port)}")
    try:
        check_address(host, port)
    except StartupFailure as failure:
        raise StartupFailure(EXIT_GRPC, str(failure).replace(" with --bind", " with --grpc")
                             .replace("cannot listen on", "cannot listen for gRPC on")) from None


@dataclass
class GrpcProcess:
    """The started ``python -m a2a_wsgi.grpc``."""

    proc: subprocess.Popen[bytes]
    #: Seconds its open calls get to end when it is stopped.
    grace: float
    #: The process that started it: gunicorn's workers are forks of it, and leave through
    #: the same ``finally`` as the master, where they must not stop it.
    owner: int = dataclasses.field(default_factory=os.getpid)

    def stop(self) -> int | None:
        """SIGTERM, wait (its grace and a margin), then SIGKILL; its exit status (None: not
        called by the process that started it, which alone stops it)."""
        if os.getpid() != self.owner:
            return None
        try:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout=self.grace + _STOP_MARGIN)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                return self.proc.wait()
        except ProcessLookupError:  # it ended, and gunicorn's master reaped it (waitpid(-1))
            return None
        finally:
            if self.proc.stdin is not None:
                self.proc.stdin.close()


def start_grpc_process(target: str, host: str, port: int, *, grace: float,
                       timeout: float | None) -> GrpcProcess:
    """Start serving ``target`` over gRPC on ``host:port`` and wait until it listens.

    :raises StartupFailure: it exited first (what it wrote to stderr says why), or did not
        listen within ``timeout`` seconds (None: no limit).
    """
    bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "a2a_wsgi.grpc", target, "--bind", bind, "--grace", f"{grace:g}",
         "--with-parent"],
        stdin=subprocess.PIPE, start_new_session=True,  # signalled by us only, not Ctrl-C
        env=dict(os.environ))
    started = GrpcProcess(proc, grace)
    deadline = None if timeout is None else time.monotonic() + timeout
    dial = "127.0.0.1" if host in _WILDCARD_HOSTS else host
    try:
        while not _listens(dial, port):
            status = proc.poll()
            if status is not None:
                raise StartupFailure(EXIT_GRPC, f"the gRPC process (python -m a2a_wsgi.grpc) "
                                                f"exited with status {status} before it "
                                                f"listened on {bind}")
            if deadline is not None and time.monotonic() > deadline:
                raise StartupFailure(EXIT_GRPC, f"the gRPC process did not listen on {bind} "
                                                f"within {timeout:g} s (--timeout)")
            time.sleep(0.1)
    except BaseException:  # (Ctrl-C too) no gRPC process outlives a start that failed
        started.stop()
        raise
    return started


def _listens(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False
