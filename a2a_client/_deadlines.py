"""The read timeout bounds the whole header block, not each byte of it.

A socket timeout bounds one ``recv``: a server that trickles its status line and headers a
byte at a time, each inside the read timeout, would hold a call for as long as it likes
(http.client allows 100 header lines of 64 KiB). The requests that go through the
client's own session use :class:`DeadlineAdapter`: its connections arm a
:class:`Watchdog` when they start reading the answer, and once the read timeout has
passed it shuts the socket down; the read then fails as a read timeout. A session the
caller lends keeps its own adapters (and their behaviour).

The timeout of the request under way is handed over in a context variable
(:func:`header_deadline`), so nothing of requests' or urllib3's call signatures changes.
"""

from __future__ import annotations

import contextlib
import contextvars
import heapq
import itertools
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

__all__ = ["DeadlineAdapter", "Handle", "Watchdog", "header_deadline"]

#: An action the watchdog holds: ``[action]``, ``[None]`` once cancelled or run.
Handle = list[Callable[[], None] | None]

_SECONDS: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "a2a_client_header_seconds", default=None)


@contextlib.contextmanager
def header_deadline(seconds: float) -> Iterator[None]:
    """Requests sent inside wait at most ``seconds`` for their whole header block."""
    token = _SECONDS.set(seconds)
    try:
        yield
    finally:
        _SECONDS.reset(token)


class Watchdog:
    """One daemon thread running actions at their times; a cancelled action does not run.

    Cancelled entries wait in the heap for their time, unless they are most of it: then
    it is rebuilt without them (so many calls per second cost no more than live ones).
    """

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Handle]] = []
        self._wake = threading.Condition()
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._cancelled = 0

    def arm(self, seconds: float, action: Callable[[], None]) -> Handle:
        """Run ``action`` in ``seconds``; the handle returned cancels it (:meth:`cancel`)."""
        handle: Handle = [action]
        with self._wake:
            heapq.heappush(self._heap, (time.monotonic() + seconds, next(self._order), handle))
            if self._thread is None or not self._thread.is_alive():  # (also after a fork)
                self._thread = threading.Thread(target=self._run, name="a2a-client-watchdog",
                                                daemon=True)
                self._thread.start()
            self._wake.notify()
        return handle

    def cancel(self, handle: Handle) -> None:
        with self._wake:
            if handle[0] is None:
                return
            handle[0] = None
            self._cancelled += 1
            if self._cancelled > 64 and 2 * self._cancelled > len(self._heap):
                self._heap = [entry for entry in self._heap if entry[2][0] is not None]
                heapq.heapify(self._heap)
                self._cancelled = 0

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._heap:
                    self._wake.wait()
                when, _, handle = self._heap[0]
                left = when - time.monotonic()
                if left > 0:
                    self._wake.wait(left)
                    continue
                heapq.heappop(self._heap)
                action, handle[0] = handle[0], None
                if action is None:
                    self._cancelled -= 1
            if action is not None:
                action()


WATCHDOG = Watchdog()


class _Watched:
    """What both connection classes add: a header read that the watchdog can cut short."""

    sock: socket.socket | None

    def getresponse(self) -> Any:
        seconds = _SECONDS.get()
        if seconds is None:
            return super().getresponse()  # type: ignore[misc]
        lock, state = threading.Lock(), {"reading": True, "cut": False}

        def cut() -> None:
            with lock:
                if state["reading"] and self.sock is not None:
                    state["cut"] = True
                    with contextlib.suppress(OSError):
                        self.sock.shutdown(socket.SHUT_RDWR)

        handle = WATCHDOG.arm(seconds, cut)
        failure: Exception | None = None
        response = None
        try:
            response = super().getresponse()  # type: ignore[misc]
        except Exception as exc:
            failure = exc
        with lock:
            state["reading"] = False
        WATCHDOG.cancel(handle)
        # A cut may also look like a header block ended by EOF: a timeout either way
        # (urllib3 turns it into its ReadTimeoutError).
        if state["cut"]:
            if response is not None:  # (its reader holds the socket open)
                response.close()
            raise TimeoutError(f"no complete header block within {seconds:g}s") from failure
        if failure is not None:
            raise failure
        return response


class WatchedHTTPConnection(_Watched, HTTPConnection):
    pass


class WatchedHTTPSConnection(_Watched, HTTPSConnection):
    pass


class WatchedHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = WatchedHTTPConnection


class WatchedHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = WatchedHTTPSConnection


class DeadlineAdapter(HTTPAdapter):
    """requests' adapter, whose connections bound the header wait (module docstring)."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": WatchedHTTPConnectionPool,
                                                  "https": WatchedHTTPSConnectionPool}
