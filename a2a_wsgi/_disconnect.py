"""Telling whether the client of a WSGI request has hung up.

WSGI gives an application no disconnect signal while it computes a response;
only a write fails. The servers we run under expose the connection's socket
(gunicorn as ``gunicorn.socket``, werkzeug as ``werkzeug.socket``), and a
non-blocking peek at it tells: an orderly close reads as zero bytes, a reset
as an error, a live idle client as "would block".

The peek goes through the C-level ``_socket`` on the same descriptor: a
Python socket with a timeout would first wait for data, and gevent's
cooperative socket waits for readability instead of answering "would block".

A stream that waits need not peek on a timer: :func:`watch_hangup` calls back
once the connection turns readable (a close, a reset, or a pipelined request),
and the stream peeks then. Under gevent that is an I/O watcher on the worker's
event loop; with threads, one selector thread per process watches every
waiting stream's socket. Either way an idle stream costs nothing until then.
"""

from __future__ import annotations

import _socket
import logging
import os
import selectors
import socket
import threading
from collections.abc import Callable, Mapping
from typing import Any, cast

from ._concurrency import cooperative

__all__ = ["CLIENT_GONE_KEY", "HangupWatch", "client_gone_probe", "client_socket", "hangup_fd",
           "watch_hangup"]

log = logging.getLogger("a2a_wsgi.streams")

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


#: Where a request that has no socket of its own (a gRPC call) keeps its probe.
CLIENT_GONE_KEY = "a2a.client_gone"


def client_gone_probe(environ: Mapping[str, Any]) -> Callable[[], bool] | None:
    """A function answering True once the request's client has gone; None if unknowable."""
    own = environ.get(CLIENT_GONE_KEY)
    if callable(own):
        return cast("Callable[[], bool]", own)
    sock = client_socket(environ)
    return None if sock is None else _Probe(sock.fileno)


class _Probe:
    """Peeks at one connection; once gone, always gone (the answer never flips back)."""

    __slots__ = ("_fileno", "_gone")

    def __init__(self, fileno: Callable[[], int]) -> None:
        self._fileno = fileno
        self._gone = False

    def fileno(self) -> int:
        """The connection's descriptor (-1 once the server closed it)."""
        return self._fileno()

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


def hangup_fd(client_gone: Callable[[], bool] | None) -> int | None:
    """The descriptor a :func:`client_gone_probe` peeks at, else None (cannot be watched)."""
    if not isinstance(client_gone, _Probe):
        return None
    try:
        fd = client_gone.fileno()
    except (OSError, ValueError):
        return None
    return fd if fd >= 0 else None


class HangupWatch:
    """Calls ``callback`` once, when a connection turns readable, while started.

    ``fired`` says it did. Readable is not gone: the caller peeks
    (:func:`client_gone_probe`); a pipelined request keeps it readable, so such
    a connection cannot be watched again and is peeked at on a timer instead.
    :meth:`stop` and :meth:`start` pause and resume it (a stream is watched
    while it sleeps); :meth:`cancel` ends it.
    """

    __slots__ = ("fd", "fired", "_callback", "_io", "_readable_cb")

    def __init__(self, fd: int, callback: Callable[[], object]) -> None:
        self.fd, self.fired, self._callback = fd, False, callback
        self._io: Any = None
        self._readable_cb: Callable[[], None] | None = None

    def _readable(self) -> None:
        self.fired = True
        try:
            self._callback()
        except Exception:
            log.exception("hang-up callback raised")

    def _in_hub(self) -> None:
        """gevent: the watcher's callback, in the hub (which must not block)."""
        import gevent  # type: ignore[import-untyped]

        self._io.stop()  # once: a pipelined request would keep it readable
        gevent.spawn(self._readable)

    def start(self) -> None:
        if self.fired:
            return
        try:
            if self._io is not None:
                self._io.start(self._readable_cb)
            else:
                _selector().add(self)
        except (OSError, ValueError, KeyError):
            self.fired = True  # cannot be watched now: the caller peeks

    def stop(self) -> None:
        if self._io is not None:
            self._io.stop()
        else:
            _selector().remove(self)

    def cancel(self) -> None:
        if self._io is not None:
            self._io.close()
            self._io = self._readable_cb = None
        else:
            _selector().remove(self)


