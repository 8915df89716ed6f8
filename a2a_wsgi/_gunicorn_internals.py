"""Every use of gunicorn's code, in one module: its master, its application runner, its
config as a worker reads it, its import of an app, and what parking (:mod:`a2a_wsgi._parking`)
needs to take a held stream's connection over from gunicorn's gevent worker. No other
module imports gunicorn or reads its objects' attributes (tests/wsgi/test_gunicorn_contained.py);
they pass its objects through untouched.

Little of this is gunicorn's documented API, so pyproject bounds gunicorn above and
``.ci/run`` runs the parking tests on the lowest gunicorn allowed and on the newest
release inside the bound. What it relies on (read in gunicorn 24.1 and 27.0):

- the worker: ``gunicorn.workers.ggevent.GeventWorker``, an async worker whose
  handler calls ``worker.wsgi(environ, response.start_response)`` and, when that
  raises ``StopIteration``, ends its handling of the connection quietly (logged at
  debug level) and closes its socket; ``worker.cfg``, the worker's settings;
- the settings (``gunicorn.config.Config``): ``workers``, ``threads``,
  ``worker_connections``, ``graceful_timeout``, ``worker_class_str`` (the class's
  name: ``gthread`` for ``sync`` with threads) and ``set(name, value)``;
- the response: ``gunicorn.http.wsgi.Response`` (the ``__self__`` of the
  ``start_response`` it passes): ``force_close()`` (the headers say
  ``Connection: close``), ``write()`` (headers first), ``send_headers()``,
  ``sock`` (gevent's socket) and ``chunked`` (how it frames a write);
- the socket: closing it only marks it closed while a file made from it is open
  (``makefile``), so the connection outlives gunicorn's close;
- gevent's socket: ``send(data, flags, timeout=0.0)`` sends what it can now;
- the master (``gunicorn.arbiter.Arbiter``): its loop calls ``handle_int()`` for
  SIGINT and ``handle_term()`` for SIGTERM, and a handler raising ``StopIteration``
  makes it ``halt()``, a graceful stop of the workers; ``WORKERS`` (the workers by
  pid), ``kill_worker(pid, sig)``; ``halt(reason, exit_status)``, whose ``stop()``
  reaps workers and raises ``HaltServer`` for one that failed to load
  (:func:`halt_once`); a worker whose app's import raises ``AppImportError`` prints
  it and exits with 4 (:data:`APP_LOAD_ERROR`, as does a worker of ours whose app
  cannot start), which stops the master;
- the application (``gunicorn.app.base.BaseApplication``): ``load_config()`` fills
  ``self.cfg``, ``load()`` returns the WSGI app in each worker, and ``run()``
  runs an ``Arbiter(self)`` (:func:`run_master` runs its own in its place);
- ``gunicorn.util.import_app("module:object")``, raising
  ``gunicorn.errors.AppImportError`` when the object is missing or not callable.

Nothing here imports gunicorn at module level (the response is recognised by its
class's name, the master's class is made on first use), so importing the app costs
nothing more.
"""

from __future__ import annotations

import _socket
import os
import signal
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "APP_LOAD_ERROR", "AppImportError", "Connection", "Master", "WorkerSettings",
    "gunicorn_response", "halt_once", "handed_over", "import_app", "in_gunicorn", "run_master",
    "worker_hands_over", "worker_settings",
]

#: gunicorn's exit code for a worker whose app did not load: the master stops instead of
#: booting it again.
APP_LOAD_ERROR = 4

#: A WSGI app, as gunicorn loads and calls it.
WSGIApp = Callable[..., Any]

#: The end of a chunked response (its last, empty chunk).
_LAST_CHUNK = b"0\r\n\r\n"


def worker_hands_over(worker: object, app_type: type) -> bool:
    """Whether gunicorn's ``worker`` lets a connection be taken over: its gevent worker,
    calling an ``app_type`` itself (a middleware in between might catch the
    ``StopIteration`` that ends the worker's handler)."""
    from gunicorn.workers.ggevent import (  # type: ignore[import-untyped]
        GeventWorker,  # (the caller checked that gevent runs this process)
    )

    return isinstance(worker, GeventWorker) and isinstance(getattr(worker, "wsgi", None),
                                                           app_type)


def handed_over() -> StopIteration:
    """What the app raises to end the worker's handler for a connection it has taken
    over (gunicorn logs the message at debug level and closes its socket object)."""
    return StopIteration("the stream is parked: its connection is the process's now")


#: Per class seen (asked once each, every request asks): whether it is gunicorn's
#: response, and whether a socket class is plain (not TLS).
_RESPONSE_CLASS: dict[type, bool] = {}
_PLAIN_SOCKET_CLASS: dict[type, bool] = {}


