"""The PostgreSQL store: many worker processes on many hosts share one database.

Every rule of :mod:`a2a_wsgi.stores.base` is kept by the database itself, so
it holds across hosts, not just across threads:

* a save is ``UPDATE … WHERE id = %s AND version = %s`` (or ``INSERT … ON
  CONFLICT DO NOTHING`` for a new task); zero rows means someone else wrote
  first, and the caller gets :class:`~.base.ConflictError`. The events and
  outbox rows of that save are written by the same statement (one round trip,
  one transaction), numbered from the ``event_seq`` the UPDATE returns, so
  numbers are gap-free per task;
* each save with events sends ``NOTIFY`` (delivered on commit) carrying the
  task id; one listener connection per process wakes the threads in
  :meth:`PostgresTaskStore.wait_for_events`, which also re-read the log every
  ``poll_interval`` seconds, so a lost notification delays a stream, never
  hangs it;
* outbox entries are claimed with ``FOR UPDATE SKIP LOCKED``, only the oldest
  pending entry of each (task, config) queue, so two workers never claim the
  same entry and a webhook sees a task's events in order;
* leases are taken with one ``INSERT … ON CONFLICT DO UPDATE … WHERE`` that
  only succeeds when the lease is free, ours or expired.

The schema is created and upgraded by the library (:func:`upgrade_schema`,
``a2a db upgrade URL``): a ``a2a_schema_version`` table records the version,
upgrades run under an advisory lock and are idempotent. Tables live in the
``public`` schema unless ``schema=`` (or ``?schema=`` in the URL) names
another, which lets tests isolate themselves and drop it afterwards.

Connections: a small pool of autocommit connections shared by the threads of
a process (at most ``max_idle`` kept open when idle), plus the listener.
Create the store after the server forks its workers (gunicorn does, unless
``--preload``); a store used before a fork opens fresh connections in the child.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from functools import partial
from typing import Any, overload
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import TransactionStatus

from a2a_core.models import StreamEvent, Task, TaskPushNotificationConfig, TaskState

from . import codec
from .base import (
    Configs,
    ConflictError,
    Delivery,
    Events,
    EventsExpiredError,
    Lease,
    OutboxEntry,
    Page,
    StoredTask,
    TaskCursor,
    as_utc,
    sort_key,
)

__all__ = [
    "DEFAULT_SCHEMA",
    "SCHEMA_VERSION",
    "PostgresTaskStore",
    "SchemaVersionError",
    "schema_version",
    "split_schema",
    "upgrade_schema",
]

log = logging.getLogger("a2a_wsgi.stores.postgres")

DEFAULT_SCHEMA = "public"
DEFAULT_APPLICATION_NAME = "a2a-wsgi"
#: The schema version this code reads and writes.
SCHEMA_VERSION = 1

_Conn = psycopg.Connection[Any]
# Aliases defined before the class: inside it, the ``list`` method shadows the builtin.
_Rows = list[tuple[Any, ...]]
_Deliveries = list[Delivery]
_Leases = list[Lease]
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")

# Each migration takes the schema from the version before it to its own number.
# Table names carry the a2a_ prefix so they can share a schema with an application's.
_MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (1, (
        """CREATE TABLE {s}.a2a_tasks (
            id text COLLATE "C" PRIMARY KEY,
            owner text, tenant text,
            context_id text NOT NULL,
            state text NOT NULL,
            terminal boolean NOT NULL,
            status_at timestamptz NOT NULL,
            version bigint NOT NULL,
            event_seq bigint NOT NULL,
            event_floor bigint NOT NULL DEFAULT 0,
            body text NOT NULL)""",
        "CREATE INDEX a2a_tasks_list ON {s}.a2a_tasks (owner, tenant, status_at DESC, id DESC)",
        "CREATE INDEX a2a_tasks_purge ON {s}.a2a_tasks (status_at) WHERE terminal",
        """CREATE TABLE {s}.a2a_events (
            task_id text COLLATE "C" NOT NULL,
            seq bigint NOT NULL,
            body text NOT NULL,
            PRIMARY KEY (task_id, seq))""",
        """CREATE TABLE {s}.a2a_push_configs (
            pos bigserial PRIMARY KEY,
            task_id text COLLATE "C" NOT NULL,
            config_id text COLLATE "C" NOT NULL,
            body text NOT NULL,
            UNIQUE (task_id, config_id))""",
        """CREATE TABLE {s}.a2a_leases (
            task_id text COLLATE "C" PRIMARY KEY,
            worker_id text NOT NULL,
            expires_at timestamptz NOT NULL,
            attempts integer NOT NULL,
            owner text, tenant text,
            payload bytea NOT NULL)""",
        "CREATE INDEX a2a_leases_expiry ON {s}.a2a_leases (expires_at)",
        """CREATE TABLE {s}.a2a_outbox (
            id bigserial PRIMARY KEY,
            task_id text COLLATE "C" NOT NULL,
            config_id text COLLATE "C" NOT NULL,
            seq bigint NOT NULL,
            url text NOT NULL,
            headers text NOT NULL,
            body bytea NOT NULL,
            not_before timestamptz,
            status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'abandoned')),
            attempts integer NOT NULL DEFAULT 0,
            next_attempt_at timestamptz,
            claimed_by text,
            claimed_until timestamptz,
            last_error text)""",
        """CREATE INDEX a2a_outbox_queue ON {s}.a2a_outbox (task_id, config_id, id)
            WHERE status = 'pending'""",
        "CREATE INDEX a2a_outbox_task ON {s}.a2a_outbox (task_id)",
    )),
)
assert _MIGRATIONS[-1][0] == SCHEMA_VERSION

# Every statement the store runs; {s} is the schema, quoted once at start-up.
_SQL: dict[str, str] = {
    "load": """SELECT body, version, event_seq FROM {s}.a2a_tasks
        WHERE id = %s AND owner IS NOT DISTINCT FROM %s AND tenant IS NOT DISTINCT FROM %s""",
    # A save is ONE statement (so one round trip, atomic even in autocommit): the task
    # write returns its new event_seq, the sibling CTEs number the events from it, trim
    # the log below the new floor, queue the outbox rows and NOTIFY. When the task write
    # matches no row (CAS failed), every CTE selects from nothing and nothing changes.
    "create": """INSERT INTO {s}.a2a_tasks (id, owner, tenant, context_id, state, terminal,
            status_at, version, event_seq, event_floor, body)
        VALUES (%(id)s, %(owner)s, %(tenant)s, %(context)s, %(state)s, %(terminal)s, %(at)s,
                1, %(n)s, GREATEST(0, %(n)s - %(max)s), %(body)s)
        ON CONFLICT (id) DO NOTHING RETURNING version, event_seq, event_floor""",
    "update": """UPDATE {s}.a2a_tasks SET context_id = %(context)s, state = %(state)s,
            terminal = %(terminal)s, status_at = %(at)s, body = %(body)s,
            version = version + 1, event_seq = event_seq + %(n)s,
            event_floor = GREATEST(event_floor, event_seq + %(n)s - %(max)s)
        WHERE id = %(id)s AND version = %(expected)s
          AND owner IS NOT DISTINCT FROM %(owner)s AND tenant IS NOT DISTINCT FROM %(tenant)s
        RETURNING version, event_seq, event_floor""",
    "save": """WITH t AS ({write}),
        appended AS (
            INSERT INTO {s}.a2a_events (task_id, seq, body)
            SELECT %(id)s, t.event_seq - %(n)s + x.ord, x.body
            FROM t, unnest(%(events)s::text[]) WITH ORDINALITY AS x(body, ord)
            WHERE t.event_seq - %(n)s + x.ord > t.event_floor
        ), trimmed AS (
            DELETE FROM {s}.a2a_events d USING t
            WHERE %(n)s > 0 AND d.task_id = %(id)s AND d.seq <= t.event_floor
        ), queued AS (
            INSERT INTO {s}.a2a_outbox
                (task_id, config_id, seq, url, headers, body, not_before, next_attempt_at)
            SELECT x.task_id, x.config_id, x.seq, x.url, x.headers, x.body, x.due, x.due
            FROM t, unnest(%(o_task)s::text[], %(o_config)s::text[], %(o_seq)s::bigint[],
                           %(o_url)s::text[], %(o_headers)s::text[], %(o_body)s::bytea[],
                           %(o_due)s::timestamptz[])
                AS x(task_id, config_id, seq, url, headers, body, due)
        ), notified AS (
            SELECT pg_notify(%(channel)s, %(id)s) FROM t WHERE %(n)s > 0
        )
        SELECT t.version, (SELECT count(*) FROM notified) FROM t""",
    "notify": "SELECT pg_notify(%s, %s)",
    "finished": "SELECT id, state FROM {s}.a2a_tasks WHERE id = ANY(%s) AND terminal",
    # One statement, one snapshot: the floor and the events cannot disagree.
    "events": """SELECT t.event_floor, e.seq, e.body FROM {s}.a2a_tasks t
        LEFT JOIN LATERAL (SELECT seq, body FROM {s}.a2a_events
                           WHERE task_id = t.id AND seq > %s ORDER BY seq LIMIT %s) e ON true
        WHERE t.id = %s ORDER BY e.seq""",
    "put_config": """INSERT INTO {s}.a2a_push_configs (task_id, config_id, body)
        VALUES (%s, %s, %s)
        ON CONFLICT (task_id, config_id) DO UPDATE SET body = EXCLUDED.body""",
    "get_config": """SELECT body FROM {s}.a2a_push_configs
        WHERE task_id = %s AND config_id = %s""",
    "list_configs": "SELECT body FROM {s}.a2a_push_configs WHERE task_id = %s ORDER BY pos",
    "delete_config": "DELETE FROM {s}.a2a_push_configs WHERE task_id = %s AND config_id = %s",
    # The head of each (task, config) queue is its oldest pending entry; only heads
    # that are due and unclaimed are locked, skipping heads another worker is claiming.
    "claim": """WITH heads AS (
            SELECT DISTINCT ON (task_id, config_id) id FROM {s}.a2a_outbox
            WHERE status = 'pending' ORDER BY task_id, config_id, id
        ), picked AS (
            SELECT o.id FROM {s}.a2a_outbox o JOIN heads ON heads.id = o.id
            WHERE o.status = 'pending'
              AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= %(now)s)
              AND (o.claimed_until IS NULL OR o.claimed_until <= %(now)s)
            ORDER BY o.id LIMIT %(limit)s
            FOR UPDATE OF o SKIP LOCKED
        )
        UPDATE {s}.a2a_outbox u
        SET claimed_by = %(worker)s, claimed_until = %(until)s, attempts = u.attempts + 1
        FROM picked WHERE u.id = picked.id
        RETURNING u.id, u.task_id, u.config_id, u.seq, u.url, u.headers, u.body,
                  u.not_before, u.attempts, u.last_error""",
    "complete": "DELETE FROM {s}.a2a_outbox WHERE id = %s",
    "retry": """UPDATE {s}.a2a_outbox SET claimed_by = NULL, claimed_until = NULL,
        next_attempt_at = %s, last_error = %s WHERE id = %s""",
    "abandon": """UPDATE {s}.a2a_outbox SET status = 'abandoned', claimed_by = NULL,
        claimed_until = NULL, last_error = %s WHERE id = %s""",
    "pending": """SELECT count(*) FROM {s}.a2a_outbox
        WHERE task_id = %s AND status = 'pending'""",
    # Free, ours, or expired: the WHERE of DO UPDATE is re-checked under the row lock,
    # so of two reapers taking over one expired lease only the first succeeds.
    "acquire": """INSERT INTO {s}.a2a_leases AS l
            (task_id, worker_id, expires_at, attempts, owner, tenant, payload)
        VALUES (%(task)s, %(worker)s, %(expires)s, 1, %(owner)s, %(tenant)s, %(payload)s)
        ON CONFLICT (task_id) DO UPDATE SET
            worker_id = EXCLUDED.worker_id, expires_at = EXCLUDED.expires_at,
            attempts = CASE WHEN l.worker_id = EXCLUDED.worker_id
                            THEN l.attempts ELSE l.attempts + 1 END,
            owner = EXCLUDED.owner, tenant = EXCLUDED.tenant, payload = EXCLUDED.payload
        WHERE l.worker_id = EXCLUDED.worker_id OR l.expires_at <= %(now)s
        RETURNING 1""",
    "renew": """UPDATE {s}.a2a_leases SET expires_at = %s
        WHERE worker_id = %s AND task_id = ANY(%s) RETURNING task_id""",
    "release": "DELETE FROM {s}.a2a_leases WHERE task_id = %s AND worker_id = %s",
    "expired": """SELECT task_id, worker_id, expires_at, attempts, owner, tenant, payload
        FROM {s}.a2a_leases WHERE expires_at <= %s ORDER BY expires_at, task_id LIMIT %s""",
    "purge": """WITH doomed AS (
            SELECT id FROM {s}.a2a_tasks WHERE terminal AND status_at < %s
            ORDER BY status_at LIMIT %s FOR UPDATE SKIP LOCKED
        ), events AS (
            DELETE FROM {s}.a2a_events x USING doomed WHERE x.task_id = doomed.id
        ), configs AS (
            DELETE FROM {s}.a2a_push_configs x USING doomed WHERE x.task_id = doomed.id
        ), leases AS (
            DELETE FROM {s}.a2a_leases x USING doomed WHERE x.task_id = doomed.id
        ), outbox AS (
            DELETE FROM {s}.a2a_outbox x USING doomed WHERE x.task_id = doomed.id
        )
        DELETE FROM {s}.a2a_tasks t USING doomed WHERE t.id = doomed.id RETURNING t.id""",
}


#: The two saves: the same statement around a create or an update.
_SAVES = {"save_new": "create", "save": "update"}


class SchemaVersionError(RuntimeError):
    """The database schema is not the version this code expects."""


# -- URLs and schema management -----------------------------------------------------------


def split_schema(url: str) -> tuple[str, str | None]:
    """The connection string without our ``schema`` query parameter, and its value.

    libpq rejects parameters it does not know, so ``?schema=`` is taken out
    before connecting. Keyword strings (``host=… dbname=…``) pass through.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        return url, None
    query = parse_qsl(parts.query, keep_blank_values=True)
    schemas = [value for key, value in query if key == "schema"]
    rest = [(key, value) for key, value in query if key != "schema"]
    clean = urlunsplit(parts._replace(query=urlencode(rest)))
    return clean, (schemas[-1] if schemas else None)


