"""Streams whose client stopped reading are cut, so a slow consumer holds its share for
seconds, not for ever.

A WSGI server writes each item a stream yields and asks for the next one once
the write is done. An SSE client that stops reading fills the socket's
buffers, then the write blocks: the item being written (a task snapshot can be
megabytes), the greenlet or thread, its store connection and its stream place
stay held for as long as the client stays connected. One watcher per process
looks at every open stream each :data:`CHECK_EVERY` seconds; a stream stuck in
one write for longer than its limit has its socket shut down. The write then
fails as a broken pipe (gunicorn drops those quietly), the stream closes, and
everything it held goes. A stream's socket also gets a send buffer of
:data:`STREAM_SEND_BUFFER` bytes instead of the kernel's autotuned one (up to
4 MiB on Linux): it bounds the kernel memory each stalled client holds, and
makes a stall show within a few events rather than after megabytes. The client
has every event up to the last one it read in full, each with its SSE id:
reconnecting with ``Last-Event-ID`` resumes from there (``a2a_client`` does).
"""

from __future__ import annotations

import _socket
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ._disconnect import client_socket
from ._release_memory import release_memory

__all__ = ["CHECK_EVERY", "DEFAULT_STALLED_WRITE_TIMEOUT", "STREAM_SEND_BUFFER", "StalledWrites"]

log = logging.getLogger("a2a_wsgi.streams")

#: Seconds between the watcher's looks at the open streams.
CHECK_EVERY = 0.5
#: Seconds one write may stay stuck before its stream is cut (``stalled_write_timeout``):
#: longer than any pause of a client that is reading, short enough that a few hundred
#: clients that stopped cost memory for half a minute.
DEFAULT_STALLED_WRITE_TIMEOUT = 30.0
#: Streams that must have ended, when the last open one has gone, for the memory they
#: used to be handed back (a full collection and a heap trim cost milliseconds).
RELEASE_AFTER = 50
#: Seconds without an open stream before that release: a busy worker whose short streams
#: leave it at none for an instant now and then must not pay a full collection each time.
RELEASE_QUIET = 3.0
#: SO_SNDBUF of a stream's socket (Linux doubles it for its bookkeeping): room for a
#: bandwidth-delay product of 100 ms at 40 Mbit/s.
STREAM_SEND_BUFFER = 512 * 1024


class _Watched:
    """A stream's body that notes when it handed the server an item still being written."""

    __slots__ = ("_body", "_owner", "sock", "writing_since")

    def __init__(self, body: Iterator[bytes], sock: socket.socket,
                 owner: StalledWrites) -> None:
        self._body, self.sock, self._owner = body, sock, owner
        self.writing_since: float | None = None

    def __iter__(self) -> _Watched:
        return self

    def __next__(self) -> bytes:
        self.writing_since = None  # the previous item is written: the server asks for more
        item = next(self._body)
        if item:  # (empty: the stream sleeps, a parked one with nothing being written)
            self.writing_since = time.monotonic()
        return item

    def close(self) -> None:
        self.writing_since = None
        self._owner.forget(self)
        close = getattr(self._body, "close", None)
        if close is not None:
            close()


class StalledWrites:
    """Cuts the streams of this process stuck in one write for more than ``limit`` seconds."""

    def __init__(self, limit: float, *, release: Callable[[], None] = release_memory) -> None:
        self.limit = limit
        #: What hands the memory of ended streams back (a full collection and a heap trim).
        self.release = release
        self._open: set[_Watched] = set()
        self._lock = threading.Lock()
        self._watcher: threading.Thread | None = None
        self._pid = os.getpid()
        self._ended = 0  # streams ended since memory was last released
        self._opened = 0  # streams opened in this process (the watcher sees short ones by it)

    def watch(self, body: Iterator[bytes], environ: Mapping[str, Any]) -> Iterator[bytes]:
        """``body``, watched; as it is when the server gives no socket to cut."""
        sock = client_socket(environ)
        if sock is None:
            return body
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, STREAM_SEND_BUFFER)
        except (OSError, AttributeError):
            pass  # not a TCP socket: its own buffering applies
        watched = _Watched(body, sock, self)
        with self._lock:
            self._open.add(watched)
            self._opened += 1
            if self._pid != os.getpid():  # forked: the parent's watcher is not running here
                self._pid, self._watcher = os.getpid(), None
            if self._watcher is None:
                self._watcher = threading.Thread(target=self._run, daemon=True,
                                                 name="a2a-stalled-writes")
                self._watcher.start()
        return watched

    def forget(self, watched: _Watched) -> None:
        with self._lock:
            if watched in self._open:
                self._open.discard(watched)
                self._ended += 1

    def open_count(self) -> int:
        with self._lock:
            return len(self._open)

    def _run(self) -> None:
        """Look every CHECK_EVERY seconds while streams are open; end once none is (after
        RELEASE_QUIET seconds without one when there is memory to release)."""
        quiet_since: float | None = None
        opened = -1
        while True:
            time.sleep(CHECK_EVERY)
            with self._lock:
                streams = list(self._open)
                if streams or opened != self._opened:  # (one may have come and gone)
                    quiet_since, opened = None, self._opened
                else:
                    now = time.monotonic()
                    quiet_since = now if quiet_since is None else quiet_since
                    release = self._ended >= RELEASE_AFTER
                    if release and now - quiet_since < RELEASE_QUIET:
                        continue  # streams may come back at once: wait before collecting
                    self._watcher = None
                    if release:
                        self._ended = 0
                    break
            now = time.monotonic()
            for watched in streams:
                since = watched.writing_since
                if since is not None and now - since > self.limit:
                    self._cut(watched)
        if release:
            # What the ended streams used is free but still the process's (free pages in
            # the C heap, cycles not yet collected): an idle worker allocates nothing that
            # would reuse it, so after hundreds of streams left at once the worker would
            # stay at its peak until traffic came back.
            self.release()

    def _cut(self, watched: _Watched) -> None:
        self.forget(watched)
        log.info("stream cut: its client read nothing for %.0f s", self.limit)
        # Through the C-level socket on the same descriptor: gevent's own shutdown() would
        # wake the blocked writer with "file descriptor closed" (logged as an error) rather
        # than let its next send fail as a broken pipe.
        try:
            raw = _socket.socket(fileno=watched.sock.fileno())
        except (OSError, ValueError):
            return  # already closed (a closed socket's fileno() is -1)
        try:
            raw.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already gone
        finally:
            raw.detach()  # the descriptor stays the server's, closed by it
