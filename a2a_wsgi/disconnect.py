"""Telling whether the client of a WSGI request has hung up.

WSGI gives an application no disconnect signal while it computes a response;
only a write fails. The servers we run under expose the connection's socket
(gunicorn as ``gunicorn.socket``, werkzeug as ``werkzeug.socket``), and a
non-blocking peek at it tells: an orderly close reads as zero bytes, a reset
as an error, a live idle client as "would block".
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["client_gone_probe"]

_SOCKET_KEYS = ("gunicorn.socket", "werkzeug.socket")
_PEEK = socket.MSG_PEEK | getattr(socket, "MSG_DONTWAIT", 0)


def client_gone_probe(environ: Mapping[str, Any]) -> Callable[[], bool] | None:
    """A function answering True once the request's client has gone; None if unknowable."""
    for key in _SOCKET_KEYS:
        sock = environ.get(key)
        if isinstance(sock, socket.socket):
            return _Probe(sock)
    return None


class _Probe:
    """Peeks at one connection; once gone, always gone (the answer never flips back)."""

    __slots__ = ("_sock", "_gone")

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._gone = False

    def __call__(self) -> bool:
        if self._gone:
            return True
        try:
            if _PEEK == socket.MSG_PEEK and self._sock.gettimeout() != 0.0:
                return False  # no MSG_DONTWAIT here: a blocking peek could hang the request
            data = self._sock.recv(1, _PEEK)
        except (BlockingIOError, InterruptedError):
            return False  # nothing to read: the client is there and waiting
        except OSError:
            self._gone = True  # reset, or the socket was closed under us
            return True
        # b"": the client closed its side. Bytes: a pipelined request, so it is still there.
        self._gone = data == b""
        return self._gone