def _checked_schema(name: str) -> str:
    """Schema names are plain identifiers: they also name the NOTIFY channel and lock."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"invalid schema name {name!r}: use letters, digits and _ (max 63)")
    return name


def _connect(conninfo: str, *, connect_timeout: float,
             application_name: str = DEFAULT_APPLICATION_NAME) -> _Conn:
    """An autocommit connection whose session time zone is UTC (timestamps come back aware UTC).

    It is named ``application_name`` in ``pg_stat_activity`` unless the URL names it.
    """
    options: dict[str, Any] = {"connect_timeout": max(1, int(connect_timeout))}
    if "application_name" not in conninfo_to_dict(conninfo):
        options["application_name"] = application_name
    conn = psycopg.connect(conninfo, autocommit=True, **options)
    conn.execute("SET TIME ZONE 'UTC'")
    return conn


def _schema_exists(conn: _Conn, schema: str) -> bool:
    row = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
    return row is not None


def _read_version(conn: _Conn, schema: str) -> int:
    """The recorded schema version; 0 when our tables were never created."""
    row = conn.execute("SELECT to_regclass(%s)", (f'"{schema}".a2a_schema_version',)).fetchone()
    if row is None or row[0] is None:
        return 0
    query = sql.SQL("SELECT max(version) FROM {}.a2a_schema_version").format(
        sql.Identifier(schema))
    found = conn.execute(query).fetchone()
    return int(found[0]) if found is not None and found[0] is not None else 0


def _upgrade(conn: _Conn, schema: str) -> tuple[int, int]:
    """Bring ``schema`` to SCHEMA_VERSION in one transaction, serialized by an advisory lock."""
    ident = sql.Identifier(schema)
    current = _read_version(conn, schema)
    if current == SCHEMA_VERSION:  # the usual start-up: nothing to do, no lock taken
        return current, current
    with conn.transaction():
        # Two hosts starting at once: the second waits here, then finds nothing to do.
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"a2a_wsgi schema {schema}",))
        if not _schema_exists(conn, schema):
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(ident))
        before = _read_version(conn, schema)
        if before > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"schema {schema!r} is at version {before}, newer than this a2a-wsgi "
                f"({SCHEMA_VERSION}): upgrade the package")
        if before == 0:
            conn.execute(sql.SQL(
                "CREATE TABLE IF NOT EXISTS {}.a2a_schema_version (version integer NOT NULL)"
            ).format(ident))
        for number, statements in _MIGRATIONS:
            if number <= before:
                continue
            for statement in statements:
                conn.execute(sql.SQL(statement).format(s=ident))
        if before < SCHEMA_VERSION:
            table = sql.SQL("{}.a2a_schema_version").format(ident)
            conn.execute(sql.SQL("DELETE FROM {}").format(table))
            conn.execute(sql.SQL("INSERT INTO {} (version) VALUES (%s)").format(table),
                         (SCHEMA_VERSION,))
    return before, SCHEMA_VERSION


def upgrade_schema(url: str, *, schema: str | None = None,
                   connect_timeout: float = 10.0) -> tuple[int, int]:
    """Create or upgrade the store's tables; (version before, version after). Idempotent.

    ``schema`` overrides ``?schema=`` in the URL; the default is ``public``.
    """
    conninfo, from_url = split_schema(url)
    name = _checked_schema(schema or from_url or DEFAULT_SCHEMA)
    with _connect(conninfo, connect_timeout=connect_timeout) as conn:
        return _upgrade(conn, name)


def schema_version(url: str, *, schema: str | None = None,
                   connect_timeout: float = 10.0) -> int:
    """The version recorded in the database (0: not created yet)."""
    conninfo, from_url = split_schema(url)
    name = _checked_schema(schema or from_url or DEFAULT_SCHEMA)
    with _connect(conninfo, connect_timeout=connect_timeout) as conn:
        return _read_version(conn, name)


# -- the listener ---------------------------------------------------------------------------


class _Listener:
    """One LISTEN connection per process; counts notifications for the tasks being waited on.

    Waiters register a task (:meth:`watch`), read the count, query the log, and
    sleep until the count moves. Only watched tasks are counted, so the map is
    bounded by the number of open streams.
    """

    def __init__(self, connect: Callable[[], _Conn], channel: str) -> None:
        self._connect, self._channel = connect, channel
        self._cond = threading.Condition()
        self._watchers: dict[str, int] = {}
        self._counts: dict[str, int] = {}
        self._stop = threading.Event()
        self._ready = threading.Event()
        #: The LISTEN connection while one is open (a forked child disarms it).
        self.conn: _Conn | None = None
        self._thread = threading.Thread(target=self._run, name="a2a-pg-listen", daemon=True)
        self._thread.start()

    def watch(self, task_id: str) -> None:
        with self._cond:
            self._watchers[task_id] = self._watchers.get(task_id, 0) + 1
            self._counts.setdefault(task_id, 0)

    def unwatch(self, task_id: str) -> None:
        with self._cond:
            left = self._watchers.get(task_id, 0) - 1
            if left > 0:
                self._watchers[task_id] = left
            else:
                self._watchers.pop(task_id, None)
                self._counts.pop(task_id, None)

    def count(self, task_id: str) -> int:
        with self._cond:
            return self._counts.get(task_id, 0)

    def wait(self, task_id: str, seen: int, timeout: float) -> None:
        """Until a notification for ``task_id`` after ``seen`` (or the timeout)."""
        with self._cond:
            self._cond.wait_for(lambda: self._counts.get(task_id, 0) != seen, timeout)

    def wait_ready(self, timeout: float) -> bool:
        return self._ready.wait(timeout)

    def close(self, wake: Callable[[], object] | None = None) -> None:
        """Stop the thread; ``wake`` (a NOTIFY on our channel) ends its wait at once."""
        self._stop.set()
        if wake is not None and self._thread.is_alive():
            try:
                wake()
            except psycopg.Error:
                pass  # it stops within its half-second wait anyway
        self._thread.join(timeout=5)

    def _bump(self, task_ids: Sequence[str] | None) -> None:
        """Count a notification (None: all tasks, after a reconnect may have lost some)."""
        with self._cond:
            for task_id in self._counts if task_ids is None else task_ids:
                if task_id in self._counts:
                    self._counts[task_id] += 1
            self._cond.notify_all()

    def _run(self) -> None:
        backoff = 0.1
        while not self._stop.is_set():
            try:
                with self._connect() as conn:
                    self.conn = conn
                    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._channel)))
                    self._ready.set()
                    self._bump(None)
                    backoff = 0.1
                    while not self._stop.is_set():
                        # The generator yields each notification as it arrives and ends
                        # after half a second of silence, so the stop flag is seen.
                        for notify in conn.notifies(timeout=0.5):
                            self._bump((_unesc(notify.payload),))
                            if self._stop.is_set():
                                break
            except psycopg.Error as exc:
                self._ready.clear()
                log.warning("LISTEN connection lost (%s); streams poll until it is back", exc)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)


# -- the store ------------------------------------------------------------------------------


class PostgresTaskStore:
    """A :class:`~a2a_wsgi.stores.base.TaskStore` in PostgreSQL (psycopg 3).

    ``url`` is a ``postgresql://`` URL (``?schema=NAME`` is understood) or a
    libpq keyword string. ``upgrade=True`` creates or upgrades the tables at
    start-up; with False a schema at another version is an error (run
    ``a2a db upgrade URL``). ``max_events`` caps each task's log; ``max_idle``
    caps the idle connections kept per process; ``poll_interval`` bounds how long
    a lost notification can delay a waiting stream; ``application_name`` is how
    the connections show in ``pg_stat_activity``.
    """

    def __init__(self, url: str, *, schema: str | None = None, upgrade: bool = True,
                 max_events: int = 1000, max_idle: int = 8, poll_interval: float = 1.0,
                 connect_timeout: float = 10.0,
                 application_name: str = DEFAULT_APPLICATION_NAME) -> None:
        conninfo, from_url = split_schema(url)
        self.schema = _checked_schema(schema or from_url or DEFAULT_SCHEMA)
        self._conninfo, self._connect_timeout = conninfo, connect_timeout
        self._application_name = application_name
        self._max_events, self._max_idle, self._poll = max_events, max_idle, poll_interval
        self.channel = f"a2a_events_{self.schema}"[:63]
        ident = sql.Identifier(self.schema)
        self._sql = {name: sql.SQL(text).format(s=ident)
                     for name, text in _SQL.items() if name not in _SAVES}
        for name, write in _SAVES.items():
            self._sql[name] = sql.SQL(_SQL["save"]).format(write=self._sql[write], s=ident)
        self._lock = threading.Lock()
        self._idle: list[_Conn] = []
        self._listener: _Listener | None = None
        self._pid = os.getpid()
        self._closed = False
        try:
            with self._connection() as conn:
                if upgrade:
                    _upgrade(conn, self.schema)
                else:
                    found = _read_version(conn, self.schema)
                    if found != SCHEMA_VERSION:
                        raise SchemaVersionError(
                            f"schema {self.schema!r} is at version {found}, this code needs "
                            f"{SCHEMA_VERSION}: run `a2a db upgrade URL`")
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"PostgresTaskStore(schema={self.schema!r})"

    # -- connections -------------------------------------------------------------------

    def _new_connection(self) -> _Conn:
        return _connect(self._conninfo, connect_timeout=self._connect_timeout,
                        application_name=self._application_name)

    def _after_fork(self) -> None:
        """In a forked child, let go of the parent's connections without touching them.

        Their sockets are shared with the parent: closing one here (even by the
        garbage collector at exit) would send Terminate and end the parent's session.
        """
        if os.getpid() == self._pid:
            return
        with self._lock:
            if os.getpid() != self._pid:
                inherited = list(self._idle)
                if self._listener is not None and self._listener.conn is not None:
                    inherited.append(self._listener.conn)
                for conn in inherited:
                    _disarm(conn)
                _INHERITED.extend(inherited)
                self._idle, self._listener, self._pid = [], None, os.getpid()

    @contextmanager
    def _connection(self) -> Iterator[_Conn]:
        """Borrow a connection; it goes back to the pool only if healthy and idle."""
        self._after_fork()
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None or conn.closed:
            conn = self._new_connection()
        try:
            yield conn
        finally:
            self._give_back(conn)

    def _give_back(self, conn: _Conn) -> None:
        healthy = (not conn.closed and not conn.broken
                   and conn.info.transaction_status == TransactionStatus.IDLE)
        with self._lock:
            if healthy and not self._closed and len(self._idle) < self._max_idle \
                    and os.getpid() == self._pid:
                self._idle.append(conn)
                return
        if os.getpid() == self._pid:
            conn.close()

    def _read(self, name: str, params: Sequence[Any] = ()) -> _Rows:
        """Run a read-only statement; once more on a fresh connection if a pooled one was dead."""
        for attempt in (1, 2):
            try:
                with self._connection() as conn:
                    return conn.execute(self._sql[name], params).fetchall()
            except psycopg.OperationalError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _write(self, name: str, params: Sequence[Any] | dict[str, Any]) -> _Rows:
        """Run one statement (its own transaction); rows it returns, if any."""
        with self._connection() as conn:
            cur = conn.execute(self._sql[name], params)
            return cur.fetchall() if cur.description is not None else []

    def close(self) -> None:
        """Close idle connections and stop the listener (idempotent)."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            listener, self._listener = self._listener, None
        if listener is not None:
            wake = idle[0] if idle else None
            listener.close(None if wake is None else partial(
                wake.execute, self._sql["notify"], (self.channel, "")))
        if os.getpid() == self._pid:
            for conn in idle:
                conn.close()

    # -- tasks -------------------------------------------------------------------------

    def get(self, task_id: str, *, owner: str | None = None,
            tenant: str | None = None) -> Task | None:
        stored = self.load(task_id, owner=owner, tenant=tenant)
        return stored.task if stored is not None else None

    def load(self, task_id: str, *, owner: str | None = None,
             tenant: str | None = None) -> StoredTask | None:
        rows = self._read("load", (_esc(task_id), _esc(owner), _esc(tenant)))
        if not rows:
            return None
        body, version, event_seq = rows[0]
        return StoredTask(codec.load_task(body), int(version), int(event_seq))

    def save(self, task: Task, *, expected_version: int | None, owner: str | None = None,
             tenant: str | None = None, events: Sequence[StreamEvent] = (),
             outbox: Sequence[OutboxEntry] = ()) -> int:
        state = task.status.state
        params: dict[str, Any] = {
            "id": _esc(task.id), "owner": _esc(owner), "tenant": _esc(tenant),
            "context": _esc(task.context_id), "state": state.value,
            "terminal": state.is_terminal, "at": sort_key(task)[0], "body": codec.dump_task(task),
            "expected": expected_version, "n": len(events), "max": self._max_events,
            "events": [codec.dump_event(event) for event in events], "channel": self.channel,
            **_outbox_columns(outbox),
        }
        name = "save_new" if expected_version is None else "save"
        with self._connection() as conn:
            row = conn.execute(self._sql[name], params).fetchone()
        if row is None:
            raise ConflictError(f"task {task.id!r} is not at version {expected_version} "
                                "for this owner (or already exists)")
        return int(row[0])

    def list(self, *, owner: str | None = None, tenant: str | None = None,
             context_id: str | None = None, status: TaskState | None = None,
             status_timestamp_after: datetime | None = None, after: TaskCursor | None = None,
             limit: int | None = None) -> Page:
        where, params = _list_filter(owner, tenant, context_id, status, status_timestamp_after)
        table = sql.SQL("{}.a2a_tasks").format(sql.Identifier(self.schema))
        count = sql.SQL("SELECT count(*) FROM {} WHERE {}").format(table, where)
        page_where, page_params = where, list(params)
        if after is not None:
            page_where = sql.SQL("{} AND (status_at, id) < (%s::timestamptz, %s::text)").format(
                where)
            page_params += [as_utc(after[0]), _esc(after[1])]
        page = sql.SQL("SELECT body FROM {} WHERE {} ORDER BY status_at DESC, id DESC "
                       "LIMIT %s").format(table, page_where)
        with self._connection() as conn, conn.transaction():
            # One snapshot for the page and the count.
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            total_row = conn.execute(count, params).fetchone()
            rows = conn.execute(page, [*page_params, limit]).fetchall()
        total = int(total_row[0]) if total_row is not None else 0
        return [codec.load_task(body) for (body,) in rows], total

    def finished_among(self, task_ids: Sequence[str]) -> dict[str, TaskState]:
        if not task_ids:
            return {}
        rows = self._read("finished", ([_esc(task_id) for task_id in task_ids],))
        return {_unesc(task_id): TaskState(state) for task_id, state in rows}

    # -- event log ---------------------------------------------------------------------

    def events_after(self, task_id: str, after_seq: int, *,
                     limit: int | None = None) -> Events:
        rows = self._read("events", (after_seq, limit, _esc(task_id)))
        if not rows:
            return []
        floor = int(rows[0][0])
        if after_seq < floor:
            raise EventsExpiredError(task_id, after_seq, floor)
        return [(int(seq), codec.load_event(body)) for _, seq, body in rows if seq is not None]

    def wait_for_events(self, task_id: str, after_seq: int, timeout: float) -> Events:
        """Wake on NOTIFY; re-read at least every ``poll_interval`` in case one was lost."""
        deadline = time.monotonic() + timeout
        listener = self._listening()
        listener.watch(task_id)
        try:
            while True:
                seen = listener.count(task_id)
                batch = self.events_after(task_id, after_seq)
                left = deadline - time.monotonic()
                if batch or left <= 0:
                    return batch
                listener.wait(task_id, seen, min(left, self._poll))
        finally:
            listener.unwatch(task_id)

    def _listening(self) -> _Listener:
        """This process's listener, started on first use (and again after a fork)."""
        self._after_fork()
        with self._lock:
            listener = self._listener
            if listener is None:
                listener = self._listener = _Listener(self._new_connection, self.channel)
        # The first waiter gives LISTEN a moment, so the common case needs no poll.
        listener.wait_ready(min(1.0, self._poll))
        return listener

    # -- push configs ------------------------------------------------------------------

    def put_push_config(self, config: TaskPushNotificationConfig) -> None:
        config_id = config.push_notification_config.id
        if config_id is None:
            raise ValueError("a stored push config needs an id")
        self._write("put_config", (_esc(config.task_id), _esc(config_id),
                                   codec.dump_push_config(config)))

    def get_push_config(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        rows = self._read("get_config", (_esc(task_id), _esc(config_id)))
        return codec.load_push_config(rows[0][0]) if rows else None

    def list_push_configs(self, task_id: str) -> Configs:
        rows = self._read("list_configs", (_esc(task_id),))
        return [codec.load_push_config(body) for (body,) in rows]

    def delete_push_config(self, task_id: str, config_id: str) -> bool:
        with self._connection() as conn:
            cur = conn.execute(self._sql["delete_config"], (_esc(task_id), _esc(config_id)))
            return cur.rowcount > 0

    # -- push outbox -------------------------------------------------------------------

    def claim_deliveries(self, now: datetime, limit: int, worker_id: str,
                         lease_seconds: float) -> _Deliveries:
        now = as_utc(now)
        rows = self._write("claim", {"now": now, "limit": limit, "worker": _esc(worker_id),
                                     "until": now + timedelta(seconds=lease_seconds)})
        rows.sort(key=lambda row: int(row[0]))
        return [_delivery(row) for row in rows]

    def complete_delivery(self, delivery_id: int) -> None:
        self._write("complete", (delivery_id,))

    def retry_delivery(self, delivery_id: int, next_attempt_at: datetime, error: str) -> None:
        self._write("retry", (as_utc(next_attempt_at), _esc(error), delivery_id))

    def abandon_delivery(self, delivery_id: int, error: str) -> None:
        self._write("abandon", (_esc(error), delivery_id))

    def pending_deliveries(self, task_id: str) -> int:
        return int(self._read("pending", (_esc(task_id),))[0][0])

    # -- leases ------------------------------------------------------------------------

    def acquire_lease(self, task_id: str, worker_id: str, expires_at: datetime, *,
                      now: datetime, owner: str | None = None, tenant: str | None = None,
                      payload: bytes = b"") -> bool:
        rows = self._write("acquire", {"task": _esc(task_id), "worker": _esc(worker_id),
                                       "expires": as_utc(expires_at), "now": as_utc(now),
                                       "owner": _esc(owner), "tenant": _esc(tenant),
                                       "payload": payload})
        return bool(rows)

    def renew_leases(self, worker_id: str, task_ids: Sequence[str],
                     expires_at: datetime) -> set[str]:
        if not task_ids:
            return set()
        rows = self._write("renew", (as_utc(expires_at), _esc(worker_id),
                                     [_esc(task_id) for task_id in task_ids]))
        return {_unesc(task_id) for (task_id,) in rows}

    def release_lease(self, task_id: str, worker_id: str) -> None:
        self._write("release", (_esc(task_id), _esc(worker_id)))

    def expired_leases(self, now: datetime, *, limit: int = 100) -> _Leases:
        rows = self._read("expired", (as_utc(now), limit))
        return [Lease(task_id=_unesc(task_id), worker_id=_unesc(worker_id), expires_at=expires,
                      attempts=int(attempts), owner=_unesc_opt(owner), tenant=_unesc_opt(tenant),
                      payload=bytes(payload))
                for task_id, worker_id, expires, attempts, owner, tenant, payload in rows]

    # -- retention ---------------------------------------------------------------------

    def purge(self, older_than: datetime, *, limit: int | None = None) -> int:
        return len(self._write("purge", (as_utc(older_than), limit)))


#: Connections a forked child inherited (disarmed): kept referenced, never used.
_INHERITED: list[_Conn] = []


def _disarm(conn: _Conn) -> None:
    """Point an inherited connection's descriptor at /dev/null, atomically (dup2).

    Whatever libpq then writes on it (Terminate, when it is finalized) goes
    nowhere, and the descriptor number is never free for another file to reuse.
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


def _list_filter(owner: str | None, tenant: str | None, context_id: str | None,
                 status: TaskState | None,
                 since: datetime | None) -> tuple[sql.Composable, list[Any]]:
    """The WHERE of a listing; ``IS NULL`` spelled out so the (owner, tenant) index is used."""
    clauses: list[sql.Composable] = []
    params: list[Any] = []
    for column, value in (("owner", owner), ("tenant", tenant)):
        if value is None:
            clauses.append(sql.SQL("{} IS NULL").format(sql.Identifier(column)))
        else:
            clauses.append(sql.SQL("{} = %s").format(sql.Identifier(column)))
            params.append(_esc(value))
    if context_id is not None:
        clauses.append(sql.SQL("context_id = %s"))
        params.append(_esc(context_id))
    if status is not None:
        clauses.append(sql.SQL("state = %s"))
        params.append(status.value)
    if since is not None:
        clauses.append(sql.SQL("status_at >= %s"))
        params.append(as_utc(since))
    return sql.SQL(" AND ").join(clauses), params


@overload
def _esc(value: str) -> str: ...
@overload
def _esc(value: None) -> None: ...
@overload
def _esc(value: str | None) -> str | None: ...
def _esc(value: str | None) -> str | None:
    """A key as stored: PostgreSQL text cannot hold NUL, so ``\\`` doubles and NUL is ``\\0``.

    Ids, owners and tenants come from callers; one with a NUL must not make a
    query fail. Bodies are JSON, which escapes NUL itself.
    """
    if value is None or ("\\" not in value and "\x00" not in value):
        return value
    return value.replace("\\", "\\\\").replace("\x00", "\\0")


def _unesc(value: str) -> str:
    """The inverse of :func:`_esc`."""
    if "\\" not in value:
        return value
    return re.sub(r"\\(.)", lambda m: "\x00" if m.group(1) == "0" else m.group(1), value,
                  flags=re.DOTALL)


def _unesc_opt(value: str | None) -> str | None:
    return None if value is None else _unesc(value)


def _outbox_columns(outbox: Sequence[OutboxEntry]) -> dict[str, list[Any]]:
    """The outbox entries as parallel arrays, for one ``unnest`` in the save statement."""
    dues = [None if e.not_before is None else as_utc(e.not_before) for e in outbox]
    return {
        "o_task": [_esc(e.task_id) for e in outbox],
        "o_config": [_esc(e.config_id) for e in outbox],
        "o_seq": [e.seq for e in outbox],
        "o_url": [_esc(e.url) for e in outbox],
        "o_headers": [json.dumps([list(pair) for pair in e.headers]) for e in outbox],
        "o_body": [e.body for e in outbox],
        "o_due": dues,
    }


def _delivery(row: tuple[Any, ...]) -> Delivery:
    """A claimed outbox row as a Delivery (headers stored as a JSON list of pairs)."""
    (number, task_id, config_id, seq, url, headers, body, not_before, attempts,
     last_error) = row
    entry = OutboxEntry(task_id=_unesc(task_id), config_id=_unesc(config_id), seq=int(seq),
                        url=_unesc(url),
                        headers=tuple((str(k), str(v)) for k, v in json.loads(headers)),
                        body=bytes(body), not_before=not_before)
    return Delivery(id=int(number), entry=entry, attempts=int(attempts),
                    last_error=_unesc_opt(last_error))
