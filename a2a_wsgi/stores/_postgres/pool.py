"""A small per-process pool of autocommit connections, safe across ``fork``.

Threads borrow a connection for one statement (or one short transaction) and
give it back; at most ``max_idle`` are kept open while idle, so a burst of
threads opens extra connections that are closed when it passes. A process
forked after the pool was used (``gunicorn --preload``) must not touch its
parent's connections: the child disarms them and opens its own.

Connections die while idle (a restart, a failover, ``pg_terminate_backend``,
a relay that went away). Before an idle connection is lent, a zero-timeout
poll asks whether its socket is readable: an idle autocommit session that
never LISTENs has nothing to read unless the server said goodbye (or reset
it), so a readable one is closed, and since what ended one session usually
ended its siblings, every idle connection with it. A connection that breaks
while borrowed empties the idle list the same way. Writes are still never
retried (one may have committed before the connection broke); reads are,
once, unless the database was silent past the deadline.
"""

from __future__ import annotations

import os
import select
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.pq import TransactionStatus

from .schema import Conn
from .watchdog import WATCHDOG

__all__ = ["INHERITED", "DatabaseTimeout", "Pool", "disarm", "looks_alive"]

Rows = list[tuple[Any, ...]]
Params = Sequence[Any] | dict[str, Any]

#: Connections a forked child inherited (disarmed): kept referenced, never used.
INHERITED: list[Conn] = []


def disarm(conn: Conn) -> None:
    """Point an inherited connection's descriptor at /dev/null, atomically (dup2).

    Its socket is shared with the parent: whatever libpq then writes on it
    (Terminate, when it is finalized) goes nowhere instead of ending the
    parent's session, and the descriptor number is never free for another
    file to reuse.
    """
    try:
        fd = conn.pgconn.socket
    except psycopg.OperationalError:
        return  # already closed
    null = os.open(os.devnull, os.O_RDWR)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


class DatabaseTimeout(psycopg.OperationalError):
    """The database did not answer a borrowed connection in time; its socket was cut."""


def looks_alive(conn: Conn) -> bool:
    """Whether an idle connection may still be lent (no I/O beyond a zero-timeout poll).

    Readable means the server closed or reset it (or sent something unasked,
    which an idle pooled session never needs): either way it is not lent.
    """
    if conn.closed or conn.broken:
        return False
    try:
        fd = conn.pgconn.socket
    except psycopg.OperationalError:
        return False
    if hasattr(select, "poll"):  # select.select cannot watch descriptors >= 1024
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLPRI)
        return not poller.poll(0)
    readable, _, _ = select.select([fd], [], [], 0)
    return not readable


class Pool:
    """Connections for the threads of one process (opened by ``connect``).

    ``deadline`` bounds, client side, how long one statement of a borrow may go
    unanswered (None: unbounded); past it the connection is cut and the
    borrower gets :class:`DatabaseTimeout`.
    """

    def __init__(self, connect: Callable[[], Conn], *, max_idle: int,
                 deadline: float | None = None) -> None:
        self.connect = connect
        self._max_idle = max_idle
        self._deadline = deadline
        self._lock = threading.Lock()
        self._idle: list[Conn] = []
        self._pid = os.getpid()
        self._closed = False
        self._on_fork: list[Callable[[], list[Conn]]] = []

    def on_fork(self, callback: Callable[[], list[Conn]]) -> None:
        """Call ``callback`` in a forked child; the connections it returns are disarmed too."""
        self._on_fork.append(callback)

    def check_fork(self) -> None:
        """In a forked child, let go of the parent's connections without touching them."""
        if os.getpid() == self._pid:
            return
        with self._lock:
            if os.getpid() == self._pid:
                return
            inherited, self._idle, self._pid = self._idle, [], os.getpid()
            for callback in self._on_fork:
                inherited += callback()
            for conn in inherited:
                disarm(conn)
            INHERITED.extend(inherited)

    @contextmanager
    def connection(self, *, statements: int | None = 1) -> Iterator[Conn]:
        """Borrow a connection; it goes back to the pool only if healthy and idle.

        The borrow may run ``statements`` statements before the deadline cuts
        it (None: no deadline, for schema upgrades that may wait on a lock).
        """
        self.check_fork()
        conn = self._idle_conn()
        if conn is None:
            conn = self.connect()
        try:
            with self._deadline_for(conn, statements):
                yield conn
        finally:
            self._give_back(conn)

    def _idle_conn(self) -> Conn | None:
        """A live idle connection, or None; a dead one closes every idle connection."""
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None or looks_alive(conn):
            return conn
        self._close_idle(conn)
        return None

    def _close_idle(self, *dead: Conn) -> None:
        """Close ``dead`` and every idle connection: what ended one likely ended them all."""
        with self._lock:
            idle, self._idle = self._idle, []
            mine = os.getpid() == self._pid
        if mine:
            for conn in (*dead, *idle):
                conn.close()

    @contextmanager
    def _deadline_for(self, conn: Conn, statements: int | None) -> Iterator[None]:
        """Cut ``conn`` if the borrow outlives ``statements`` deadlines; report a cut
        as :class:`DatabaseTimeout`."""
        if self._deadline is None or statements is None:
            yield
            return
        token = WATCHDOG.arm(conn.pgconn.socket, self._deadline * statements)
        disarmed = False
        try:
            yield
        except psycopg.OperationalError as exc:
            disarmed = True
            if WATCHDOG.disarm(token):
                raise DatabaseTimeout("the database did not answer in time") from exc
            raise
        finally:
            if not disarmed and WATCHDOG.disarm(token):
                conn.close()  # cut just as the answer came: never lend it again

    def _give_back(self, conn: Conn) -> None:
        healthy = (not conn.closed and not conn.broken
                   and conn.info.transaction_status == TransactionStatus.IDLE)
        with self._lock:
            mine = os.getpid() == self._pid
            if healthy and mine and not self._closed and len(self._idle) < self._max_idle:
                self._idle.append(conn)
                return
        if not mine:
            return
        if conn.broken:
            self._close_idle(conn)
        else:
            conn.close()

    def read(self, query: str, params: Params = ()) -> Rows:
        """Run a read-only statement; once more on a fresh connection if a pooled one was dead.

        Not after :class:`DatabaseTimeout`: a silent database would only make the
        caller wait twice as long for the same answer.
        """
        for attempt in (1, 2):
            try:
                with self.connection() as conn:
                    return conn.execute(query, params).fetchall()
            except DatabaseTimeout:
                raise
            except psycopg.OperationalError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def write(self, query: str, params: Params) -> Rows:
        """Run one statement (its own transaction, never retried); rows it returns, if any."""
        with self.connection() as conn:
            cur = conn.execute(query, params)
            return cur.fetchall() if cur.description is not None else []

    def rowcount(self, query: str, params: Params) -> int:
        """Run one statement; how many rows it changed."""
        with self.connection() as conn:
            return conn.execute(query, params).rowcount

    def execute_if_idle(self, query: str, params: Params) -> None:
        """Run a statement on an idle connection, if one is open (opens none)."""
        if os.getpid() != self._pid:
            return
        conn = self._idle_conn()
        if conn is not None:
            try:
                with self._deadline_for(conn, 1):
                    conn.execute(query, params)
            finally:
                self._give_back(conn)

    def close(self) -> None:
        """Close the idle connections; later borrows still work but are not pooled."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        if os.getpid() == self._pid:
            for conn in idle:
                conn.close()
