"""``a2a serve --grpc HOST:PORT``: the gRPC process beside gunicorn's workers.

grpcio does not survive gunicorn's fork nor gevent's patched sockets (docs/grpc.md), so
``a2a serve`` starts ``python -m a2a_wsgi.grpc`` as a process of its own, on the task store
the workers open (none named: the SQLite file, for both), with ``$A2A_GRPC_URL`` exported
so that every worker's card lists the gRPC interface. It is stopped (SIGTERM, then a wait)
when gunicorn exits, and stops by itself if ``a2a serve`` dies first: its stdin is a pipe
from ``a2a serve``, which closes with it.

Gunicorn's master restarts a worker that dies; :meth:`GrpcProcess.watch` does the same for
the gRPC process, from a thread of the master (a greenlet under gevent): once a second it
looks whether the process is still there and, if not, starts another on the same address,
waiting 1 s before the first try and twice as long after each start that did not last a
minute (at most 60 s). Its tasks are in the shared store, so they survive it; its open
streams end, and the clients resubscribe.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import MutableMapping
from dataclasses import dataclass

from ._concurrency import cooperative
from ._serve_checks import EXIT_EXTRA, EXIT_GRPC, StartupFailure, check_address

__all__ = ["GrpcProcess", "check_grpc", "grpc_environ", "grpc_url", "start_grpc_process"]

_WILDCARD_HOSTS = {"0.0.0.0", "::", ""}
#: Seconds the gRPC process gets beyond its own grace to stop, before it is killed.
_STOP_MARGIN = 10.0
#: How often :meth:`GrpcProcess.watch` looks; the first and the longest wait before a restart.
_WATCH_EVERY, _FIRST_BACKOFF, _MAX_BACKOFF = 1.0, 1.0, 60.0
#: A process that served this long was healthy: the next restart waits the first backoff.
_HEALTHY_AFTER = 60.0


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
    #: How to start it again (:meth:`watch`): its command line, address and start timeout.
    argv: tuple[str, ...] = ()
    host: str = ""
    port: int = 0
    timeout: float | None = None
    #: Set by :meth:`stop`: no restart from then on.
    stopping: threading.Event = dataclasses.field(default_factory=threading.Event)
    #: Restarts so far.
    restarts: int = 0
    #: Held while a restart starts a process: stop() waits for it, so none is left behind.
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    def stop(self) -> int | None:
        """SIGTERM, wait (its grace and a margin), then SIGKILL; its exit status (None: not
        called by the process that started it, which alone stops it)."""
        if os.getpid() != self.owner:
            return None
        self.stopping.set()
        with self.lock:
            return _end(self.proc, self.grace)

    def alive(self) -> bool:
        """Still running. Gunicorn's master reaps every child (``waitpid(-1)``), so a
        process that ended may have no status left to read: gone from the process table
        is ended too."""
        if self.proc.poll() is not None:
            return False
        try:
            os.kill(self.proc.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def watch(self) -> None:
        """Restart the process whenever it ends before :meth:`stop`, from a daemon thread
        (under gevent a bare greenlet: gevent keeps greenlets across gunicorn's fork, and
        the worker's copy, which returns at once, must not end as a thread of the worker)."""
        if cooperative():
            import gevent  # type: ignore[import-untyped]

            gevent.spawn(self._watch)
        else:
            threading.Thread(target=self._watch, name="a2a-grpc-watch", daemon=True).start()

    def _watch(self) -> None:
        backoff = _FIRST_BACKOFF
        started = time.monotonic()
        while not self.stopping.wait(_WATCH_EVERY):
            if os.getpid() != self.owner:
                return  # a forked worker's copy (gevent keeps greenlets across fork)
            if self.alive():
                continue
            status = self.proc.returncode
            if time.monotonic() - started >= _HEALTHY_AFTER:
                backoff = _FIRST_BACKOFF
            _say(f"the gRPC process (pid {self.proc.pid}) exited"
                 f"{'' if status is None else f' with status {status}'}; "
                 f"starting another in {backoff:g} s")
            if self.stopping.wait(backoff):
                return
            backoff = min(backoff * 2, _MAX_BACKOFF)
            started = time.monotonic()
            with self.lock:
                if self.stopping.is_set():
                    return
                if self.proc.stdin is not None:
                    self.proc.stdin.close()
                try:
                    self.proc = _spawn(self.argv)
                    _wait_listening(self.proc, self.host, self.port, self.timeout or 60.0,
                                    self.grace)
                except StartupFailure as failure:
                    _say(str(failure))
                    continue
            self.restarts += 1
            _say(f"the gRPC process restarted (pid {self.proc.pid})")


def start_grpc_process(target: str, host: str, port: int, *, grace: float,
                       timeout: float | None) -> GrpcProcess:
    """Start serving ``target`` over gRPC on ``host:port`` and wait until it listens.

    :raises StartupFailure: it exited first (what it wrote to stderr says why), or did not
        listen within ``timeout`` seconds (None: no limit).
    """
    bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    argv = (sys.executable, "-m", "a2a_wsgi.grpc", target, "--bind", bind,
            "--grace", f"{grace:g}", "--with-parent")
    proc = _spawn(argv)
    _wait_listening(proc, host, port, timeout, grace)
    return GrpcProcess(proc, grace, argv=argv, host=host, port=port, timeout=timeout)


def _spawn(argv: tuple[str, ...]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(list(argv), stdin=subprocess.PIPE,
                            start_new_session=True,  # signalled by us only, not Ctrl-C
                            env=dict(os.environ))


def _wait_listening(proc: subprocess.Popen[bytes], host: str, port: int,
                    timeout: float | None, grace: float) -> None:
    """Wait until ``proc`` listens on ``port``; StartupFailure (and ``proc`` stopped) if it
    exits first or does not listen within ``timeout`` seconds."""
    bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
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
        _end(proc, grace)
        raise


def _end(proc: subprocess.Popen[bytes], grace: float) -> int | None:
    """SIGTERM ``proc``, wait its grace and a margin, then SIGKILL; its exit status."""
    try:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            return proc.wait(timeout=grace + _STOP_MARGIN)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()
    except (ProcessLookupError, ChildProcessError):  # it ended, and gunicorn's master
        return None                                  # reaped it (waitpid(-1))
    finally:
        if proc.stdin is not None:
            proc.stdin.close()


def _say(line: str) -> None:
    print(f"a2a serve: {line}", file=sys.stderr, flush=True)


def _listens(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False
