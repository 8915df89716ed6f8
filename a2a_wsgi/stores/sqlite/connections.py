"""SQLite connections: one per thread, fresh after a fork, and lock waits that cooperate.

sqlite3 connections are shared neither across threads nor across a fork, so
each thread (or greenlet) gets its own and a forked worker opens new ones.

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
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ...concurrency import cooperative

__all__ = ["Connections", "SQLiteBase"]

_BACKOFF_FIRST, _BACKOFF_MAX = 0.001, 0.05


class Connections:
    """The connections of one store to one file."""

    def __init__(self, path: str, *, busy_timeout: float) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._closed = False

    def get(self) -> sqlite3.Connection:
        """This thread's connection; a fork or close makes a fresh one."""
        if self._pid != os.getpid():
            self._pid, self._local, self._all = os.getpid(), threading.local(), []
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open()
            self._local.conn = conn
        return conn

    def _open(self) -> sqlite3.Connection:
        if self._closed:
            raise RuntimeError("the store is closed")
        waits_in_c = not cooperative()
        busy_ms = int(self.busy_timeout * 1000) if waits_in_c else 0
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                               timeout=busy_ms / 1000)
        conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
        self._retry_busy(lambda: conn.execute("PRAGMA journal_mode = WAL"))
        conn.execute("PRAGMA synchronous = NORMAL")
        with self._lock:
            self._all.append(conn)
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
        with self._lock:
            conns, self._all = self._all, []
            self._closed = True
        for conn in conns:
            try:
                conn.close()
            except sqlite3.Error:
                pass
        self._local = threading.local()


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

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, holding the database's write lock from the start."""
        conn = self._conn()
        self._connections.begin(conn, "BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """One consistent snapshot for several SELECTs."""
        conn = self._conn()
        self._connections.begin(conn, "BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def close(self) -> None:
        self._connections.close()
