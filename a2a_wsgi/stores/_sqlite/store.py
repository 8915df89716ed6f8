"""The SQLite store: the embedded default when several processes on one host serve.

Every gunicorn worker opens the same file. WAL mode lets readers run while one
writer writes; every write is one ``BEGIN IMMEDIATE`` transaction (so the
compare-and-set read and the write cannot interleave with another process's),
and a writer waits up to ``busy_timeout`` for the lock instead of failing
(:mod:`.connections` says how, for threads and for gevent). The schema is
created and upgraded by the library (:mod:`.schema`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from a2a_core.models import StreamEvent, Task, TaskState

from .._base import (
    ConflictError,
    DuplicateMessageError,
    Events,
    EventsExpiredError,
    LeaseClaim,
    OutboxEntry,
    Page,
    StoredTask,
    StoreOpenError,
    TaskCursor,
    TaskStore,
    message_claim,
    sort_key,
    to_micros,
)
from .._codec import (
    dump_event,
    dump_task,
    load_event,
    load_task,
)
from .._parts import SavedTasks, attach_parts, without_parts
from .connections import SQLiteBase
from .leases import SQLiteLeases, take_lease
from .parts import read_parts, write_parts
from .push import SQLitePush
from .schema import SCHEMA_VERSION, migrate

__all__ = ["SQLiteTaskStore", "default_sqlite_path", "SCHEMA_VERSION"]



#: How a wait looks at its task's sequence number: every 1 ms for its first 10 ms, then
#: each pause 1.5 times the last, at most 250 ms. Another process's write (a queue
#: worker's run, a web worker's cancel) is seen within 1 ms when it comes soon, else
#: within a third of the time it took, for ~25 cheap reads in a wait's first second; a
#: wait cut short by its caller's slice resumes at the pause it had reached while the
#: task has not moved (:class:`_Backoff`).
_POLL_FIRST, _POLL_BRISK, _POLL_GROWTH, _POLL_MAX = 0.001, 0.01, 1.5, 0.25


def default_sqlite_path() -> str:
    """``$A2A_DB`` when set, else ``a2a-tasks.sqlite3`` in the working directory."""
    return os.environ.get("A2A_DB") or str(Path.cwd() / "a2a-tasks.sqlite3")


def _make_folder(path: str) -> None:
    """Create the folder the file goes in (``A2A_DB=/var/lib/my-agent/tasks.sqlite3``
    before ``/var/lib/my-agent`` exists), or say in one line why it cannot be."""
    if path == ":memory:" or path.startswith("file:"):
        return  # no folder: an in-memory database, or a URI SQLite parses itself
    folder = Path(path).parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise StoreOpenError(
            f"cannot create the folder {folder} for the SQLite file {path}: {reason} "
            "(create it, or set A2A_DB to a path this user can write)") from exc


class SQLiteTaskStore(SQLitePush, SQLiteLeases, SQLiteBase, TaskStore):
    """A TaskStore in one SQLite file, safe for many threads and processes of one host.

    ``path`` defaults to :func:`default_sqlite_path`. ``busy_timeout`` (seconds)
    is how long a writer waits for another's transaction. ``max_events`` bounds
    each task's event log (older entries are dropped; replaying from before
    them is an EventsExpiredError).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, max_events: int = 1000,
                 busy_timeout: float = 30.0) -> None:
        super().__init__(str(path) if path is not None else default_sqlite_path(),
                         busy_timeout=busy_timeout)
        self._max_events = max_events
        self._saved = SavedTasks()
        self._backoff = _Backoff()
        _make_folder(self.path)
        try:
            self._migrate()
        except sqlite3.OperationalError as exc:
            if "unable to open" not in str(exc):
                raise
            raise StoreOpenError(
                f"cannot open the SQLite file {self.path}: {exc} (check that this user may "
                "write to its folder, or set A2A_DB to another path)") from exc

    def _migrate(self) -> None:
        """Create or upgrade the schema, once, whoever else is starting now."""
        with self._write() as conn:
            migrate(conn, self.path)

    def schema_version(self) -> int:
        row = self._conn().execute("SELECT version FROM a2a_schema_version").fetchone()
        return int(row[0])

    # -- tasks -------------------------------------------------------------------------

    def load(self, task_id: str, *, owner: str | None = None,
             tenant: str | None = None) -> StoredTask | None:
        with self._read() as conn:
            row = conn.execute(
                "SELECT version, event_seq FROM a2a_tasks "
                "WHERE id = ? AND owner IS ? AND tenant IS ?", (task_id, owner, tenant)).fetchone()
            if row is None:
                return None
            saved = self._saved.get(task_id, row[0])
            if saved is not None:  # the version this process saved last: no need to read it
                return StoredTask(saved, row[0], row[1])
            body = conn.execute("SELECT body FROM a2a_tasks WHERE id = ?", (task_id,)).fetchone()
            task = self._with_parts(conn, [load_task(body[0])])[0]
        return StoredTask(task, row[0], row[1])

    @staticmethod
    def _with_parts(conn: sqlite3.Connection, tasks: list[Task]) -> list[Task]:
        """Tasks read from bodies, with their artifacts' parts from ``a2a_parts``."""
        parts = read_parts(conn, [task.id for task in tasks if task.artifacts])
        return [attach_parts(task, parts.get(task.id, {})) for task in tasks]

    def save(self, task: Task, *, expected_version: int | None, owner: str | None = None,
             tenant: str | None = None, events: Sequence[StreamEvent] = (),
             outbox: Sequence[OutboxEntry] = (), message_id: str | None = None,
             fingerprint: str | None = None, lease: LeaseClaim | None = None) -> int:
        claim = message_claim(message_id, fingerprint)
        body = dump_task(without_parts(task))
        before = self._saved.get(task.id, expected_version) if expected_version else None
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
            write_parts(conn, task, before)
            conn.executemany(
                "INSERT INTO a2a_outbox (task_id, config_id, seq, url, headers, body, "
                "next_attempt_us) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(e.task_id, e.config_id, e.seq, e.url, json.dumps([list(h) for h in e.headers]),
                  e.body, to_micros(e.not_before) if e.not_before is not None else 0)
                 for e in outbox])
            if lease is not None:
                take_lease(conn, task.id, lease.worker_id, lease.expires_at, now=lease.now,
                           owner=owner, tenant=tenant, payload=lease.payload)
        self._saved.put(task, version)  # committed: the next append starts from it
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
        with self._read() as conn:  # the body and its parts from one snapshot
            row = conn.execute(
                "SELECT t.body FROM a2a_task_messages m JOIN a2a_tasks t ON t.id = m.task_id "
                "WHERE m.scope = ? AND m.message_id = ? AND m.fingerprint = ? "
                "AND t.owner IS ? AND t.tenant IS ?",
                (json.dumps([owner, tenant]), message_id, fingerprint, owner, tenant)).fetchone()
            if row is None:
                return None
            return self._with_parts(conn, [load_task(row[0])])[0]

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
            tasks = self._with_parts(conn, [load_task(row[0]) for row in rows])
        return tasks, int(total)

    def context_taken(self, context_id: str, *, owner: str | None = None,
                      tenant: str | None = None) -> bool:
        row = self._conn().execute(
            "SELECT 1 FROM a2a_tasks WHERE context_id = ? AND NOT (owner IS ? AND tenant IS ?) "
            "LIMIT 1", (context_id, owner, tenant)).fetchone()
        return row is not None

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
        """Poll the task's last sequence number: every 1 ms at first, backing off to 250 ms."""
        started = time.monotonic()
        deadline = started + timeout
        pause = self._backoff.resume(task_id, after_seq)
        conn = self._conn()
        while True:
            row = conn.execute("SELECT event_seq FROM a2a_tasks WHERE id = ?",
                               (task_id,)).fetchone()
            if row is not None and row[0] > after_seq:
                return self.events_after(task_id, after_seq)
            left = deadline - time.monotonic()
            if left <= 0:
                self._backoff.keep(task_id, after_seq, pause)
                return []
            time.sleep(min(pause, left))
            if pause > _POLL_FIRST or time.monotonic() - started >= _POLL_BRISK:
                pause = min(pause * _POLL_GROWTH, _POLL_MAX)

    # -- retention ---------------------------------------------------------------------

    def purge(self, older_than: datetime, *, limit: int | None = None) -> int:
        with self._write() as conn:
            ids = [row[0] for row in conn.execute(
                "SELECT id FROM a2a_tasks WHERE terminal = 1 AND status_us < ? LIMIT ?",
                (to_micros(older_than), -1 if limit is None else limit))]
            self._saved.forget(ids)
            for table, column in (("a2a_events", "task_id"), ("a2a_parts", "task_id"),
                                  ("a2a_push_configs", "task_id"),
                                  ("a2a_leases", "task_id"), ("a2a_outbox", "task_id"),
                                  ("a2a_task_messages", "task_id"), ("a2a_tasks", "id")):
                conn.executemany(f"DELETE FROM {table} WHERE {column} = ?",
                                 [(task_id,) for task_id in ids])
        return len(ids)


class _Backoff:
    """Where each task's waits left off: a wait that timed out on a task that has not
    moved since resumes at the pause it reached, so a long quiet wait cut into slices
    (a stream's waiter, a blocking send's) costs a look every 250 ms, not a fresh
    1-ms start every slice. Bounded: past 4096 tasks it forgets them all."""

    def __init__(self) -> None:
        self._left: dict[str, tuple[int, float]] = {}

    def resume(self, task_id: str, after_seq: int) -> float:
        left = self._left.pop(task_id, None)
        return left[1] if left is not None and left[0] == after_seq else _POLL_FIRST

    def keep(self, task_id: str, after_seq: int, pause: float) -> None:
        if len(self._left) >= 4096:
            self._left.clear()
        self._left[task_id] = (after_seq, pause)
