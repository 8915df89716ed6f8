"""Running an app: a background threaded server for tests and scripts, and gunicorn for production.

:func:`serve` starts werkzeug's threaded server on a background thread and
returns at once with a :class:`ServerHandle`. :func:`run_gunicorn` runs
gunicorn in the foreground with defaults chosen for long-lived SSE streams.

On SIGTERM a gunicorn worker stops accepting and waits ``graceful_timeout``
for open requests; SSE streams would only carry heartbeats until they are cut.
:func:`stop_streams_on_sigterm` chains a SIGTERM handler that first ends every
open stream cleanly (the client sees the end of the response and resumes with
``Last-Event-ID``). :func:`gunicorn_post_worker_init` installs it in each
worker and tells the worker's apps what the worker is (:mod:`a2a_wsgi._process`);
:func:`run_gunicorn` and ``a2a serve`` add it to gunicorn's config, and
``gunicorn -c python:a2a_wsgi.gunicorn_config app:app`` does for plain gunicorn.
Ctrl-C under :func:`run_gunicorn` is :mod:`a2a_wsgi._serve_shutdown`'s; ``a2a serve``'s
checks before it starts are :mod:`a2a_wsgi._serve_checks`.
"""

from __future__ import annotations

import gc
import importlib.util
import os
import resource
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any

from ._admission import default_stream_limit
from ._concurrency import cooperative
from ._gunicorn_internals import APP_LOAD_ERROR
from ._process import ServerInfo, announce
from ._store_choice import MemoryStoreInManyProcessesError, MissingExtraError
from .stores._base import StoreOpenError

if TYPE_CHECKING:  # werkzeug's package loads its test client and http.server: serve() only
    from werkzeug.serving import BaseWSGIServer

__all__ = [
    "ServerHandle", "parse_addr", "serve",
    "GUNICORN_DEFAULTS", "GEVENT_DEFAULTS",
    "default_worker_class",
    "gunicorn_settings",
    "raise_open_file_limit",
    "run_gunicorn",
    "gunicorn_post_worker_init",
    "settle_gc",
    "GEVENT_GC_THRESHOLD",
    "stop_streams_on_sigterm",
]

_WILDCARD_HOSTS = {"0.0.0.0", "::", "[::]", ""}


def parse_addr(addr: str | int) -> tuple[str, int]:
    """``"host:port"`` -> (host, port), split on the last colon (an IPv6 host keeps its own).

    An empty host means 127.0.0.1, a bare ``"8000"`` (or int) is a port on
    127.0.0.1, port 0 asks for an ephemeral port. ``"[::1]:80"`` unwraps the brackets.
    """
    text = str(addr).strip()
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"bad address {addr!r}: expected HOST:PORT") from None
    if not 0 <= number <= 65535:
        raise ValueError(f"bad address {addr!r}: port out of range")
    return host or "127.0.0.1", number


def _display_host(host: str) -> str:
    """What a client should dial: wildcard binds are reached on the loopback address."""
    if host in _WILDCARD_HOSTS:
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


