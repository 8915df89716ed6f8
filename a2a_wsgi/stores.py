"""Where tasks, their event logs and their push configs live.

A :class:`TaskStore` is shared by every thread of a process (and, for the
durable stores of a later issue, by every process). Two rules make that safe:

* **Versioned compare-and-set.** Each saved task carries a version. ``save``
  names the version it read; if the stored one differs, :class:`ConflictError`
  is raised and the writer re-reads and re-applies its change. Two writers
  (an agent finishing and a cancel) never lose each other's writes, and a
  terminal state, once stored, is seen by every later writer.
* **An event log per task.** Every stream event a save produces is appended,
  in the same step, under a per-task sequence number. Subscribers read the
  current task plus its ``event_seq`` atomically (:meth:`TaskStore.load`) and
  then follow the log from there, so they miss nothing and see nothing twice.

Owner scoping: a task saved with an owner (the caller's identity as a string)
is only visible to that same owner; ``None`` is an owner like any other, so an
anonymous caller cannot see a signed-in caller's tasks either.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Protocol

from a2a_core.models import StreamEvent, Task, TaskPushNotificationConfig, TaskState

__all__ = [
    "ConflictError",
    "StoredTask",
    "TaskCursor",
    "TaskStore",
    "MemoryTaskStore",
    "sort_key",
]

#: A position in the newest-first listing order: (status timestamp, task id), exclusive.
TaskCursor = tuple[datetime, str]

_EPOCH = datetime.min.replace(tzinfo=timezone.utc)

# Aliases defined before the classes: inside them, the ``list`` method shadows the builtin.
_Events = list[tuple[int, StreamEvent]]
_Page = tuple[list[Task], int]
_Configs = list[TaskPushNotificationConfig]


class ConflictError(Exception):
    """The task changed since it was read (or already exists): re-read and retry."""


@dataclass(frozen=True, slots=True)
class StoredTask:
    """A task as stored: its CAS ``version`` and the sequence number of its last event."""

    task: Task
    version: int
    event_seq: int


def sort_key(task: Task) -> TaskCursor:
    """Listing order key: status timestamp (naive read as UTC, missing oldest), then id."""
    stamp = task.status.timestamp
    if stamp is None:
        stamp = _EPOCH
    elif stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=timezone.utc)
    return (stamp, task.id)


class TaskStore(Protocol):
    """The storage interface the runtime needs; see the module docstring for the rules."""

    def get(self, task_id: str, *, owner: str | None = None) -> Task | None:
        """The task, or None when unknown or owned by someone else."""
        ...

    def load(self, task_id: str, *, owner: str | None = None) -> StoredTask | None:
        """Task, version and last event sequence, read together."""
        ...

    def save(
        self,
        task: Task,
        *,
        expected_version: int | None,
        owner: str | None = None,
        events: Sequence[StreamEvent] = (),
    ) -> int:
        """Store ``task`` and append ``events`` atomically; return the new version.

        ``expected_version=None`` creates (ConflictError when the id exists);
        otherwise the stored version must equal it (ConflictError if not).
        """
        ...

    def list(
        self,
        *,
        owner: str | None = None,
        context_id: str | None = None,
        status: TaskState | None = None,
        status_timestamp_after: datetime | None = None,
        after: TaskCursor | None = None,
        limit: int | None = None,
    ) -> _Page:
        """Matching tasks newest first (by status timestamp, then id), from after ``after``,
        at most ``limit``; and the number of all matches (ignoring ``after``/``limit``)."""
        ...

    def put_push_config(self, config: TaskPushNotificationConfig) -> None:
        """Store or replace a config (keyed by task id and config id)."""
        ...

    def get_push_config(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        ...

    def list_push_configs(self, task_id: str) -> _Configs:
        ...

    def delete_push_config(self, task_id: str, config_id: str) -> bool:
        """True when a config was deleted."""
        ...

    def append_event(self, task_id: str, event: StreamEvent) -> int:
        """Append one event to the task's log; returns its sequence number (from 1)."""
        ...

    def events_after(self, task_id: str, seq: int) -> _Events:
        """The logged events with a sequence number above ``seq``, oldest first."""
        ...

    def wait_for_events(
        self, task_id: str, after_seq: int, timeout: float
    ) -> _Events:
        """Like events_after, but block up to ``timeout`` seconds until there is one."""
        ...


@dataclass(slots=True)
class _Record:
    task: Task
    version: int
    owner: str | None


