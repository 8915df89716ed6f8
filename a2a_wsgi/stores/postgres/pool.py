"""A small per-process pool of autocommit connections, safe across ``fork``.

Threads borrow a connection for one statement (or one short transaction) and
give it back; at most ``max_idle`` are kept open while idle, so a burst of
threads opens extra connections that are closed when it passes. A process
forked after the pool was used (``gunicorn --preload``) must not touch its
parent's connections: the child disarms them and opens its own.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.pq import TransactionStatus

from .schema import Conn

__all__ = ["INHERITED", "Pool", "disarm"]

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


class Pool:
    """Connections for the threads of one process (opened by ``connect``)."""

    def __init__(self, connect: Callable[[], Conn], *, max_idle: int) -> None:
        self.connect = connect
        self._max_idle = max_idle
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
    def connection(self) -> Iterator[Conn]:
        """Borrow a connection; it goes back to the pool only if healthy and idle."""
        self.check_fork()
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None or conn.closed:
            conn = self.connect()
        try:
            yield conn
        finally:
            self._give_back(conn)

    def _give_back(self, conn: Conn) -> None:
        healthy = (not conn.closed and not conn.broken
                   and conn.info.transaction_status == TransactionStatus.IDLE)
        with self._lock:
            mine = os.getpid() == self._pid
            if healthy and mine and not self._closed and len(self._idle) < self._max_idle:
                self._idle.append(conn)
                return
        if mine:
            conn.close()

    def read(self, query: str, params: Params = ()) -> Rows:
        """Run a read-only statement; once more on a fresh connection if a pooled one was dead."""
        for attempt in (1, 2):
            try:
                with self.connection() as conn:
                    return conn.execute(query, params).fetchall()
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
        with self._lock:
            conn = self._idle.pop() if self._idle and os.getpid() == self._pid else None
        if conn is not None:
            try:
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