def gunicorn_response(environ: Mapping[str, Any], start_response: object) -> Any:
    """gunicorn's response object when ``start_response`` is its own, over plain HTTP/1.x
    (TLS: bytes go through the SSL object; HTTP/2: framed streams); else None."""
    response = getattr(start_response, "__self__", None)
    kind = type(response)
    ours = _RESPONSE_CLASS.get(kind)
    if ours is None:
        ours = _RESPONSE_CLASS[kind] = (kind.__name__ == "Response"
                                        and kind.__module__ == "gunicorn.http.wsgi")
    sock = environ.get("gunicorn.socket")
    if not ours or sock is None or environ.get("HTTP_VERSION") == "2":
        return None
    plain = _PLAIN_SOCKET_CLASS.get(type(sock))
    if plain is None:
        plain = _PLAIN_SOCKET_CLASS[type(sock)] = not hasattr(sock, "getpeercert")
    return response if plain else None


class Connection:
    """One request's connection under gunicorn's gevent worker (``response``: from
    :func:`gunicorn_response`): written through gunicorn's response until :meth:`take`,
    then by us. (:class:`a2a_wsgi._parking.Park` is one: an object per held stream.)"""

    __slots__ = ("_response", "_sock", "_hold", "_chunked")

    _sock: Any  # these three from take() on (most requests never get there)
    _hold: Any
    _chunked: bool

    def __init__(self, response: Any) -> None:
        self._response = response

    def close_after(self) -> None:
        """The response's headers say ``Connection: close`` (no next request on it)."""
        self._response.force_close()

    def write(self, chunk: bytes) -> None:
        """Through gunicorn's response, as gunicorn writes (headers with the first)."""
        self._response.write(chunk)

    def take(self) -> None:
        """Take the connection over: the headers go out now (unless they did), and a file
        made from the socket keeps its descriptor open past gunicorn's close."""
        response = self._response
        response.send_headers()
        self._sock = response.sock
        self._hold = self._sock.makefile("wb", buffering=0)
        self._chunked = bool(response.chunked)
        self._response = None

    def send_now(self, data: bytes) -> bytes:
        """``data`` framed as gunicorn frames a write (one chunk, or as it is for
        HTTP/1.0), sent as far as the socket takes it now; what it did not take."""
        framed = b"%X\r\n%s\r\n" % (len(data), data) if self._chunked else data
        return self._send(framed)

    def send_all(self, rest: bytes) -> None:
        """What :meth:`send_now` left, waiting as long as it takes (raises OSError)."""
        self._sock.sendall(rest)

    def end(self, *, complete: bool) -> None:
        """The response's end (its last chunk, when it ended well), then the connection's
        (gunicorn closed its socket object: closing the file closes the descriptor)."""
        try:
            if complete and self._chunked:
                rest = self._send(_LAST_CHUNK)
                if rest:
                    self._sock.sendall(rest)
        except OSError:
            pass  # gone: the client resumes with Last-Event-ID
        try:
            if self._hold is not None:
                self._hold.close()
        except OSError:
            pass
        self._sock = self._hold = None

    def _send(self, data: bytes) -> bytes:
        try:
            sent = self._sock.send(data, _socket.MSG_DONTWAIT, timeout=0.0)  # gevent's socket
        except (BlockingIOError, InterruptedError):
            sent = 0
        return data[sent:]


def halt_once(arbiter: Any) -> None:
    """Make the master's halt finish when several workers fail to load (the
    ``on_starting`` hook of :mod:`a2a_wsgi.gunicorn_config`).

    The first worker's "app failed to load" halts the master; while ``stop()`` waits
    for the others it reaps the next one that failed the same way and raises
    ``HaltServer`` again, which escaped ``halt`` as a traceback (exit 1, not 4). Each
    such raise is one worker fewer, so halting again ends.
    """
    from gunicorn.errors import HaltServer  # type: ignore[import-untyped]

    halt = arbiter.halt

    def halt_again(reason: str | None = None, exit_status: int = 0) -> None:
        while True:
            try:
                halt(reason, exit_status)  # ends in sys.exit(exit_status)
                return
            except HaltServer:
                continue

    arbiter.halt = halt_again


class AppImportError(Exception):
    """gunicorn found no WSGI app where ``module:object`` points (its message says why:
    no such attribute, not callable, a call expression it cannot read)."""


def import_app(target: str) -> WSGIApp:
    """The object ``target`` (``module:object``, or ``module:factory(...)``, called) names,
    found as gunicorn's workers find it; :class:`AppImportError` when there is none. An
    error of the module's own import or of the factory's call propagates as it is."""
    from gunicorn.errors import AppImportError as NotFound
    from gunicorn.util import import_app as find  # type: ignore[import-untyped]

    try:
        found: WSGIApp = find(target)
    except NotFound as exc:
        raise AppImportError(str(exc)) from exc
    return found


