"""The SQLite store: the embedded default when several processes on one host serve.

Every gunicorn worker opens the same file. WAL mode lets readers run while one
writer writes; every write is one ``BEGIN IMMEDIATE`` transaction (so the
compare-and-set read and the write cannot interleave with another process's),
and ``busy_timeout`` makes a writer wait for the lock instead of failing.
Each thread has its own connection (sqlite3 connections are not shared across
threads, nor across a fork: a forked worker opens fresh ones).

The schema is created and upgraded by the library: ``a2a_schema_version``
holds the version, and each migration runs once, inside the write lock, so
several workers starting at the same moment upgrade it exactly once.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from a2a_core.models import StreamEvent, Task, TaskPushNotificationConfig, TaskState

from .base import (
    LEGACY_FINGERPRINT,
    Configs,
    ConflictError,
    Deliveries,
    Delivery,
    DuplicateMessageError,
    Events,
    EventsExpiredError,
    Lease,
    Leases,
    OutboxEntry,
    Page,
    StoredTask,
    TaskCursor,
    from_micros,
    message_claim,
    sort_key,
    to_micros,
)
from .codec import (
    dump_event,
    dump_push_config,
    dump_task,
    load_event,
    load_push_config,
    load_task,
)

__all__ = ["SQLiteTaskStore", "default_sqlite_path", "SCHEMA_VERSION"]

#: Each entry upgrades the schema from its index to index + 1.
_MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE a2a_tasks (
      id TEXT PRIMARY KEY, owner TEXT, tenant TEXT, context_id TEXT NOT NULL,
      state TEXT NOT NULL, terminal INTEGER NOT NULL, status_us INTEGER NOT NULL,
      version INTEGER NOT NULL, event_seq INTEGER NOT NULL,
      event_floor INTEGER NOT NULL DEFAULT 0, body TEXT NOT NULL);
    CREATE INDEX a2a_tasks_list ON a2a_tasks (owner, tenant, status_us DESC, id DESC);
    CREATE INDEX a2a_tasks_purge ON a2a_tasks (terminal, status_us);
    CREATE TABLE a2a_events (
      task_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL,
      PRIMARY KEY (task_id, seq)) WITHOUT ROWID;
    CREATE TABLE a2a_push_configs (
      pos INTEGER PRIMARY KEY AUTOINCREMENT, task_id TEXT NOT NULL, config_id TEXT NOT NULL,
      body TEXT NOT NULL, UNIQUE (task_id, config_id));
    CREATE TABLE a2a_leases (
      task_id TEXT PRIMARY KEY, worker_id TEXT NOT NULL, expires_us INTEGER NOT NULL,
      attempts INTEGER NOT NULL, owner TEXT, tenant TEXT, payload BLOB NOT NULL);
    CREATE INDEX a2a_leases_expiry ON a2a_leases (expires_us);
    CREATE TABLE a2a_outbox (
      id INTEGER PRIMARY KEY AUTOINCREMENT, task_id TEXT NOT NULL, config_id TEXT NOT NULL,
      seq INTEGER NOT NULL, url TEXT NOT NULL, headers TEXT NOT NULL, body BLOB NOT NULL,
      status TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
      next_attempt_us INTEGER NOT NULL, claimed_by TEXT, claimed_until_us INTEGER,
      last_error TEXT);
    CREATE INDEX a2a_outbox_queue ON a2a_outbox (task_id, config_id, status, id);
    """,
    # 2: the message that created each task, for idempotent sends. ``scope`` is
    # json [owner, tenant]: NULLs are distinct in a UNIQUE key, so they are encoded.
    """
    CREATE TABLE a2a_task_messages (
      scope TEXT NOT NULL, message_id TEXT NOT NULL, task_id TEXT NOT NULL,
      PRIMARY KEY (scope, message_id)) WITHOUT ROWID;
    CREATE INDEX a2a_task_messages_task ON a2a_task_messages (task_id);
    """,
    # 3: a claim is keyed by the request's fingerprint too, so a reused message id with
    # another request is another claim. Rows of version 2 get LEGACY_FINGERPRINT, which
    # no request has: a send made before the upgrade and retried after it is a new send.
    f"""
    CREATE TABLE a2a_task_messages_3 (
      scope TEXT NOT NULL, message_id TEXT NOT NULL, fingerprint TEXT NOT NULL,
      task_id TEXT NOT NULL,
      PRIMARY KEY (scope, message_id, fingerprint)) WITHOUT ROWID;
    INSERT INTO a2a_task_messages_3 (scope, message_id, fingerprint, task_id)
      SELECT scope, message_id, '{LEGACY_FINGERPRINT}', task_id FROM a2a_task_messages;
    DROP TABLE a2a_task_messages;
    ALTER TABLE a2a_task_messages_3 RENAME TO a2a_task_messages;
    CREATE INDEX a2a_task_messages_task ON a2a_task_messages (task_id);
    """,
)
SCHEMA_VERSION = len(_MIGRATIONS)

