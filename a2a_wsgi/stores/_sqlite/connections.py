"""SQLite connections: one per thread (or greenlet) while it works, pooled after it ends.

sqlite3 connections are shared neither across threads nor across a fork, so
each thread (or greenlet) uses its own and a forked worker opens new ones.
Each open connection costs two descriptors (the file and its WAL) and its page
cache, so what is open is bounded by work in flight, not by work done: when a
thread or greenlet ends its connection goes back to a small idle pool (closed
when the pool is full) and the next one takes it from there. Under gthread the
threads live as long as the worker, so there is one connection per thread;
under gevent every request is a new greenlet, and the pool keeps
:data:`IDLE_CONNECTIONS` of them open between requests.

A writer that finds the write lock taken waits for it. With OS threads that
wait is SQLite's own busy handler (``busy_timeout``), inside C. Under gevent
that would stall every request of the worker for as long as another process
holds the lock, so there the busy handler is off and the wait is a Python
loop of cooperative sleeps, bounded by the same ``busy_timeout``.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

from ..._concurrency import cooperative

__all__ = ["IDLE_CONNECTIONS", "Connections", "SQLiteBase"]

_BACKOFF_FIRST, _BACKOFF_MAX = 0.001, 0.05
#: Connections kept open, per store and process, for threads or greenlets still to come.
IDLE_CONNECTIONS = 8
#: Page cache of each connection, KiB. SQLite's default (2,000 KiB) fills as the file grows
#: and stays filled for the connection's life; under gthread every thread keeps one, so a
#: worker of 16 threads grew by some 25 MB in a soak before levelling off. The file's pages
#: stay in the OS page cache; this one holds the hot b-tree pages.
CACHE_KIB = 512


class _Held:
    """A thread's (or greenlet's) connection, in that thread's ``threading.local``.

    When the thread or greenlet ends its locals are dropped, and with them this
    object: its finalizer hands the connection back to the pool.
    """

    __slots__ = ("conn", "__weakref__")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn


class Connections:
    """The connections of one store to one file."""

    def __init__(self, path: str, *, busy_timeout: float,
                 idle: int = IDLE_CONNECTIONS) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self.idle_limit = idle
        self._local = threading.local()
        # deque and WeakSet, no lock: a finalizer may run in the middle of any
        # code of this thread (a lock taken there would deadlock); appends and
        # pops of a deque are atomic.
        self._idle: deque[sqlite3.Connection] = deque()
        self._held: weakref.WeakSet[_Held] = weakref.WeakSet()
        self._pid = os.getpid()
        self._closed = False

    def get(self) -> sqlite3.Connection:
        """This thread's connection: the one it holds, an idle one, or a new one."""
        if self._pid != os.getpid():
            # A forked child: the parent's connections are not ours to use or close.
            self._pid, self._local = os.getpid(), threading.local()
            self._idle, self._held = deque(), weakref.WeakSet()
        held: _Held | None = getattr(self._local, "held", None)
        if held is not None and self._closed:
            del self._local.held  # closed by its finalizer; _take raises below
            held = None
        if held is None:
            held = _Held(self._take())
            weakref.finalize(held, self._give_back, held.conn, self._pid)
            self._held.add(held)
            self._local.held = held
        return held.conn

    def open_count(self) -> int:
        """Connections open now (held by a thread or idle), for tests and soak checks."""
        return len(self._idle) + len(self._held)

    def _take(self) -> sqlite3.Connection:
        if self._closed:
            raise RuntimeError("the store is closed")
        try:
            return self._idle.pop()
        except IndexError:
            return self._open()

    def _give_back(self, conn: sqlite3.Connection, pid: int) -> None:
        """Called when the thread holding ``conn`` has ended: pool it or close it."""
        if pid != os.getpid() or pid != self._pid:
            return  # a connection of the process we forked from
        try:
            if conn.in_transaction:
                conn.rollback()  # a thread that died mid-transaction
            if not self._closed and len(self._idle) < self.idle_limit:
                self._idle.append(conn)
                return
            conn.close()
        except sqlite3.Error:
            pass

    def _open(self) -> sqlite3.Connection:
        waits_in_c = not cooperative()
        busy_ms = int(self.busy_timeout * 1000) if waits_in_c else 0
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                               timeout=busy_ms / 1000)
        conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
        self._retry_busy(lambda: conn.execute("PRAGMA journal_mode = WAL"))
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        return conn

    def begin(self, conn: sqlite3.Connection, statement: str) -> None:
        """Start a transaction, waiting for the lock as this process's model allows."""
        self._retry_busy(lambda: conn.execute(statement))

    def _retry_busy(self, run: Callable[[], object]) -> None:
        """``run()``; when SQLite answers "busy" (only with its own wait off), sleep and retry
        until ``busy_timeout`` has passed, then let the error through."""
        deadline = time.monotonic() + self.busy_timeout
        pause = _BACKOFF_FIRST
        while True:
            try:
                run()
                return
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(pause)  # a greenlet switch under gevent
            pause = min(pause * 2, _BACKOFF_MAX)

    def close(self) -> None:
        """Close the idle connections and this thread's; later use raises.

        A connection another thread holds may be in the middle of a statement, and
        closing it under that thread crashes the process (sqlite3 does not guard
        it), so that thread closes it itself: when it ends, or at its next
        :meth:`get`.
        """
        self._closed = True
        while self._idle:
            _quietly_close(self._idle.pop())
        if self._pid == os.getpid() and getattr(self._local, "held", None) is not None:
            del self._local.held  # its finalizer runs now and closes it (the store is closed)


def _quietly_close(conn: sqlite3.Connection) -> None:
    try:
        conn.close()
    except sqlite3.Error:
        pass


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc)
    return "locked" in text or "busy" in text


class SQLiteBase:
    """What every part of the SQLite store stands on: the file and its transactions."""

    def __init__(self, path: str, *, busy_timeout: float) -> None:
        self.path = path
        self._connections = Connections(path, busy_timeout=busy_timeout)

    def _conn(self) -> sqlite3.Connection:
        return self._connections.get()

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        """One write transaction, holding the database's write lock from the start."""
        return self._transaction("BEGIN IMMEDIATE", on_error="ROLLBACK")

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        """One consistent snapshot for several SELECTs (nothing to undo: ended alike)."""
        return self._transaction("BEGIN", on_error="COMMIT")

    @contextmanager
    def _transaction(self, begin: str, *, on_error: str) -> Iterator[sqlite3.Connection]:
        """A transaction started by ``begin``, committed, or ended by ``on_error`` on an error."""
        conn = self._conn()
        self._connections.begin(conn, begin)
        try:
            yield conn
        except BaseException:
            conn.execute(on_error)
            raise
        conn.execute("COMMIT")

    def close(self) -> None:
        self._connections.close()
