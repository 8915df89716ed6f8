"""The SQLite schema: one migration per version, run once by whichever process starts first.

``a2a_schema_version`` holds the version; each migration runs inside the
write lock, so several workers starting at the same moment upgrade it once.
"""

from __future__ import annotations

import sqlite3

from .._base import LEGACY_FINGERPRINT
from .parts import PARTS_TABLE

__all__ = ["SCHEMA_VERSION", "migrate"]

#: Each entry upgrades the schema from its index to index + 1.
MIGRATIONS: tuple[str, ...] = (
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
    # 4: bodies in the stores' own encoding (a2a_wsgi.stores._encoding); older rows are read
    # as they are and rewritten at their next save. No DDL: the version makes an older
    # library refuse this file instead of misreading new rows.
    "SELECT 1",
    # 5: artifact parts in rows of their own (an appended chunk writes only itself); older
    # bodies keep theirs inline until their next save. Tasks by context, to refuse a send
    # into another caller's context.
    PARTS_TABLE + ";\nCREATE INDEX a2a_tasks_context ON a2a_tasks (context_id)",
)
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: sqlite3.Connection, path: str) -> None:
    """Create or upgrade the schema; ``conn`` holds the write lock."""
    conn.execute("CREATE TABLE IF NOT EXISTS a2a_schema_version (version INTEGER NOT NULL)")
    row = conn.execute("SELECT version FROM a2a_schema_version").fetchone()
    current = row[0] if row is not None else 0
    if current > SCHEMA_VERSION:
        raise RuntimeError(
            f"{path} has schema version {current}; this a2a-wsgi knows up to "
            f"{SCHEMA_VERSION}: upgrade the library"
        )
    for script in MIGRATIONS[current:]:
        for statement in script.split(";"):
            if statement.strip():
                conn.execute(statement)
    if row is None:
        conn.execute("INSERT INTO a2a_schema_version VALUES (?)", (SCHEMA_VERSION,))
    else:
        conn.execute("UPDATE a2a_schema_version SET version = ?", (SCHEMA_VERSION,))
