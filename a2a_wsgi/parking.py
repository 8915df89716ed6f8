"""Held streams without a greenlet each: a sleeping stream hands its connection over.

Under gunicorn's gevent worker a connection is served by a greenlet, and a stream
that waits for its task's next event keeps it: the greenlet, its frame stack and
the C stack it saves at every switch, and gunicorn's objects for the connection,
well over half of what a held stream costs. A stream *parks* instead. Its body
is driven here, not by gunicorn (each chunk still written by gunicorn's response
until the first sleep, headers first); when its producer has nothing to send it
yields :data:`~a2a_core.service.IDLE` (an empty write) instead of sleeping, and
the app ends gunicorn's handler for the connection by raising ``StopIteration``
(gunicorn's async workers close the connection quietly on it). The socket stays
open: a file made from it holds a reference, so gunicorn's ``close()`` only marks
it closed. What the stream sleeps on (this :class:`Park`: its
:class:`~a2a_wsgi.runtime._watches.Sleeper` event) resumes its body from one of
a few shared greenlets when it is set: the task moved, a heartbeat or quiet
deadline came, the client's socket turned readable, or the server stops. Chunks
are then framed here as gunicorn frames them (chunked, or raw for HTTP/1.0) and
sent without blocking; a write the socket cannot take now finishes in a greenlet
of its own (the stalled-write watch still cuts it after its limit).

Only where the server announced it can hand a connection over
(:attr:`~a2a_wsgi.process.ServerInfo.parks_streams`: gunicorn's gevent worker),
over plain HTTP/1.x, with gunicorn's own ``start_response`` (no middleware in
between): elsewhere a stream sleeps in its thread or greenlet as before. A parked
stream's connection is closed when the stream ends (gunicorn's handler, which
would read the next request on it, has gone). At exit the process ends its parked
streams cleanly before it goes (:func:`_drain`).
"""

from __future__ import annotations

import _socket
import atexit
import collections
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .process import announced

__all__ = ["PARK_KEY", "Park", "follows_task", "offer", "parked", "stream_answer"]

log = logging.getLogger("a2a_wsgi.streams")

#: The environ key under which a stream the server may hand over carries its Park.
PARK_KEY = "a2a.park"
#: Greenlets that resume parked streams (a write that would block moves to its own).
RESUMERS = 4
#: Seconds a stopping process waits for its parked streams to end.
DRAIN_TIMEOUT = 5.0

_PARKED, _QUEUED, _RUNNING, _ENDED = range(4)
_LAST_CHUNK = b"0\r\n\r\n"


def offer(environ: Mapping[str, Any], client_gone: Any) -> None:
    """Note on the request's connection probe that the server could hand a stream of
    this connection over (a stream that follows a task then gets a Park)."""
    info = announced()
    if info is None or not info.parks_streams or not hasattr(client_gone, "park"):
        return
    sock = environ.get("gunicorn.socket")
    if sock is None or hasattr(sock, "getpeercert") or environ.get("HTTP_VERSION") == "2":
        return  # TLS (bytes must go through the SSL object) or HTTP/2 (framed streams)
    client_gone.park = True


def follows_task(client_gone: Any) -> None:
    """The connection's stream follows a task (it sleeps between events): it parks when
    the connection was offered, so it gets its Park now, before its first write."""
    if getattr(client_gone, "park", None) is True:
        client_gone.park = Park()


def parked(client_gone: Any) -> Park | None:
    """The Park driving this connection's stream, else None (it sleeps where it runs)."""
    park = getattr(client_gone, "park", None)
    return park if isinstance(park, Park) and park.driving else None


def stream_answer(environ: dict[str, Any], client_gone: Any) -> None:
    """The answer is a stream: the app drives it (``environ[PARK_KEY]``) when it has a
    Park (it follows a task); any other stream is the server's to write as ever."""
    park = getattr(client_gone, "park", None)
    if isinstance(park, Park):
        environ[PARK_KEY] = park


class _Drained:
    """What gunicorn gets for a stream that ended before it slept: nothing left to write,
    and ``close()`` for the body."""

    __slots__ = ("close",)

    def __init__(self, body: Iterable[bytes]) -> None:
        self.close = getattr(body, "close", None) or (lambda: None)

    def __iter__(self) -> Iterator[bytes]:
        return iter(())