@dataclass
class ServerHandle:
    """A running background server. ``stop()``/``close()`` shut it down and free the port."""

    host: str
    port: int
    url: str
    server: BaseWSGIServer = field(repr=False)
    thread: threading.Thread = field(repr=False)

    def stop(self) -> None:
        """Stop accepting, close the socket and wait for the serving thread (idempotent)."""
        if self.thread.is_alive():
            self.server.shutdown()
            self.thread.join()
        self.server.server_close()

    close = stop

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def serve(app: Callable[..., Any], addr: str | int = "127.0.0.1:0") -> ServerHandle:
    """Serve ``app`` on a threaded werkzeug server in a daemon thread; return at once.

    An :class:`~a2a_wsgi._app.A2AApp` is started first (its push deliveries
    resume at once); without a ``base_url`` it advertises the URL each
    request came in on (:mod:`a2a_wsgi._public_url`).
    """
    start = getattr(app, "start", None)
    if callable(start):
        start()
    from werkzeug.serving import make_server

    host, port = parse_addr(addr)
    server = make_server(host, port, app, threaded=True)
    bound_port = server.socket.getsockname()[1]
    url = f"http://{_display_host(host)}:{bound_port}"
    thread = threading.Thread(target=server.serve_forever, name=f"a2a-serve-{bound_port}",
                              kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    return ServerHandle(host=host, port=bound_port, url=url, server=server, thread=thread)


#: gunicorn settings for SSE: with the thread worker (gthread) each open stream
#: holds a thread, so many threads; its heartbeat runs on the main thread, so a
#: long stream does not trip ``timeout``; keep-alive above common LB idle times.
GUNICORN_DEFAULTS: Mapping[str, Any] = {
    "worker_class": "gthread",
    "workers": 1,
    "threads": 16,
    "timeout": 120,
    "graceful_timeout": 30,
    "keepalive": 75,
}


#: What the gevent worker changes: a stream is a greenlet, so connections, not
#: threads, bound what one worker holds.
GEVENT_DEFAULTS: Mapping[str, Any] = {
    "worker_class": "gevent",
    "worker_connections": 12000,
}


def default_worker_class() -> str:
    """``gevent`` (a dependency of a2a-wsgi) when it can be imported, else ``gthread``."""
    return "gevent" if importlib.util.find_spec("gevent") is not None else "gthread"


def gunicorn_settings(worker_class: str | None = None, **options: Any) -> dict[str, Any]:
    """Our defaults for ``worker_class`` (None: :func:`default_worker_class`), then ``options``."""
    chosen = worker_class or default_worker_class()
    settings: dict[str, Any] = dict(GUNICORN_DEFAULTS)
    if chosen == "gevent":
        settings.update(GEVENT_DEFAULTS)
    settings.update({k: v for k, v in options.items() if v is not None})
    settings["worker_class"] = chosen
    return settings


def raise_open_file_limit() -> int:
    """Lift this process's soft limit on open files to the hard one; the limit now.

    A gevent worker holding thousands of streams needs a descriptor for each,
    and many systems start processes at a soft limit of 1024.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        return hard
    return soft


class _SigtermChain:
    """A SIGTERM handler: do ``action``, then what the previous handler did."""

    def __init__(self, action: Callable[[], object],
                 previous: Callable[[int, FrameType | None], Any], *, off_handler: bool) -> None:
        self.action, self.previous, self.off_handler = action, previous, off_handler

    def chains(self, action: Callable[[], object]) -> bool:
        """Whether ``action`` is already done by this handler or one it chains to."""
        return self.action is action or (isinstance(self.previous, _SigtermChain)
                                         and self.previous.chains(action))

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if not self.off_handler:
            self.action()
        elif cooperative():
            # Not inline: the interrupted code may hold a lock the action needs. Under gevent
            # the handler runs in the event loop, where starting a thread would switch
            # greenlets (BlockingSwitchOutError); a spawned greenlet runs once the loop goes on.
            import gevent  # type: ignore[import-untyped]

            gevent.spawn(self.action)
        else:
            threading.Thread(target=self.action, name="a2a-on-sigterm", daemon=True).start()
        self.previous(signum, frame)


def _chain_on_sigterm(action: Callable[[], object], *, off_handler: bool) -> bool:
    """Chain ``action`` onto this process's Python SIGTERM handler (see
    :func:`stop_streams_on_sigterm`); True when it is in place."""
    if threading.current_thread() is not threading.main_thread():
        return False
    previous = signal.getsignal(signal.SIGTERM)
    if isinstance(previous, _SigtermChain) and previous.chains(action):
        return True
    if not callable(previous):
        return False
    signal.signal(signal.SIGTERM, _SigtermChain(action, previous, off_handler=off_handler))
    signal.siginterrupt(signal.SIGTERM, False)  # as gunicorn set it: no EINTR in requests
    return True


def stop_streams_on_sigterm() -> bool:
    """Chain :func:`stop_all_streams` onto this process's Python SIGTERM handler.

    Only from the main thread, and only over a Python handler (a server's own:
    SIG_DFL or SIG_IGN are left alone, since chaining would change what SIGTERM
    does). Idempotent; True when the handler is in place.
    """
    from ._runtime._service import stop_all_streams  # the runtime only in a worker
    return _chain_on_sigterm(stop_all_streams, off_handler=True)


def gunicorn_post_worker_init(worker: Any) -> None:
    """gunicorn ``post_worker_init`` hook: tell this worker's apps what it is, and on
    SIGTERM end open A2A streams first.

    The apps learn the worker count (several: they share a store) and the stream
    places the worker class allows (:func:`~a2a_wsgi._process.announce`), and start
    now: push deliveries resume and leases are kept before any request, and an app
    that cannot serve here (an in-memory store for several workers) stops the
    worker from booting. It also lifts the open-file limit
    (:func:`raise_open_file_limit`) and, once the apps have started, freezes what
    boot made for the collector (:func:`settle_gc`). ``a2a serve`` and :func:`run_gunicorn` install
    it; ``gunicorn -c python:a2a_wsgi.gunicorn_config`` does too, and in a config
    file of your own::

        from a2a_wsgi._serve import gunicorn_post_worker_init as post_worker_init
    """
    from ._gunicorn_internals import worker_settings

    stop_streams_on_sigterm()
    raise_open_file_limit()
    settings = worker_settings(worker)
    info = ServerInfo(multiprocess=settings.workers > 1,
                      stream_limit=default_stream_limit(settings.worker_class,
                                                        threads=settings.threads,
                                                        connections=settings.connections),
                      parks_streams=_hands_over(worker))
    try:
        announce(info)
    except (MemoryStoreInManyProcessesError, StoreOpenError, MissingExtraError) as exc:
        # (A store that cannot open: an A2A_DB folder that cannot be made, say.)
        # One line, not a traceback per worker; gunicorn's "app failed to load" code
        # makes the master stop instead of booting the worker again.
        print(f"a2a: {exc}", file=sys.stderr, flush=True)
        sys.exit(APP_LOAD_ERROR)
    settle_gc(cooperative_worker=cooperative())


def _hands_over(worker: Any) -> bool:
    """Whether ``worker`` lets a held stream park (:mod:`a2a_wsgi._parking`): gunicorn's
    gevent worker calling an A2AApp itself (:mod:`._gunicorn_internals` says why)."""
    if not cooperative():
        return False
    from ._app import A2AApp
    from ._gunicorn_internals import worker_hands_over

    return worker_hands_over(worker, A2AApp)


#: The collector's thresholds in a gevent worker (Python 3.11's defaults: 700, 10, 10;
#: 3.13's: 2000, 10, 10): see :func:`settle_gc`.
GEVENT_GC_THRESHOLD = (2000, 10, 10)


def settle_gc(*, cooperative_worker: bool) -> None:
    """Keep garbage collection from stopping a booted worker for long.

    A worker holding thousands of streams tracks hundreds of thousands of objects,
    and a full collection walks all of them while nothing else runs (under gevent,
    no request is answered meanwhile). Once the worker has booted and its apps
    have started, what exists now (modules, classes, the apps, their stores) lives
    as long as the worker: collect once, then :func:`gc.freeze` it, so no later
    collection walks it again. Objects freed by reference counting are still
    freed; only a cycle among frozen objects would never be collected, and boot
    leaves none behind after the collection. In a gevent worker the youngest
    generation is also collected after 2,000 allocations instead of 700 (Python
    3.13's own default; :data:`GEVENT_GC_THRESHOLD`): more of a fan-out's
    short-lived objects (a woken stream's item, its bytes) die by reference
    counting before a collection sees them instead of being promoted, so full
    collections come less often, while each young collection stays short. And unless
    ``GEVENT_TRACK_GREENLET_TREE`` says otherwise, gevent stops recording for each
    greenlet the stack that spawned it (ten frame records, kept as long as the
    greenlet: a held stream's) and its spawn tree, which only gevent's debugging
    reports (``gevent.util.format_run_info``) read. See docs/deployment.md.
    """
    gc.collect()
    gc.freeze()
    if cooperative_worker:
        gc.set_threshold(*GEVENT_GC_THRESHOLD)
        if "GEVENT_TRACK_GREENLET_TREE" not in os.environ:
            import gevent

            gevent.config.track_greenlet_tree = False


def _serve_worker_init(worker: Any) -> None:
    """What :func:`run_gunicorn` adds for its own master (:mod:`a2a_wsgi._serve_shutdown`):
    the worker leaves Ctrl-C to the master and, told to stop, reports its running tasks."""
    from ._serve_shutdown import report_runs

    gunicorn_post_worker_init(worker)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _chain_on_sigterm(report_runs, off_handler=False)  # (reads a table, writes a pipe: no lock)


def _post_worker_init(user_hook: Callable[[Any], Any] | None) -> Callable[[Any], None]:
    """Our hook, then the caller's own ``post_worker_init`` if they gave one."""
    if user_hook is None:
        return _serve_worker_init

    def both(worker: Any) -> None:
        _serve_worker_init(worker)
        user_hook(worker)

    return both


def run_gunicorn(app: Callable[..., Any] | str, bind: str = "127.0.0.1:8000",
                 **options: Any) -> None:
    """Run gunicorn in the foreground (blocks until it exits).

    ``app`` is a WSGI callable or a ``"module:object"`` string (imported in
    each worker). ``options`` are gunicorn settings by name, over
    :func:`gunicorn_settings` (gevent, a dependency; gthread if it cannot be imported). On SIGTERM
    open streams end cleanly (:func:`gunicorn_post_worker_init`, run before a
    given ``post_worker_init``). The first Ctrl-C or SIGTERM waits up to
    ``graceful_timeout`` for running tasks and says so on stderr; a second Ctrl-C
    stops at once (:mod:`a2a_wsgi._serve_shutdown`).
    """
    from ._gunicorn_internals import import_app, run_master
    from ._serve_shutdown import open_report_pipe, stop_gracefully

    settings = {**gunicorn_settings(**options), "bind": [bind]}
    settings["post_worker_init"] = _post_worker_init(settings.get("post_worker_init"))

    def load() -> Callable[..., Any]:
        try:
            return import_app(app) if isinstance(app, str) else app
        except StoreOpenError as exc:
            # One line, not a traceback per worker; gunicorn's "app failed to load"
            # code makes the master stop instead of booting the worker again.
            print(f"a2a: {exc}", file=sys.stderr, flush=True)
            sys.exit(APP_LOAD_ERROR)

    open_report_pipe()
    run_master(settings, load, on_stop=stop_gracefully)
