"""The SQLite store's push part: configs, and the outbox the delivery worker claims from."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from a2a_core.models import TaskPushNotificationConfig

from .._base import Configs, Deliveries, Delivery, OutboxEntry, from_micros, to_micros
from .._codec import dump_push_config, load_push_config
from .connections import SQLiteBase

__all__ = ["SQLitePush"]


class SQLitePush(SQLiteBase):
    """:class:`~a2a_wsgi.stores._base.PushStore` on SQLite."""

    def put_push_config(self, config: TaskPushNotificationConfig) -> None:
        config_id = config.push_notification_config.id
        if config_id is None:
            raise ValueError("a stored push config needs an id")
        with self._write() as conn:
            conn.execute(
                "INSERT INTO a2a_push_configs (task_id, config_id, body) VALUES (?, ?, ?) "
                "ON CONFLICT (task_id, config_id) DO UPDATE SET body = excluded.body",
                (config.task_id, config_id, dump_push_config(config)))

    def get_push_config(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        row = self._conn().execute(
            "SELECT body FROM a2a_push_configs WHERE task_id = ? AND config_id = ?",
            (task_id, config_id)).fetchone()
        return load_push_config(row[0]) if row is not None else None

    def list_push_configs(self, task_id: str) -> Configs:
        rows = self._conn().execute(
            "SELECT body FROM a2a_push_configs WHERE task_id = ? ORDER BY pos",
            (task_id,)).fetchall()
        return [load_push_config(row[0]) for row in rows]

    def delete_push_config(self, task_id: str, config_id: str) -> bool:
        with self._write() as conn:
            cursor = conn.execute(
                "DELETE FROM a2a_push_configs WHERE task_id = ? AND config_id = ?",
                (task_id, config_id))
            return cursor.rowcount > 0

    # -- push outbox -------------------------------------------------------------------

    def claim_deliveries(self, now: datetime, limit: int, worker_id: str,
                         lease_seconds: float) -> Deliveries:
        now_us = to_micros(now)
        until = to_micros(now + timedelta(seconds=lease_seconds))
        with self._write() as conn:
            rows = conn.execute(
                "SELECT o.id, o.task_id, o.config_id, o.seq, o.url, o.headers, o.body, "
                "o.attempts, o.last_error, o.next_attempt_us FROM a2a_outbox o "
                "WHERE o.status = 'pending' AND o.next_attempt_us <= ? "
                "AND (o.claimed_until_us IS NULL OR o.claimed_until_us <= ?) "
                "AND o.id = (SELECT min(p.id) FROM a2a_outbox p WHERE p.task_id = o.task_id "
                "AND p.config_id = o.config_id AND p.status = 'pending') "
                "ORDER BY o.id LIMIT ?", (now_us, now_us, limit)).fetchall()
            conn.executemany(
                "UPDATE a2a_outbox SET attempts = attempts + 1, claimed_by = ?, "
                "claimed_until_us = ? WHERE id = ?", [(worker_id, until, r[0]) for r in rows])
        return [_delivery(row) for row in rows]

    def complete_delivery(self, delivery_id: int) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM a2a_outbox WHERE id = ?", (delivery_id,))

    def retry_delivery(self, delivery_id: int, next_attempt_at: datetime, error: str) -> None:
        with self._write() as conn:
            conn.execute(
                "UPDATE a2a_outbox SET next_attempt_us = ?, claimed_by = NULL, "
                "claimed_until_us = NULL, last_error = ? WHERE id = ?",
                (to_micros(next_attempt_at), error, delivery_id))

    def abandon_delivery(self, delivery_id: int, error: str) -> None:
        with self._write() as conn:
            conn.execute(
                "UPDATE a2a_outbox SET status = 'abandoned', claimed_by = NULL, "
                "claimed_until_us = NULL, last_error = ? WHERE id = ?", (error, delivery_id))

    def pending_deliveries(self, task_id: str) -> int:
        row = self._conn().execute(
            "SELECT count(*) FROM a2a_outbox WHERE task_id = ? AND status = 'pending'",
            (task_id,)).fetchone()
        return int(row[0])


def _delivery(row: Any) -> Delivery:
    """A claimed outbox row as the Delivery its claimer sees (attempts include this claim)."""
    number, task_id, config_id, seq, url, headers, body, attempts, last_error, due = row
    pairs = tuple((str(k), str(v)) for k, v in json.loads(headers))
    entry = OutboxEntry(task_id=task_id, config_id=config_id, seq=seq, url=url, headers=pairs,
                        body=bytes(body), not_before=from_micros(due) if due else None)
    return Delivery(id=number, entry=entry, attempts=attempts + 1, last_error=last_error)