class Park:
    """One stream the server may hand over, and what its producer sleeps on.

    ``set()``/``clear()``/``is_set()`` make it the stream's sleep event: set while
    it is parked, it has the stream resumed. ``driving`` is True once the body is
    driven here (only then does the producer yield IDLE instead of sleeping).
    """

    __slots__ = ("driving", "_woken", "_state", "_body", "_chunks", "_sock", "_hold",
                 "_chunked")

    def __init__(self) -> None:
        self.driving = False
        self._woken = False
        self._state = _RUNNING
        self._body: Iterable[bytes] = ()
        self._chunks: Iterator[bytes] = iter(())
        self._sock: Any = None
        self._hold: Any = None
        self._chunked = False

    # -- the stream's sleep event ----------------------------------------------------------

    def set(self) -> None:
        if self._woken:
            return
        self._woken = True
        if self._state == _PARKED:
            self._state = _QUEUED
            _resumers().schedule(self)

    def clear(self) -> None:
        self._woken = False

    def is_set(self) -> bool:
        return self._woken

    def wait(self, timeout: float | None = None) -> bool:
        raise RuntimeError("a parked stream is resumed when woken, never waited for")

    # -- driving the body ------------------------------------------------------------------

    def drive(self, body: Iterable[bytes], start_response: Any) -> Iterable[bytes]:
        """Write ``body`` through gunicorn's response until it sleeps, then take the
        connection over (raises StopIteration to gunicorn). A body that ends first is
        gunicorn's to finish; a ``start_response`` not gunicorn's own leaves it all to it."""
        response: Any = getattr(start_response, "__self__", None)
        kind = type(response)
        if kind.__name__ != "Response" or kind.__module__ != "gunicorn.http.wsgi":
            return body
        self.driving = True
        # It will park, and its connection close after it: the headers say so
        # (Connection: close) rather than promise a next request on it.
        response.force_close()
        chunks = iter(body)
        try:
            while True:
                try:
                    chunk = next(chunks)
                except StopIteration:
                    return _Drained(body)
                if chunk:
                    response.write(chunk)
                elif not self._woken:
                    break  # asleep: hand it over
            response.send_headers()  # (sent with the first chunk, unless there was none)
            sock = response.sock
            # a file made from the socket: the descriptor outlives gunicorn's close()
            self._hold = sock.makefile("wb", buffering=0)
        except BaseException:
            _close(body)
            raise
        self._body, self._chunks, self._sock = body, chunks, sock
        self._chunked = bool(response.chunked)
        _resumers().opened(self)
        self._state = _PARKED
        if self._woken:  # (woken in between: resume at once)
            self._state = _QUEUED
            _resumers().schedule(self)
        raise StopIteration("the stream is parked: its connection is the process's now")

    def resume(self) -> None:
        """Run the body until it sleeps again or ends (from a resumer's greenlet)."""
        self._state = _RUNNING
        chunks = self._chunks
        while True:
            try:
                chunk = next(chunks)
            except StopIteration:
                self._end(complete=True)
                return
            except Exception:
                log.exception("a parked stream failed")
                self._end(complete=False)
                return
            if chunk:
                try:
                    rest = self._send(self._framed(chunk))
                except OSError:
                    self._end(complete=False)  # the client is gone (or the stream was cut)
                    return
                if rest:  # the socket takes no more now: the rest from a greenlet of its own
                    threading.Thread(target=self._finish, args=(rest,), daemon=True,
                                     name="a2a-parked-write").start()
                    return
            elif not self._woken:
                self._state = _PARKED
                return

    def _finish(self, rest: bytes) -> None:
        try:
            self._sock.sendall(rest)
        except OSError:
            self._end(complete=False)
            return
        self.resume()

    def _framed(self, data: bytes) -> bytes:
        """``data`` as gunicorn frames a write: one chunk, or as it is (HTTP/1.0)."""
        return b"%X\r\n%s\r\n" % (len(data), data) if self._chunked else data

    def _send(self, data: bytes) -> bytes:
        """Send what the socket takes now, without waiting; what it did not take."""
        try:
            sent = self._sock.send(data, _socket.MSG_DONTWAIT, timeout=0.0)  # gevent's socket
        except (BlockingIOError, InterruptedError):
            sent = 0
        return data[sent:]

    def _end(self, *, complete: bool) -> None:
        """The response's end (its last chunk, when it ended well), the body closed, then
        the connection."""
        self._state = _ENDED
        try:
            if complete and self._chunked:
                rest = self._send(_LAST_CHUNK)
                if rest:
                    self._sock.sendall(rest)
        except OSError:
            pass  # gone: the client resumes with Last-Event-ID
        _close(self._body)
        try:
            self._hold.close()  # gunicorn closed its socket: this closes the connection
        except OSError:
            pass
        self._body, self._chunks, self._sock, self._hold = (), iter(()), None, None
        _resumers().closed(self)


def _close(body: Iterable[bytes]) -> None:
    close = getattr(body, "close", None)
    if close is None:
        return
    try:
        close()
    except Exception:
        log.exception("closing a stream failed")


class _Resumers:
    """This process's parked streams, and the greenlets that resume them when woken."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self._queue: collections.deque[Park] = collections.deque()
        self._ready = threading.Event()
        self._workers = 0
        self._open: set[Park] = set()
        self._drain_registered = False

    def opened(self, park: Park) -> None:
        self._open.add(park)
        if not self._drain_registered:
            self._drain_registered = True
            atexit.register(_drain)

    def closed(self, park: Park) -> None:
        self._open.discard(park)

    def open_count(self) -> int:
        return len(self._open)

    def schedule(self, park: Park) -> None:
        """Have ``park`` resumed (may be called from the hub: never blocks)."""
        self._queue.append(park)
        self._ready.set()
        if self._workers < RESUMERS:
            self._workers += 1
            threading.Thread(target=self._run, daemon=True, name="a2a-resumer").start()

    def _run(self) -> None:
        queue, ready = self._queue, self._ready
        while True:
            ready.wait()
            while queue:
                park = queue.popleft()
                try:
                    park.resume()
                except Exception:
                    log.exception("resuming a parked stream failed")
                del park
                # Let others run after each: gevent polls for I/O (a GetTask) only every 50
                # callbacks, so a resumer must be one short callback, not a batch of them.
                time.sleep(0)
            ready.clear()


_RESUMERS: list[_Resumers] = []


def _resumers() -> _Resumers:
    """This process's resumers (a forked child makes its own)."""
    if not _RESUMERS or _RESUMERS[0].pid != os.getpid():
        _RESUMERS[:] = [_Resumers()]
    return _RESUMERS[0]


def _drain() -> None:
    """At exit: end the parked streams cleanly (stop() wakes them) and wait a little for
    them to write their end, since the worker's own wait counts only gunicorn's handlers."""
    from .runtime._service import stop_all_streams

    resumers = _resumers()
    if not resumers.open_count():
        return
    stop_all_streams()
    deadline = time.monotonic() + DRAIN_TIMEOUT
    while resumers.open_count() and time.monotonic() < deadline:
        time.sleep(0.05)
