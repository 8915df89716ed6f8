"""Parking: a held stream without a greenlet of its own, under gunicorn's gevent worker.

Under that worker a connection is served by a greenlet, and a stream that waits for
its task's next event keeps it: the greenlet, its frame stack and the C stack it
saves at every switch, and gunicorn's objects for the connection, well over half
of what a held stream costs. A stream *parks* instead, through the core's
:class:`~a2a_core._service.StreamHolder` seam:

1. :func:`offer` (``A2AApp.__call__``): where the server can hand a connection over
   (:attr:`~a2a_wsgi._process.ServerInfo.parks_streams`, announced at worker boot for
   gunicorn's gevent worker calling the app itself; over plain HTTP/1.x, with
   gunicorn's own ``start_response``) the request gets a :class:`Park`, its stream
   holder (:func:`stream_holder` puts it in the ``HttpRequest``).
2. A stream that sleeps between items (a subscription, in the runtime) takes the
   offer (:meth:`Park.hold`) when it is made. Asleep, it sets nothing but its
   wakeup (this Park) to be set, and yields :data:`~a2a_core._service.IDLE`, framed
   as an empty write, instead of waiting.
3. :meth:`Park.drive` (``A2AApp.__call__`` again) writes a held stream's answer
   through gunicorn's response until that first empty write, then takes the
   connection over and ends gunicorn's handler for it. When the Park is set (the
   task moved, a heartbeat or quiet deadline came, the client's socket turned
   readable, the server stops), one of a few shared greenlets resumes the stream's
   body and sends its chunks without blocking; a write the socket cannot take now
   finishes in a greenlet of its own (the stalled-write watch still cuts it).

A parked stream's connection closes when the stream ends (gunicorn's handler,
which would read the next request on it, has gone), so its headers say
``Connection: close``. At exit the process ends its parked streams cleanly before
it goes (:func:`_drain`). Everything gunicorn-specific is in
:mod:`a2a_wsgi._gunicorn_internals`; docs/streaming.md has the whole path.
"""

from __future__ import annotations

import atexit
import collections
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from a2a_core._service import StreamHolder

from ._gunicorn_internals import Connection, gunicorn_response, handed_over
from ._process import announced

__all__ = ["Park", "offer", "stream_holder"]

log = logging.getLogger("a2a_wsgi.streams")

#: The environ key under which a request the server may hand over carries its Park.
HOLDER_KEY = "a2a.stream_holder"
#: Greenlets that resume parked streams (a write that would block moves to its own).
RESUMERS = 4
#: Seconds a stopping process waits for its parked streams to end.
DRAIN_TIMEOUT = 5.0

_OFFERED, _DECLINED, _RUNNING, _PARKED, _QUEUED, _ENDED = range(6)


def offer(environ: dict[str, Any], start_response: object) -> Park | None:
    """A Park for this request when the server lets its connection be handed over
    (kept in ``environ`` for :func:`stream_holder`), else None."""
    info = announced()
    if info is None or not info.parks_streams:
        return None
    response = gunicorn_response(environ, start_response)
    if response is None:
        return None
    park = environ[HOLDER_KEY] = Park(response)
    return park


def stream_holder(environ: Mapping[str, Any]) -> StreamHolder | None:
    """The request's offer to hold its stream (:func:`offer`), for its ``HttpRequest``."""
    holder: StreamHolder | None = environ.get(HOLDER_KEY)
    return holder


class _Drained:
    """What gunicorn gets for a stream that ended before it slept: nothing left to write,
    and ``close()`` for the body."""

    __slots__ = ("close",)

    def __init__(self, body: Iterable[bytes]) -> None:
        self.close = getattr(body, "close", None) or (lambda: None)

    def __iter__(self) -> Iterator[bytes]:
        return iter(())


class Park(Connection):
    """One request's offer to hold its stream (a :class:`~a2a_core._service.StreamHolder`)
    and, once taken up, the stream's :class:`~a2a_core._service.Wakeup`: set while the
    stream is parked, it has the stream resumed. Its connection's gunicorn side is
    :class:`~a2a_wsgi._gunicorn_internals.Connection`'s."""

    __slots__ = ("_woken", "_state", "_body", "_chunks")

    _body: Iterable[bytes]  # these two from drive() on (most requests never get there)
    _chunks: Iterator[bytes]

    def __init__(self, response: Any) -> None:
        Connection.__init__(self, response)
        self._woken = False
        self._state = _OFFERED

    # -- the seam: StreamHolder, then Wakeup ---------------------------------------------

    def hold(self) -> Park | None:
        """The stream takes the offer: the app drives it, and it sleeps on this Park.
        None once :meth:`drive` has found the offer not taken (gunicorn writes it)."""
        if self._state == _OFFERED:
            self._state = _RUNNING
        return None if self._state == _DECLINED else self

    def set(self) -> None:
        if self._woken:
            return
        self._woken = True
        if self._state == _PARKED:
            self._state = _QUEUED
            _resumers().schedule(self)

    def clear(self) -> None:
        self._woken = False

    # -- driving the body ------------------------------------------------------------------

    def drive(self, body: Iterable[bytes]) -> Iterable[bytes]:
        """The answer for gunicorn: ``body`` itself unless a stream took this offer; else
        ``body`` written through gunicorn's response until it sleeps, then the
        connection taken over (raises to end gunicorn's handler). A body that ends
        before it sleeps is gunicorn's to finish."""
        if self._state == _OFFERED:
            self._state = _DECLINED
            return body
        # It will park, and its connection close after it: the headers say so
        # (Connection: close) rather than promise a next request on it.
        self.close_after()
        chunks = iter(body)
        try:
            while True:
                try:
                    chunk = next(chunks)
                except StopIteration:
                    return _Drained(body)
                if chunk:
                    self.write(chunk)
                elif not self._woken:
                    break  # asleep: hand it over
            self.take()
        except BaseException:
            _close(body)
            raise
        self._body, self._chunks = body, chunks
        _resumers().opened(self)
        self._state = _PARKED
        if self._woken:  # (woken in between: resume at once)
            self._state = _QUEUED
            _resumers().schedule(self)
        raise handed_over()

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
                    rest = self.send_now(chunk)
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
            self.send_all(rest)
        except OSError:
            self._end(complete=False)
            return
        self.resume()

    def _end(self, *, complete: bool) -> None:
        """The body closed, then the response's end (its last chunk when it ended well)
        and the connection's."""
        self._state = _ENDED
        _close(self._body)
        self._body, self._chunks = (), iter(())
        self.end(complete=complete)
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
    from ._runtime._service import stop_all_streams

    resumers = _resumers()
    if not resumers.open_count():
        return
    stop_all_streams()
    deadline = time.monotonic() + DRAIN_TIMEOUT
    while resumers.open_count() and time.monotonic() < deadline:
        time.sleep(0.05)
