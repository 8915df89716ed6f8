"""The PostgreSQL store: many worker processes on many hosts share one database.

Every rule of :mod:`a2a_wsgi.stores._base` is kept by the database itself, so
it holds across hosts, not just across threads:

* a save is ``UPDATE … WHERE id = %s AND version = %s`` (or ``INSERT … ON
  CONFLICT DO NOTHING`` for a new task); zero rows means someone else wrote
  first, and the caller gets :class:`~a2a_wsgi.stores._base.ConflictError`. The
  events and outbox rows of that save are written by the same statement (one
  round trip, one transaction), numbered from the ``event_seq`` the UPDATE
  returns, so numbers are gap-free per task; so are the task's new artifact
  parts (:mod:`.parts`: a part is a row, and an appended chunk inserts only
  itself);
* each save with events sends ``NOTIFY`` (delivered on commit) carrying the
  task id; one listener connection per process (:mod:`.listener`) wakes the
  threads in :meth:`PostgresTaskStore.wait_for_events`, which also re-read the
  log every ``poll_interval`` seconds, so a lost notification delays a stream,
  never hangs it;
* outbox entries are claimed with ``FOR UPDATE SKIP LOCKED``, only the oldest
  pending entry of each (task, config) queue, so two workers never claim the
  same entry and a webhook sees a task's events in order;
* leases are taken with one ``INSERT … ON CONFLICT DO UPDATE … WHERE`` that
  only succeeds when the lease is free, ours or expired.

The modules: :mod:`.schema` (URLs, tables, :func:`upgrade_schema`, also run by
``a2a db upgrade URL``), :mod:`.statements` (the SQL, rendered once per
store), :mod:`.pool` (the per-process connections, fork-safe),
:mod:`.listener` (LISTEN/NOTIFY), :mod:`.rows` (values in and out), :mod:`.parts`
(artifact part rows) and :mod:`.store` (:class:`PostgresTaskStore`). Tables live
in the ``public`` schema unless ``schema=`` (or ``?schema=`` in the URL) names another.

Connections: a small pool of autocommit connections shared by the threads of
a process (at most ``max_idle`` kept open when idle), plus the listener once a
stream waits. Create the store after the server forks its workers (gunicorn
does, unless ``--preload``); a store used before a fork opens fresh
connections in the child.
"""

from __future__ import annotations

from ..._store_choice import MissingExtraError

try:
    import psycopg  # noqa: F401 (what the postgres extra installs)
except ImportError as missing:
    raise MissingExtraError("PostgreSQL", "postgres", missing) from missing

from .schema import (
    DEFAULT_APPLICATION_NAME,
    DEFAULT_SCHEMA,
    SCHEMA_VERSION,
    SchemaVersionError,
    schema_version,
    split_schema,
    upgrade_schema,
)
from .store import PostgresTaskStore

__all__ = [
    "DEFAULT_APPLICATION_NAME",
    "DEFAULT_SCHEMA",
    "SCHEMA_VERSION",
    "PostgresTaskStore",
    "SchemaVersionError",
    "schema_version",
    "split_schema",
    "upgrade_schema",
]
