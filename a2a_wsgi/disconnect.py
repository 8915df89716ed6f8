"""Telling whether the client of a WSGI request has hung up.

WSGI gives an application no disconnect signal while it computes a response;
only a write fails. The servers we run under expose the connection's socket
(gunicorn as ``gunicorn.socket``, werkzeug as ``werkzeug.socket``), and a
non-blocking peek at it tells: an orderly close reads as zero bytes, a reset
as an error, a live idle client as "would block".

The peek goes through the C-level ``_socket`` on the same descriptor: a
Python socket with a timeout would first wait for data, and gevent's
cooperative socket waits for readability instead of answering "would block".
"""

from __future__ import annotations

import _socket
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["client_gone_probe", "client_socket"]

_SOCKET_KEYS = ("gunicorn.socket", "werkzeug.socket")
_PEEK = _socket.MSG_PEEK | _socket.MSG_DONTWAIT


def client_socket(environ: Mapping[str, Any]) -> Any:
    """The request's connection as the server exposes it, else None."""
    for key in _SOCKET_KEYS:
        if key in environ:
            sock = environ[key]
            if callable(getattr(sock, "fileno", None)):
                return sock
    return None


def client_gone_probe(environ: Mapping[str, Any]) -> Callable[[], bool] | None:
    """A function answering True once the request's client has gone; None if unknowable."""
    sock = client_socket(environ)
    return None if sock is None else _Probe(sock.fileno)


class _Probe:
    """Peeks at one connection; once gone, always gone (the answer never flips back)."""

    __slots__ = ("_fileno", "_gone")

    def __init__(self, fileno: Callable[[], int]) -> None:
        self._fileno = fileno
        self._gone = False

    def __call__(self) -> bool:
        if self._gone:
            return True
        try:
            fd = self._fileno()
            if fd < 0:
                raise OSError("socket closed")
            raw = _socket.socket(fileno=fd)
            try:
                data = raw.recv(1, _PEEK)
            finally:
                raw.detach()  # the descriptor stays the server's
        except (BlockingIOError, InterruptedError):
            return False  # nothing to read: the client is there and waiting
        except OSError:
            self._gone = True  # reset, or the socket was closed under us
            return True
        # b"": the client closed its side. Bytes: a pipelined request, so it is still there.
        self._gone = data == b""
        return self._gone
