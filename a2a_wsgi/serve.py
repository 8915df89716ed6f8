"""Running an app: a background threaded server for tests and scripts, and gunicorn for production.

:func:`serve` is the toolnexus ``Toolkit.serve`` equivalent: it starts
werkzeug's threaded server on a background thread and returns at once with a
:class:`ServerHandle`. :func:`run_gunicorn` runs gunicorn in the foreground
with defaults chosen for long-lived SSE streams.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from werkzeug.serving import BaseWSGIServer, make_server

__all__ = ["ServerHandle", "parse_addr", "serve", "GUNICORN_DEFAULTS", "run_gunicorn"]

_WILDCARD_HOSTS = {"0.0.0.0", "::", "[::]", ""}


def parse_addr(addr: str | int) -> tuple[str, int]:
    """``"host:port"`` -> (host, port), split on the last colon (seed rules).

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

    An :class:`~a2a_wsgi.app.A2AApp` without a ``base_url`` gets ``url + "/"``,
    so a card served this way advertises a reachable endpoint.
    """
    host, port = parse_addr(addr)
    server = make_server(host, port, app, threaded=True)
    bound_port = server.socket.getsockname()[1]
    url = f"http://{_display_host(host)}:{bound_port}"
    if getattr(app, "base_url", "unset") is None:
        app.base_url = url + "/"  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, name=f"a2a-serve-{bound_port}",
                              kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    return ServerHandle(host=host, port=bound_port, url=url, server=server, thread=thread)


#: gunicorn settings for SSE: threads hold open streams, so a thread worker
#: (gthread) with many threads; its heartbeat runs on the main thread, so a
#: long stream does not trip ``timeout``; keep-alive above common LB idle times.
GUNICORN_DEFAULTS: Mapping[str, Any] = {
    "worker_class": "gthread",
    "workers": 1,
    "threads": 16,
    "timeout": 120,
    "graceful_timeout": 30,
    "keepalive": 75,
}


def run_gunicorn(app: Callable[..., Any] | str, bind: str = "127.0.0.1:8000",
                 **options: Any) -> None:
    """Run gunicorn in the foreground (blocks until it exits).

    ``app`` is a WSGI callable or a ``"module:object"`` string (imported in
    each worker). ``options`` are gunicorn settings by name, over
    :data:`GUNICORN_DEFAULTS`. With the in-memory store, keep ``workers=1``:
    each worker process would hold its own tasks.
    """
    from gunicorn.app.base import BaseApplication  # type: ignore[import-untyped]
    from gunicorn.util import import_app  # type: ignore[import-untyped]

    settings = {**GUNICORN_DEFAULTS, **options, "bind": [bind]}

    class _Application(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            for key, value in settings.items():
                if value is not None:
                    self.cfg.set(key, value)

        def load(self) -> Callable[..., Any]:
            loaded: Callable[..., Any] = import_app(app) if isinstance(app, str) else app
            if getattr(loaded, "base_url", "unset") is None:
                host, port = parse_addr(bind)
                loaded.base_url = f"http://{_display_host(host)}:{port}/"  # type: ignore[attr-defined]
            return loaded

    _Application().run()