class MemoryTaskStore:
    """A TaskStore in this process's memory, guarded by one lock.

    Everything is lost when the process ends, and one process cannot see
    another's tasks: use it for development, tests and single-worker servers.
    Each task keeps its newest ``max_events`` log entries.
    """

    def __init__(self, *, max_events: int = 1000) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._tasks: dict[str, _Record] = {}
        self._events: dict[str, deque[tuple[int, StreamEvent]]] = {}
        self._seq: dict[str, int] = {}
        self._push: dict[str, dict[str, TaskPushNotificationConfig]] = {}
        self._max_events = max_events

    # -- tasks -------------------------------------------------------------------------

    def get(self, task_id: str, *, owner: str | None = None) -> Task | None:
        stored = self.load(task_id, owner=owner)
        return stored.task if stored is not None else None

    def load(self, task_id: str, *, owner: str | None = None) -> StoredTask | None:
        with self._lock:
            record = self._tasks.get(task_id)
            if record is None or record.owner != owner:
                return None
            return StoredTask(record.task, record.version, self._seq.get(task_id, 0))

    def save(
        self,
        task: Task,
        *,
        expected_version: int | None,
        owner: str | None = None,
        events: Sequence[StreamEvent] = (),
    ) -> int:
        with self._lock:
            record = self._tasks.get(task.id)
            current = record.version if record is not None else None
            if current != expected_version:
                raise ConflictError(
                    f"task {task.id!r} is at version {current}, not {expected_version}"
                )
            if record is not None and record.owner != owner:
                raise ConflictError(f"task {task.id!r} belongs to another owner")
            version = (current or 0) + 1
            self._tasks[task.id] = _Record(task, version, owner)
            for event in events:
                self._append(task.id, event)
            if events:
                self._changed.notify_all()
            return version

    def list(
        self,
        *,
        owner: str | None = None,
        context_id: str | None = None,
        status: TaskState | None = None,
        status_timestamp_after: datetime | None = None,
        after: TaskCursor | None = None,
        limit: int | None = None,
    ) -> _Page:
        with self._lock:
            tasks = [r.task for r in self._tasks.values() if r.owner == owner]
        since = _as_utc(status_timestamp_after)
        matches = [
            t
            for t in tasks
            if (context_id is None or t.context_id == context_id)
            and (status is None or t.status.state is status)
            and (since is None or sort_key(t)[0] >= since)
        ]
        matches.sort(key=sort_key, reverse=True)
        page = [t for t in matches if after is None or sort_key(t) < after]
        return (page if limit is None else page[:limit]), len(matches)

    # -- push configs ------------------------------------------------------------------

    def put_push_config(self, config: TaskPushNotificationConfig) -> None:
        config_id = config.push_notification_config.id
        if config_id is None:
            raise ValueError("a stored push config needs an id")
        with self._lock:
            self._push.setdefault(config.task_id, {})[config_id] = config

    def get_push_config(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        with self._lock:
            return self._push.get(task_id, {}).get(config_id)

    def list_push_configs(self, task_id: str) -> _Configs:
        with self._lock:
            return list(self._push.get(task_id, {}).values())

    def delete_push_config(self, task_id: str, config_id: str) -> bool:
        with self._lock:
            return self._push.get(task_id, {}).pop(config_id, None) is not None

    # -- event log ---------------------------------------------------------------------

    def append_event(self, task_id: str, event: StreamEvent) -> int:
        with self._lock:
            seq = self._append(task_id, event)
            self._changed.notify_all()
            return seq

    def events_after(self, task_id: str, seq: int) -> _Events:
        with self._lock:
            return self._after(task_id, seq)

    def wait_for_events(
        self, task_id: str, after_seq: int, timeout: float
    ) -> _Events:
        with self._changed:
            self._changed.wait_for(lambda: self._seq.get(task_id, 0) > after_seq, timeout)
            return self._after(task_id, after_seq)

    def _append(self, task_id: str, event: StreamEvent) -> int:
        """Add to the log (lock held) and drop the oldest entries beyond ``max_events``."""
        seq = self._seq.get(task_id, 0) + 1
        self._seq[task_id] = seq
        log = self._events.setdefault(task_id, deque(maxlen=self._max_events))
        log.append((seq, event))
        return seq

    def _after(self, task_id: str, seq: int) -> _Events:
        return [entry for entry in self._events.get(task_id, ()) if entry[0] > seq]


def _as_utc(stamp: datetime | None) -> datetime | None:
    """A filter timestamp comparable with :func:`sort_key` (naive read as UTC)."""
    if stamp is None or stamp.tzinfo is not None:
        return stamp
    return stamp.replace(tzinfo=timezone.utc)
