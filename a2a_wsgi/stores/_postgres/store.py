"""The PostgreSQL task store: the :class:`~a2a_wsgi.stores._base.TaskStore` rules, kept by
the database so that they hold across hosts (the package docstring says how)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import psycopg

from a2a_core.models import StreamEvent, Task, TaskPushNotificationConfig, TaskState

from .. import _codec as codec
from .._base import (
    Configs,
    ConflictError,
    Delivery,
    DuplicateMessageError,
    Events,
    EventsExpiredError,
    Lease,
    LeaseClaim,
    OutboxEntry,
    Page,
    StoredTask,
    TaskCursor,
    TaskStore,
    as_utc,
    message_claim,
    sort_key,
)
from .._parts import SavedTasks, attach_parts, without_parts
from . import rows
from .listener import Listener
from .parts import part_params, parts_from, parts_rows
from .pool import Pool
from .rows import esc, unesc
from .schema import (
    DEFAULT_APPLICATION_NAME,
    DEFAULT_SCHEMA,
    Conn,
    check_version,
    checked_schema,
    connect,
    split_schema,
)
from .schema import upgrade as upgrade_tables
from .statements import list_queries, render, save_name

__all__ = ["ANSWER_GRACE", "PostgresTaskStore"]

#: Seconds past ``statement_timeout`` before an unanswered call's connection is cut: the
#: server's own cancel normally arrives within milliseconds of the timeout.
ANSWER_GRACE = 2.0

# Aliases defined before the class: inside it, the ``list`` method shadows the builtin.
_Deliveries = list[Delivery]
_Leases = list[Lease]
_Conns = list[Conn]


class PostgresTaskStore(TaskStore):
    """A :class:`~a2a_wsgi.stores._base.TaskStore` in PostgreSQL (psycopg 3).

    ``url`` is a ``postgresql://`` URL (``?schema=NAME`` is understood) or a
    libpq keyword string. ``upgrade=True`` creates or upgrades the tables at
    start-up; with False a schema at another version is an error (run
    ``a2a db upgrade URL``). ``max_events`` caps each task's log; ``max_idle``
    caps the idle connections kept per process; ``poll_interval`` bounds how long
    a lost notification can delay a waiting stream; ``application_name`` is how
    the connections show in ``pg_stat_activity``; ``prepare_threshold`` is
    psycopg's: executions of a statement on one connection before it is prepared
    on the server (None: never, for a pooler that cannot keep prepared statements).

    ``statement_timeout`` (seconds; None: unbounded) is set on every connection,
    so the server cancels a statement that runs longer; and since a database that
    cannot be heard cancels nothing, a call left unanswered ``ANSWER_GRACE``
    seconds past it has its connection cut (:class:`~.pool.DatabaseTimeout`).
    ``connect_timeout`` bounds opening a connection. Either way the caller gets
    an error in bounded time (a JSON-RPC -32603 through :class:`~a2a_wsgi.A2AApp`).
    """

    def __init__(self, url: str, *, schema: str | None = None, upgrade: bool = True,
                 max_events: int = 1000, max_idle: int = 8, poll_interval: float = 1.0,
                 connect_timeout: float = 10.0, statement_timeout: float | None = 30.0,
                 application_name: str = DEFAULT_APPLICATION_NAME,
                 prepare_threshold: int | None = 5) -> None:
        conninfo, from_url = split_schema(url)
        self.schema = checked_schema(schema or from_url or DEFAULT_SCHEMA)
        self.channel = f"a2a_events_{self.schema}"[:63]
        self._max_events, self._poll = max_events, poll_interval
        if statement_timeout is not None and statement_timeout <= 0:
            raise ValueError("statement_timeout must be positive (or None for no bound)")
        self._connect = partial(_connect, conninfo, connect_timeout, application_name,
                                prepare_threshold, statement_timeout)
        deadline = None if statement_timeout is None else statement_timeout + ANSWER_GRACE
        self._pool = Pool(self._connect, max_idle=max_idle, deadline=deadline)
        self._pool.on_fork(self._forget_listener)
        self._lock = threading.Lock()
        self._listener: Listener | None = None
        self._saved = SavedTasks()
        try:
            with self._pool.connection(statements=None) as conn:
                if upgrade:
                    upgrade_tables(conn, self.schema)
                else:
                    check_version(conn, self.schema)
                # The schema never changes: each statement is rendered once, here.
                self._sql = render(self.schema, conn)
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"PostgresTaskStore(schema={self.schema!r})"

    def close(self) -> None:
        """Stop the listener and close idle connections (idempotent)."""
        with self._lock:
            listener, self._listener = self._listener, None
        if listener is not None:
            listener.close(partial(self._pool.execute_if_idle, self._sql["notify"],
                                   (self.channel, "")))
        self._pool.close()

    # -- tasks -------------------------------------------------------------------------

    def load(self, task_id: str, *, owner: str | None = None,
             tenant: str | None = None) -> StoredTask | None:
        known = self._saved.version_of(task_id)
        for _ in (1, 2):
            found = self._pool.read(self._sql["load"], {
                "id": esc(task_id), "owner": esc(owner), "tenant": esc(tenant), "known": known})
            if not found:
                return None
            body, version, event_seq, artifacts, bodies = found[0]
            if body is not None:
                task = attach_parts(codec.load_task(body), parts_from(artifacts, bodies))
                return StoredTask(task, int(version), int(event_seq))
            saved = self._saved.get(task_id, int(version))
            if saved is not None:  # the version this process saved last: not read again
                return StoredTask(saved, int(version), int(event_seq))
            known = None  # another thread of this process saved since: read it all
        raise AssertionError("unreachable")

    def save(self, task: Task, *, expected_version: int | None, owner: str | None = None,
             tenant: str | None = None, events: Sequence[StreamEvent] = (),
             outbox: Sequence[OutboxEntry] = (), message_id: str | None = None,
             fingerprint: str | None = None, lease: LeaseClaim | None = None) -> int:
        claim = message_claim(message_id, fingerprint)
        state = task.status.state
        params: dict[str, Any] = {
            "id": esc(task.id), "owner": esc(owner), "tenant": esc(tenant),
            "context": esc(task.context_id), "state": state.value,
            "terminal": state.is_terminal, "at": sort_key(task)[0],
            "body": codec.dump_task(without_parts(task)),
            "expected": expected_version, "n": len(events), "max": self._max_events,
            "events": [codec.dump_event(event) for event in events], "channel": self.channel,
        }
        if outbox:
            params.update(rows.outbox_columns(outbox))
        if expected_version is None:
            message_id, fingerprint = claim or (None, None)
            params.update(scope=json.dumps([owner, tenant]), message=esc(message_id),
                          fingerprint=esc(fingerprint))
        if lease is not None:
            params.update(l_worker=esc(lease.worker_id), l_expires=as_utc(lease.expires_at),
                          l_now=as_utc(lease.now), l_payload=lease.payload)
        before = self._saved.get(task.id, expected_version) if expected_version else None
        parts = part_params(task, before, new=expected_version is None)
        if parts is not None:
            params.update(parts)
        query = self._sql[save_name(expected_version is None, bool(outbox), lease is not None,
                                    parts is not None)]
        try:
            written = self._pool.write(query, params)
        except psycopg.errors.UniqueViolation:
            if claim is None:
                raise
            taken = self._pool.read(self._sql["message_task"],
                                    (params["scope"], params["message"], params["fingerprint"]))
            if not taken:
                raise
            raise DuplicateMessageError(unesc(taken[0][0]), claim[0]) from None
        if not written:
            raise ConflictError(f"task {task.id!r} is not at version {expected_version} "
                                "for this owner (or already exists)")
        version = int(written[0][0])
        self._saved.put(task, version)  # committed: the next append starts from it
        return version

    def find_by_message(self, message_id: str, *, fingerprint: str, owner: str | None = None,
                        tenant: str | None = None) -> Task | None:
        found = self._pool.read(self._sql["by_message"], (
            json.dumps([owner, tenant]), esc(message_id), esc(fingerprint), esc(owner),
            esc(tenant)))
        if not found:
            return None
        body, artifacts, bodies = found[0]
        return attach_parts(codec.load_task(body), parts_from(artifacts, bodies))

    def list(self, *, owner: str | None = None, tenant: str | None = None,
             context_id: str | None = None, status: TaskState | None = None,
             status_timestamp_after: datetime | None = None, after: TaskCursor | None = None,
             limit: int | None = None) -> Page:
        count, params, page, page_params = list_queries(
            self._sql, owner, tenant, context_id, status, status_timestamp_after, after)
        with self._pool.connection(statements=3) as conn, conn.transaction():
            # One snapshot for the page, its parts and the count.
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            total_row = conn.execute(count, params).fetchone()
            found = conn.execute(page, [*page_params, limit]).fetchall()
            tasks = [codec.load_task(body) for body, _ in found]
            ids = [task_id for (_, task_id), task in zip(found, tasks, strict=True)
                   if task.artifacts]
            parts = parts_rows(conn.execute(self._sql["parts"], (ids,)).fetchall()) if ids else {}
        total = int(total_row[0]) if total_row is not None else 0
        return [attach_parts(task, parts.get(task.id, {})) for task in tasks], total

    def context_taken(self, context_id: str, *, owner: str | None = None,
                      tenant: str | None = None) -> bool:
        return bool(self._pool.read(self._sql["context_taken"],
                                    (esc(context_id), esc(owner), esc(tenant))))

    def finished_among(self, task_ids: Sequence[str]) -> dict[str, TaskState]:
        if not task_ids:
            return {}
        found = self._pool.read(self._sql["finished"], ([esc(task_id) for task_id in task_ids],))
        return {unesc(task_id): TaskState(state) for task_id, state in found}

    # -- event log ---------------------------------------------------------------------

    def events_after(self, task_id: str, after_seq: int, *,
                     limit: int | None = None) -> Events:
        found = self._pool.read(self._sql["events"], (after_seq, limit, esc(task_id)))
        if not found:
            return []
        floor = int(found[0][0])
        if after_seq < floor:
            raise EventsExpiredError(task_id, after_seq, floor)
        return [(int(seq), codec.load_event(body)) for _, seq, body in found if seq is not None]

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

    def _listening(self) -> Listener:
        """This process's listener, started on first use (and again after a fork)."""
        self._pool.check_fork()
        with self._lock:
            listener = self._listener
            if listener is None:
                listener = self._listener = Listener(self._connect, self.channel)
        # The first waiter gives LISTEN a moment, so the common case needs no poll.
        listener.wait_ready(min(1.0, self._poll))
        return listener

    def _forget_listener(self) -> _Conns:
        """After a fork: the parent's listener is not ours (its connection is disarmed)."""
        listener, self._listener = self._listener, None
        return [listener.conn] if listener is not None and listener.conn is not None else []

    # -- push configs ------------------------------------------------------------------

    def put_push_config(self, config: TaskPushNotificationConfig) -> None:
        config_id = config.push_notification_config.id
        if config_id is None:
            raise ValueError("a stored push config needs an id")
        self._pool.write(self._sql["put_config"], (esc(config.task_id), esc(config_id),
                                                    codec.dump_push_config(config)))

    def get_push_config(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        found = self._pool.read(self._sql["get_config"], (esc(task_id), esc(config_id)))
        return codec.load_push_config(found[0][0]) if found else None

    def list_push_configs(self, task_id: str) -> Configs:
        found = self._pool.read(self._sql["list_configs"], (esc(task_id),))
        return [codec.load_push_config(body) for (body,) in found]

    def delete_push_config(self, task_id: str, config_id: str) -> bool:
        return self._pool.rowcount(self._sql["delete_config"], (esc(task_id), esc(config_id))) > 0

    # -- push outbox -------------------------------------------------------------------

    def claim_deliveries(self, now: datetime, limit: int, worker_id: str,
                         lease_seconds: float) -> _Deliveries:
        now = as_utc(now)
        claimed = self._pool.write(self._sql["claim"], {
            "now": now, "limit": limit, "worker": esc(worker_id),
            "until": now + timedelta(seconds=lease_seconds)})
        claimed.sort(key=lambda row: int(row[0]))
        return [rows.delivery(row) for row in claimed]

    def complete_delivery(self, delivery_id: int) -> None:
        self._pool.write(self._sql["complete"], (delivery_id,))

    def retry_delivery(self, delivery_id: int, next_attempt_at: datetime, error: str) -> None:
        self._pool.write(self._sql["retry"], (as_utc(next_attempt_at), esc(error), delivery_id))

    def abandon_delivery(self, delivery_id: int, error: str) -> None:
        self._pool.write(self._sql["abandon"], (esc(error), delivery_id))

    def pending_deliveries(self, task_id: str) -> int:
        return int(self._pool.read(self._sql["pending"], (esc(task_id),))[0][0])

    # -- leases ------------------------------------------------------------------------

    def acquire_lease(self, task_id: str, worker_id: str, expires_at: datetime, *,
                      now: datetime, owner: str | None = None, tenant: str | None = None,
                      payload: bytes = b"") -> bool:
        return bool(self._pool.write(self._sql["acquire"], {
            "task": esc(task_id), "worker": esc(worker_id), "expires": as_utc(expires_at),
            "now": as_utc(now), "owner": esc(owner), "tenant": esc(tenant),
            "payload": payload}))

    def renew_leases(self, worker_id: str, task_ids: Sequence[str],
                     expires_at: datetime) -> set[str]:
        if not task_ids:
            return set()
        renewed = self._pool.write(self._sql["renew"], (
            as_utc(expires_at), esc(worker_id), [esc(task_id) for task_id in task_ids]))
        return {unesc(task_id) for (task_id,) in renewed}

    def release_lease(self, task_id: str, worker_id: str) -> None:
        self._pool.write(self._sql["release"], (esc(task_id), esc(worker_id)))

    def expired_leases(self, now: datetime, *, limit: int = 100) -> _Leases:
        return [rows.lease(row) for row in self._pool.read(self._sql["expired"],
                                                             (as_utc(now), limit))]

    def get_lease(self, task_id: str) -> Lease | None:
        found = self._pool.read(self._sql["lease"], (esc(task_id),))
        return rows.lease(found[0]) if found else None

    # -- retention ---------------------------------------------------------------------

    def purge(self, older_than: datetime, *, limit: int | None = None) -> int:
        purged = self._pool.write(self._sql["purge"], (as_utc(older_than), limit))
        self._saved.forget(unesc(task_id) for (task_id,) in purged)
        return len(purged)


def _connect(conninfo: str, connect_timeout: float, application_name: str,
             prepare_threshold: int | None, statement_timeout: float | None) -> Conn:
    """A new connection of this store (see :func:`.schema.connect`)."""
    conn = connect(conninfo, connect_timeout=connect_timeout, application_name=application_name,
                   statement_timeout=statement_timeout)
    conn.prepare_threshold = prepare_threshold
    return conn
