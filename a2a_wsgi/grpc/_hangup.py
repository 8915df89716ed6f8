"""A gRPC stream's end as a socket the runtime can watch, so a held stream costs nothing.

The runtime learns that an SSE client hung up by watching its connection's socket
(:func:`a2a_wsgi._disconnect.watch_hangup`, one selector thread per process) and peeking
at it once it turns readable; a probe it cannot watch is peeked at every second instead.
A gRPC call has no socket of its own (HTTP/2 multiplexes the calls of a connection), and
``context.is_active()`` can only be polled: 1,000 held streams polled once a second cost
a third of a core here while doing nothing. So each stream gets a socket pair: grpcio's
callback for the call's end closes one side, and the other, which the stream's probe
peeks at, then reads end-of-file, exactly as a client's closed connection does.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable

import grpc

from .._disconnect import _Probe

__all__ = ["CallHangup"]

log = logging.getLogger("a2a_wsgi.grpc")


class CallHangup:
    """Tells a stream that its call ended (the client cancelled, its connection dropped,
    a deadline passed). :meth:`close` once the stream is done with :attr:`probe`."""

    __slots__ = ("probe", "_lock", "_reader", "_writer")

    def __init__(self, context: grpc.ServicerContext) -> None:
        self._lock = threading.Lock()  # the call's end and close() may race: close once
        self._reader: socket.socket | None = None
        self._writer: socket.socket | None = None
        #: What the runtime calls to ask whether the client has gone.
        self.probe: Callable[[], bool] = lambda: not context.is_active()
        try:
            self._reader, self._writer = socket.socketpair()
        except OSError as exc:  # out of descriptors: the runtime polls the call instead
            log.warning("gRPC stream watched by polling: %s", exc)
            return
        self.probe = _Probe(self._reader.fileno)
        if not context.add_callback(self._ended):
            self._ended()  # the call has already ended

    def _ended(self) -> None:
        with self._lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()

    def close(self) -> None:
        self._ended()
        with self._lock:
            reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()
