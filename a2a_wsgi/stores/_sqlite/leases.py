"""The SQLite store's lease part: which worker runs which task."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from .._base import Lease, Leases, from_micros, to_micros
from .connections import SQLiteBase

__all__ = ["SQLiteLeases", "take_lease"]


class SQLiteLeases(SQLiteBase):
    """:class:`~a2a_wsgi.stores._base.LeaseStore` on SQLite."""

    def acquire_lease(self, task_id: str, worker_id: str, expires_at: datetime, *,
                      now: datetime, owner: str | None = None, tenant: str | None = None,
                      payload: bytes = b"") -> bool:
        with self._write() as conn:
            return take_lease(conn, task_id, worker_id, expires_at, now=now, owner=owner,
                              tenant=tenant, payload=payload)

    def renew_leases(self, worker_id: str, task_ids: Sequence[str],
                     expires_at: datetime) -> set[str]:
        renewed: set[str] = set()
        until = to_micros(expires_at)
        with self._write() as conn:
            for task_id in task_ids:
                cursor = conn.execute(
                    "UPDATE a2a_leases SET expires_us = ? WHERE task_id = ? AND worker_id = ?",
                    (until, task_id, worker_id))
                if cursor.rowcount:
                    renewed.add(task_id)
        return renewed

    def release_lease(self, task_id: str, worker_id: str) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM a2a_leases WHERE task_id = ? AND worker_id = ?",
                         (task_id, worker_id))

    def expired_leases(self, now: datetime, *, limit: int = 100) -> Leases:
        rows = self._conn().execute(
            "SELECT task_id, worker_id, expires_us, attempts, owner, tenant, payload "
            "FROM a2a_leases WHERE expires_us <= ? ORDER BY expires_us LIMIT ?",
            (to_micros(now), limit)).fetchall()
        return [_lease(row) for row in rows]

    def get_lease(self, task_id: str) -> Lease | None:
        row = self._conn().execute(
            "SELECT task_id, worker_id, expires_us, attempts, owner, tenant, payload "
            "FROM a2a_leases WHERE task_id = ?", (task_id,)).fetchone()
        return _lease(row) if row is not None else None


def _lease(row: Any) -> Lease:
    """A row of ``a2a_leases`` as a Lease."""
    task_id, worker_id, expires, attempts, owner, tenant, payload = row
    return Lease(task_id=task_id, worker_id=worker_id, expires_at=from_micros(expires),
                 attempts=attempts, owner=owner, tenant=tenant, payload=bytes(payload))


def take_lease(conn: sqlite3.Connection, task_id: str, worker_id: str, expires_at: datetime,
               *, now: datetime, owner: str | None, tenant: str | None,
               payload: bytes) -> bool:
    """Take the lease inside the caller's write (free, ours, or expired at ``now``)."""
    row = conn.execute("SELECT worker_id, expires_us, attempts FROM a2a_leases "
                       "WHERE task_id = ?", (task_id,)).fetchone()
    if row is None:
        attempts = 1
    elif row[0] == worker_id:
        attempts = row[2]
    elif row[1] <= to_micros(now):
        attempts = row[2] + 1
    else:
        return False
    conn.execute(
        "INSERT OR REPLACE INTO a2a_leases (task_id, worker_id, expires_us, attempts, "
        "owner, tenant, payload) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (task_id, worker_id, to_micros(expires_at), attempts, owner, tenant, payload))
    return True