def watch_hangup(fd: int, callback: Callable[[], object]) -> HangupWatch | None:
    """Call ``callback`` (from another greenlet or thread) once ``fd`` turns readable.

    None when the descriptor cannot be watched (the caller peeks on a timer then).
    """
    watch = HangupWatch(fd, callback)
    try:
        if cooperative():
            _gevent_start(watch)
        else:
            _selector().add(watch)
    except (OSError, ValueError):
        return None
    return watch


def _gevent_start(watch: HangupWatch) -> None:
    """An I/O watcher on the hub's loop; its callback runs in the hub, which must not
    block, so what it wakes is woken from a fresh greenlet."""
    import gevent

    watch._io = gevent.get_hub().loop.io(watch.fd, 1)
    watch._readable_cb = watch._in_hub
    watch._io.start(watch._in_hub)


_LIVE_SELECTORS: tuple[type[selectors.BaseSelector], ...] = tuple(
    getattr(selectors, name) for name in ("EpollSelector", "KqueueSelector")
    if hasattr(selectors, name))


class _Selector:
    """One thread per process waiting on every watched descriptor at once."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self._lock = threading.Lock()
        self._selector = selectors.DefaultSelector()
        self._wake_r = self._wake_w = None
        # epoll and kqueue see a descriptor registered while they wait; poll() and select()
        # need waking up to look again (a socket pair, two more descriptors).
        if not isinstance(self._selector, _LIVE_SELECTORS):
            self._wake_r, self._wake_w = socket.socketpair()
            self._wake_r.setblocking(False)
            self._wake_w.setblocking(False)
            self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._thread: threading.Thread | None = None

    def add(self, watch: HangupWatch) -> None:
        with self._lock:
            self._selector.register(watch.fd, selectors.EVENT_READ, watch)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="a2a-hangups")
                self._thread.start()
        self._wake()

    def remove(self, watch: HangupWatch) -> None:
        with self._lock:
            key = self._selector.get_map().get(watch.fd)
            if key is not None and key.data is watch:
                self._selector.unregister(watch.fd)

    def _wake(self) -> None:
        if self._wake_w is None:
            return
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass  # its buffer is full: the thread has a wake-up pending anyway

    def _run(self) -> None:
        while True:
            try:
                ready = self._selector.select()
            except OSError:  # a descriptor closed while watched (select() and poll() only)
                self._drop_closed()
                continue
            fired = []
            with self._lock:
                for key, _ in ready:
                    if key.data is None:
                        assert self._wake_r is not None
                        try:
                            while self._wake_r.recv(512):
                                pass
                        except OSError:
                            pass
                        continue
                    current = self._selector.get_map().get(key.fd)
                    if current is not None and current.data is key.data:
                        self._selector.unregister(key.fd)  # once, as under gevent
                        fired.append(key.data)
            for watch in fired:
                watch._readable()


    def _drop_closed(self) -> None:
        with self._lock:
            for fd, key in list(self._selector.get_map().items()):
                try:
                    os.fstat(key.fd)
                except OSError:
                    self._selector.unregister(fd)
                    if isinstance(key.data, HangupWatch):
                        key.data.fired = True


_SELECTORS: list[_Selector] = []
_SELECTORS_LOCK = threading.Lock()


def _selector() -> _Selector:
    """This process's selector thread (a forked child starts its own)."""
    with _SELECTORS_LOCK:
        if not _SELECTORS or _SELECTORS[0].pid != os.getpid():
            _SELECTORS[:] = [_Selector()]
        return _SELECTORS[0]
