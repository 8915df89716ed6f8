"""Every use of gunicorn's internals, in one module: what parking (:mod:`a2a_wsgi._parking`)
needs to take a held stream's connection over from gunicorn's gevent worker.

None of this is gunicorn's documented API, so pyproject bounds gunicorn above and
``.ci/run`` runs the parking tests on the lowest gunicorn allowed and on the newest
release inside the bound. What it relies on (read in gunicorn 24.1 and 27.0):

- the worker: ``gunicorn.workers.ggevent.GeventWorker``, an async worker whose
  handler calls ``worker.wsgi(environ, response.start_response)`` and, when that
  raises ``StopIteration``, ends its handling of the connection quietly (logged at
  debug level) and closes its socket;
- the response: ``gunicorn.http.wsgi.Response`` (the ``__self__`` of the
  ``start_response`` it passes): ``force_close()`` (the headers say
  ``Connection: close``), ``write()`` (headers first), ``send_headers()``,
  ``sock`` (gevent's socket) and ``chunked`` (how it frames a write);
- the socket: closing it only marks it closed while a file made from it is open
  (``makefile``), so the connection outlives gunicorn's close;
- gevent's socket: ``send(data, flags, timeout=0.0)`` sends what it can now;
- the master (:func:`halt_once`): ``Arbiter.halt(reason, exit_status)``, whose
  ``stop()`` reaps workers and raises ``HaltServer`` for one that failed to load.

Nothing here imports gunicorn at module level (the response is recognised by its
class's name), so importing the app costs nothing more.
"""

from __future__ import annotations

import _socket
from collections.abc import Mapping
from typing import Any

__all__ = ["Connection", "gunicorn_response", "halt_once", "handed_over", "worker_hands_over"]

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