_POLL_FIRST, _POLL_MAX = 0.01, 0.25


def default_sqlite_path() -> str:
    """``$A2A_DB`` when set, else ``a2a-tasks.sqlite3`` in the working directory."""
    return os.environ.get("A2A_DB") or str(Path.cwd() / "a2a-tasks.sqlite3")


class SQLiteTaskStore:
    """A TaskStore in one SQLite file, safe for many threads and processes of one host.

    ``path`` defaults to :func:`default_sqlite_path`. ``busy_timeout`` (seconds)
    is how long a writer waits for another's transaction. ``max_events`` bounds
    each task's event log (older entries are dropped; replaying from before
    them is an EventsExpiredError).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, max_events: int = 1000,
                 busy_timeout: float = 30.0) -> None:
        self.path = str(path) if path is not None else default_sqlite_path()
        self._max_events = max_events
        self._busy_ms = int(busy_timeout * 1000)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        self._pid = os.getpid()
        self._closed = False
        self._migrate()

    # -- connections -------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection; a fork or close makes a fresh one."""
        if self._pid != os.getpid():
            self._pid, self._local, self._all = os.getpid(), threading.local(), []
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            if self._closed:
                raise RuntimeError("the store is closed")
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                   timeout=self._busy_ms / 1000)
            conn.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            self._local.conn = conn
            with self._all_lock:
                self._all.append(conn)
        return conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, holding the database's write lock from the start."""
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
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
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def close(self) -> None:
        with self._all_lock:
            conns, self._all = self._all, []
            self._closed = True
        for conn in conns:
            try:
                conn.close()
            except sqlite3.Error:
                pass
        self._local = threading.local()

    def _migrate(self) -> None:
        """Create or upgrade the schema, once, whoever else is starting now."""
        with self._write() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS a2a_schema_version (version INTEGER NOT NULL)")
            row = conn.execute("SELECT version FROM a2a_schema_version").fetchone()
            current = row[0] if row is not None else 0
            if current > SCHEMA_VERSION:
                raise RuntimeError(
                    f"{self.path} has schema version {current}; this a2a-wsgi knows up to "
                    f"{SCHEMA_VERSION}: upgrade the library"
                )
            for script in _MIGRATIONS[current:]:
                for statement in script.split(";"):
                    if statement.strip():
                        conn.execute(statement)
            if row is None:
                conn.execute("INSERT INTO a2a_schema_version VALUES (?)", (SCHEMA_VERSION,))
            else:
                conn.execute("UPDATE a2a_schema_version SET version = ?", (SCHEMA_VERSION,))

    def schema_version(self) -> int:
        row = self._conn().execute("SELECT version FROM a2a_schema_version").fetchone()
        return int(row[0])

    # -- tasks -------------------------------------------------------------------------

    def get(self, task_id: str, *, owner: str | None = None,
            tenant: str | None = None) -> Task | None:
        stored = self.load(task_id, owner=owner, tenant=tenant)
        return stored.task if stored is not None else None

    def load(self, task_id: str, *, owner: str | None = None,
             tenant: str | None = None) -> StoredTask | None:
        row = self._conn().execute(
            "SELECT body, version, event_seq FROM a2a_tasks "
            "WHERE id = ? AND owner IS ? AND tenant IS ?", (task_id, owner, tenant)).fetchone()
        if row is None:
            return None
        return StoredTask(load_task(row[0]), row[1], row[2])

    def save(self, task: Task, *, expected_version: int | None, owner: str | None = None,
             tenant: str | None = None, events: Sequence[StreamEvent] = (),
             outbox: Sequence[OutboxEntry] = (), message_id: str | None = None,
             fingerprint: str | None = None) -> int:
        claim = message_claim(message_id, fingerprint)
        body = dump_task(task)
        logged = [dump_event(event) for event in events]
        with self._write() as conn:
            row = conn.execute(
                "SELECT version, owner IS ? AND tenant IS ?, event_seq, event_floor "
                "FROM a2a_tasks WHERE id = ?", (owner, tenant, task.id)).fetchone()
            current = row[0] if row is not None else None
            if current != expected_version:
                raise ConflictError(
                    f"task {task.id!r} is at version {current}, not {expected_version}"
                )
            if row is not None and not row[1]:
                raise ConflictError(f"task {task.id!r} belongs to another owner")
            if row is None and claim is not None:
                self._claim_message(conn, task.id, owner, tenant, *claim)
            seq, floor = (row[2], row[3]) if row is not None else (0, 0)
            version = (current or 0) + 1
            conn.executemany("INSERT INTO a2a_events (task_id, seq, body) VALUES (?, ?, ?)",
                             [(task.id, seq + i, text) for i, text in enumerate(logged, 1)])
            seq += len(logged)
            if seq - floor > self._max_events:
                floor = seq - self._max_events
                conn.execute("DELETE FROM a2a_events WHERE task_id = ? AND seq <= ?",
                             (task.id, floor))
            state = task.status.state
            conn.execute(
                "INSERT INTO a2a_tasks (id, owner, tenant, context_id, state, terminal, "
                "status_us, version, event_seq, event_floor, body) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                "context_id = excluded.context_id, state = excluded.state, "
                "terminal = excluded.terminal, status_us = excluded.status_us, "
                "version = excluded.version, event_seq = excluded.event_seq, "
                "event_floor = excluded.event_floor, body = excluded.body",
                (task.id, owner, tenant, task.context_id, state.value, int(state.is_terminal),
                 to_micros(sort_key(task)[0]), version, seq, floor, body))
            conn.executemany(
                "INSERT INTO a2a_outbox (task_id, config_id, seq, url, headers, body, "
                "next_attempt_us) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(e.task_id, e.config_id, e.seq, e.url, json.dumps([list(h) for h in e.headers]),
                  e.body, to_micros(e.not_before) if e.not_before is not None else 0)
                 for e in outbox])
            return version

    @staticmethod
    def _claim_message(conn: sqlite3.Connection, task_id: str, owner: str | None,
                       tenant: str | None, message_id: str, fingerprint: str) -> None:
        """Record the creating message (inside the caller's write lock), or name its task."""
        scope = json.dumps([owner, tenant])
        taken = conn.execute(
            "SELECT task_id FROM a2a_task_messages "
            "WHERE scope = ? AND message_id = ? AND fingerprint = ?",
            (scope, message_id, fingerprint)).fetchone()
        if taken is not None:
            raise DuplicateMessageError(taken[0], message_id)
        conn.execute("INSERT INTO a2a_task_messages (scope, message_id, fingerprint, task_id) "
                     "VALUES (?, ?, ?, ?)", (scope, message_id, fingerprint, task_id))

    def find_by_message(self, message_id: str, *, fingerprint: str, owner: str | None = None,
                        tenant: str | None = None) -> Task | None:
        row = self._conn().execute(
            "SELECT t.body FROM a2a_task_messages m JOIN a2a_tasks t ON t.id = m.task_id "
            "WHERE m.scope = ? AND m.message_id = ? AND m.fingerprint = ? "
            "AND t.owner IS ? AND t.tenant IS ?",
            (json.dumps([owner, tenant]), message_id, fingerprint, owner, tenant)).fetchone()
        return load_task(row[0]) if row is not None else None

    def list(self, *, owner: str | None = None, tenant: str | None = None,
             context_id: str | None = None, status: TaskState | None = None,
             status_timestamp_after: datetime | None = None, after: TaskCursor | None = None,
             limit: int | None = None) -> Page:
        where = ["owner IS ?", "tenant IS ?"]
        args: list[object] = [owner, tenant]
        if context_id is not None:
            where.append("context_id = ?")
            args.append(context_id)
        if status is not None:
            where.append("state = ?")
            args.append(status.value)
        if status_timestamp_after is not None:
            where.append("status_us >= ?")
            args.append(to_micros(status_timestamp_after))
        page_where, page_args = list(where), list(args)
        if after is not None:
            stamp = to_micros(after[0])
            page_where.append("(status_us < ? OR (status_us = ? AND id < ?))")
            page_args += [stamp, stamp, after[1]]
        with self._read() as conn:
            total = conn.execute(
                f"SELECT count(*) FROM a2a_tasks WHERE {' AND '.join(where)}", args
            ).fetchone()[0]
            rows = conn.execute(
                f"SELECT body FROM a2a_tasks WHERE {' AND '.join(page_where)} "
                "ORDER BY status_us DESC, id DESC LIMIT ?",
                [*page_args, -1 if limit is None else limit]).fetchall()
        return [load_task(row[0]) for row in rows], int(total)

    def finished_among(self, task_ids: Sequence[str]) -> dict[str, TaskState]:
        found: dict[str, TaskState] = {}
        ids = list(task_ids)
        conn = self._conn()
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for task_id, state in conn.execute(
                    f"SELECT id, state FROM a2a_tasks WHERE terminal = 1 AND id IN ({marks})",
                    chunk):
                found[task_id] = TaskState(state)
        return found

    # -- event log ---------------------------------------------------------------------

    def events_after(self, task_id: str, after_seq: int, *,
                     limit: int | None = None) -> Events:
        with self._read() as conn:
            row = conn.execute("SELECT event_floor FROM a2a_tasks WHERE id = ?",
                               (task_id,)).fetchone()
            if row is None:
                return []
            if after_seq < row[0]:
                raise EventsExpiredError(task_id, after_seq, row[0])
            rows = conn.execute(
                "SELECT seq, body FROM a2a_events WHERE task_id = ? AND seq > ? "
                "ORDER BY seq LIMIT ?", (task_id, after_seq, -1 if limit is None else limit)
            ).fetchall()
        return [(seq, load_event(body)) for seq, body in rows]

    def wait_for_events(self, task_id: str, after_seq: int, timeout: float) -> Events:
        """Poll the task's last sequence number, backing off from 10 ms to 250 ms."""
        deadline = time.monotonic() + timeout
        pause = _POLL_FIRST
        conn = self._conn()
        while True:
            row = conn.execute("SELECT event_seq FROM a2a_tasks WHERE id = ?",
                               (task_id,)).fetchone()
            if row is not None and row[0] > after_seq:
                return self.events_after(task_id, after_seq)
            left = deadline - time.monotonic()
            if left <= 0:
                return []
            time.sleep(min(pause, left))
            pause = min(pause * 2, _POLL_MAX)

    # -- push configs ------------------------------------------------------------------

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

    # -- leases ------------------------------------------------------------------------

    def acquire_lease(self, task_id: str, worker_id: str, expires_at: datetime, *,
                      now: datetime, owner: str | None = None, tenant: str | None = None,
                      payload: bytes = b"") -> bool:
        with self._write() as conn:
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

    # -- retention ---------------------------------------------------------------------

    def purge(self, older_than: datetime, *, limit: int | None = None) -> int:
        with self._write() as conn:
            ids = [row[0] for row in conn.execute(
                "SELECT id FROM a2a_tasks WHERE terminal = 1 AND status_us < ? LIMIT ?",
                (to_micros(older_than), -1 if limit is None else limit))]
            for table, column in (("a2a_events", "task_id"), ("a2a_push_configs", "task_id"),
                                  ("a2a_leases", "task_id"), ("a2a_outbox", "task_id"),
                                  ("a2a_task_messages", "task_id"), ("a2a_tasks", "id")):
                conn.executemany(f"DELETE FROM {table} WHERE {column} = ?",
                                 [(task_id,) for task_id in ids])
        return len(ids)


def _delivery(row: Any) -> Delivery:
    """A claimed outbox row as the Delivery its claimer sees (attempts include this claim)."""
    number, task_id, config_id, seq, url, headers, body, attempts, last_error, due = row
    pairs = tuple((str(k), str(v)) for k, v in json.loads(headers))
    entry = OutboxEntry(task_id=task_id, config_id=config_id, seq=seq, url=url, headers=pairs,
                        body=bytes(body), not_before=from_micros(due) if due else None)
    return Delivery(id=number, entry=entry, attempts=attempts + 1, last_error=last_error)


def _lease(row: Any) -> Lease:
    """A row of ``a2a_leases`` as a Lease."""
    task_id, worker_id, expires, attempts, owner, tenant, payload = row
    return Lease(task_id=task_id, worker_id=worker_id, expires_at=from_micros(expires),
                 attempts=attempts, owner=owner, tenant=tenant, payload=bytes(payload))