def in_gunicorn(filename: str) -> bool:
    """Whether a traceback frame's ``filename`` is gunicorn's code (its package or this
    module), not the app's: by where the files are, not by a name a user's folder may share."""
    import gunicorn  # type: ignore[import-untyped]

    package = os.path.dirname(os.path.abspath(gunicorn.__file__)) + os.sep
    return os.path.abspath(filename).startswith(package) or filename == __file__


@dataclass(frozen=True)
class WorkerSettings:
    """What a gunicorn worker's settings say about the places it has, as plain values."""

    #: Worker processes the master runs (1 when the setting is not a count).
    workers: int
    #: The worker class, as gunicorn names it: ``gevent``, ``gthread``, ``sync``, a path.
    worker_class: str
    #: Threads of a gthread worker.
    threads: int
    #: Connections an async (gevent) worker holds at once.
    connections: int


def worker_settings(worker: Any) -> WorkerSettings:
    """The settings of gunicorn's ``worker`` (the ``post_worker_init`` hook's argument);
    a setting it lacks has gunicorn's default."""
    cfg = worker.cfg
    workers = getattr(cfg, "workers", 1)
    return WorkerSettings(workers=workers if isinstance(workers, int) else 1,
                          worker_class=str(getattr(cfg, "worker_class_str", "") or ""),
                          threads=int(getattr(cfg, "threads", 1)),
                          connections=int(getattr(cfg, "worker_connections", 1000)))


class Master:
    """gunicorn's master, as the code that stops it sees it (:mod:`a2a_wsgi._serve_shutdown`)."""

    __slots__ = ("_arbiter",)

    def __init__(self, arbiter: Any) -> None:
        self._arbiter = arbiter

    def worker_pids(self) -> list[int]:
        """The workers running now, by process id."""
        return list(self._arbiter.WORKERS)

    def signal_worker(self, pid: int, signum: int) -> None:
        """Send one worker a signal, as gunicorn does (a worker already gone is forgotten)."""
        self._arbiter.kill_worker(pid, signum)

    @property
    def graceful_timeout(self) -> float:
        """Seconds a worker told to stop gracefully has before it is killed."""
        return float(self._arbiter.cfg.graceful_timeout)


#: A stop callback: the master, and the signal (SIGINT or SIGTERM) that asked for the stop.
OnStop = Callable[[Master, int], None]


def _stopping_master(on_stop: OnStop) -> type:
    """gunicorn's master class, whose first SIGINT or SIGTERM calls ``on_stop`` and then
    stops the workers gracefully (gunicorn's own SIGINT is a quick stop)."""
    from gunicorn.arbiter import Arbiter  # type: ignore[import-untyped]

    class StoppingMaster(Arbiter):  # type: ignore[misc]
        def handle_int(self) -> None:
            self._stop(signal.SIGINT)

        def handle_term(self) -> None:
            self._stop(signal.SIGTERM)

        def _stop(self, signum: int) -> None:
            on_stop(Master(self), signum)
            raise StopIteration  # gunicorn's loop then halts: a graceful stop of the workers

    return StoppingMaster


def run_master(settings: Mapping[str, Any], load: Callable[[], WSGIApp], *,
               on_stop: OnStop) -> None:
    """Run gunicorn in the foreground until it exits: ``settings`` by gunicorn's names (None
    values left to gunicorn), ``load`` called in each worker for its app, ``on_stop`` on
    the first SIGINT or SIGTERM before the graceful stop, and :func:`halt_once` in place.

    ``load`` raising :class:`AppImportError` is gunicorn's "app failed to load": the worker
    prints it and exits with 4, and the master stops."""
    from gunicorn.app.base import BaseApplication  # type: ignore[import-untyped]
    from gunicorn.errors import AppImportError as NotFound

    master_class = _stopping_master(on_stop)

    class _Application(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            for key, value in settings.items():
                if value is not None:
                    self.cfg.set(key, value)

        def load(self) -> WSGIApp:
            try:
                return load()
            except AppImportError as exc:  # gunicorn's again: its worker reports it
                raise NotFound(str(exc)) from None

        def run(self) -> None:
            # BaseApplication.run with our master in place of gunicorn's.
            arbiter = master_class(self)
            halt_once(arbiter)  # several workers failing to load: one exit, no traceback
            try:
                arbiter.run()
            except RuntimeError as exc:
                print(f"\nError: {exc}\n", file=sys.stderr, flush=True)
                sys.exit(1)

    _Application().run()
