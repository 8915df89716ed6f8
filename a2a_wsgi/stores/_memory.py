"""The in-memory store: one process, one lock; for development, tests and one worker."""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from a2a_core.models import StreamEvent, Task, TaskPushNotificationConfig, TaskState

from .._wakeups import Signal
from ._base import (
    Configs,
    ConflictError,
    Deliveries,
    Delivery,
    DuplicateMessageError,
    Events,
    EventsExpiredError,
    Lease,
    LeaseClaim,
    Leases,
    OutboxEntry,
    Page,
    StoredTask,
    TaskCursor,
    TaskStore,
    as_utc,
    message_claim,
    sort_key,
)

__all__ = ["MemoryTaskStore"]


@dataclass(slots=True)
class _Record:
    task: Task
    version: int
    owner: str | None
    tenant: str | None
    seq: int = 0
    floor: int = 0
    events: deque[tuple[int, StreamEvent]] = field(default_factory=deque)


@dataclass(slots=True)
class _Outbox:
    id: int
    entry: OutboxEntry
    due: datetime | None
    attempts: int = 0
    claimed_until: datetime | None = None
    abandoned: bool = False
    last_error: str | None = None


class MemoryTaskStore(TaskStore):
    """A TaskStore in this process's memory, guarded by one lock.

    Everything is lost when the process ends, and one process cannot see
    another's tasks: use it for development, tests and single-worker servers.
    Each task keeps its newest ``max_events`` log entries.
    """

    def __init__(self, *, max_events: int = 1000) -> None:
        self._lock = threading.Lock()
        self._changed = Signal(self._lock)  # (a save notifies only if a stream waits)
        self._tasks: dict[str, _Record] = {}
        #: (owner, tenant, message id, request fingerprint) -> the task that message created.
        self._by_message: dict[tuple[str | None, str | None, str, str], str] = {}
        self._push: dict[str, dict[str, TaskPushNotificationConfig]] = {}
        self._outbox: dict[int, _Outbox] = {}
        self._outbox_ids = itertools.count(1)
        self._leases: dict[str, Lease] = {}
        self._max_events = max_events

    def close(self) -> None:
        """Nothing to release."""

    # -- tasks -------------------------------------------------------------------------

    def _visible(self, task_id: str, owner: str | None, tenant: str | None) -> _Record | None:
        record = self._tasks.get(task_id)
        if record is None or record.owner != owner or record.tenant != tenant:
            return None
        return record

    def load(self, task_id: str, *, owner: str | None = None,
             tenant: str | None = None) -> StoredTask | None:
        with self._lock:
            record = self._visible(task_id, owner, tenant)
            if record is None:
                return None
            return StoredTask(record.task, record.version, record.seq)

    def save(self, task: Task, *, expected_version: int | None, owner: str | None = None,
             tenant: str | None = None, events: Sequence[StreamEvent] = (),
             outbox: Sequence[OutboxEntry] = (), message_id: str | None = None,
             fingerprint: str | None = None, lease: LeaseClaim | None = None) -> int:
        claim = message_claim(message_id, fingerprint)
        with self._lock:
            record = self._tasks.get(task.id)
            current = record.version if record is not None else None
            if current != expected_version:
                raise ConflictError(
                    f"task {task.id!r} is at version {current}, not {expected_version}"
                )
            if record is None:
                if claim is not None:
                    key = (owner, tenant, *claim)
                    taken = self._by_message.get(key)
                    if taken is not None:
                        raise DuplicateMessageError(taken, claim[0])
                    self._by_message[key] = task.id
                record = self._tasks[task.id] = _Record(task, 0, owner, tenant)
            elif record.owner != owner or record.tenant != tenant:
                raise ConflictError(f"task {task.id!r} belongs to another owner")
            record.task, record.version = task, record.version + 1
            for event in events:
                record.seq += 1
                record.events.append((record.seq, event))
            while len(record.events) > self._max_events:
                record.floor = record.events.popleft()[0]
            for entry in outbox:
                number = next(self._outbox_ids)
                due = as_utc(entry.not_before) if entry.not_before is not None else None
                self._outbox[number] = _Outbox(number, entry, due)
            if lease is not None:
                self._take_lease(task.id, lease.worker_id, lease.expires_at, now=lease.now,
                                 owner=owner, tenant=tenant, payload=lease.payload)
            if events:
                self._changed.notify_all()
            return record.version

    def find_by_message(self, message_id: str, *, fingerprint: str, owner: str | None = None,
                        tenant: str | None = None) -> Task | None:
        with self._lock:
            task_id = self._by_message.get((owner, tenant, message_id, fingerprint))
            record = self._visible(task_id, owner, tenant) if task_id is not None else None
            return record.task if record is not None else None

    def list(self, *, owner: str | None = None, tenant: str | None = None,
             context_id: str | None = None, status: TaskState | None = None,
             status_timestamp_after: datetime | None = None, after: TaskCursor | None = None,
             limit: int | None = None) -> Page:
        with self._lock:
            tasks = [r.task for r in self._tasks.values()
                     if r.owner == owner and r.tenant == tenant]
        since = as_utc(status_timestamp_after) if status_timestamp_after is not None else None
        matches = [
            t for t in tasks
            if (context_id is None or t.context_id == context_id)
            and (status is None or t.status.state is status)
            and (since is None or sort_key(t)[0] >= since)
        ]
        matches.sort(key=sort_key, reverse=True)
        page = [t for t in matches if after is None or sort_key(t) < after]
        return (page if limit is None else page[:limit]), len(matches)

    def context_taken(self, context_id: str, *, owner: str | None = None,
                      tenant: str | None = None) -> bool:
        with self._lock:
            return any(r.task.context_id == context_id and (r.owner, r.tenant) != (owner, tenant)
                       for r in self._tasks.values())

    def finished_among(self, task_ids: Sequence[str]) -> dict[str, TaskState]:
        with self._lock:
            found = {i: self._tasks[i].task.status.state for i in task_ids if i in self._tasks}
        return {i: state for i, state in found.items() if state.is_terminal}

    # -- event log ---------------------------------------------------------------------

    def events_after(self, task_id: str, after_seq: int, *,
                     limit: int | None = None) -> Events:
        with self._lock:
            return self._after(task_id, after_seq, limit)

    def wait_for_events(self, task_id: str, after_seq: int, timeout: float) -> Events:
        with self._changed:
            self._changed.wait_for(lambda: self._seq(task_id) > after_seq, timeout)
            return self._after(task_id, after_seq, None)

    def _seq(self, task_id: str) -> int:
        record = self._tasks.get(task_id)
        return record.seq if record is not None else 0

    def _after(self, task_id: str, after_seq: int, limit: int | None) -> Events:
        record = self._tasks.get(task_id)
        if record is None:
            return []
        if after_seq < record.floor:
            raise EventsExpiredError(task_id, after_seq, record.floor)
        found = [entry for entry in record.events if entry[0] > after_seq]
        return found if limit is None else found[:limit]

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

    def list_push_configs(self, task_id: str) -> Configs:
        with self._lock:
            configs = self._push.get(task_id)  # (each save with events asks: mostly none)
            return list(configs.values()) if configs else []

    def delete_push_config(self, task_id: str, config_id: str) -> bool:
        with self._lock:
            return self._push.get(task_id, {}).pop(config_id, None) is not None

    # -- push outbox -------------------------------------------------------------------

    def claim_deliveries(self, now: datetime, limit: int, worker_id: str,
                         lease_seconds: float) -> Deliveries:
        now = as_utc(now)
        claimed: list[Delivery] = []
        with self._lock:
            heads: dict[tuple[str, str], _Outbox] = {}
            for item in sorted(self._outbox.values(), key=lambda o: o.id):
                if not item.abandoned:
                    heads.setdefault((item.entry.task_id, item.entry.config_id), item)
            for item in sorted(heads.values(), key=lambda o: o.id):
                if len(claimed) >= limit:
                    break
                if item.due is not None and item.due > now:
                    continue
                if item.claimed_until is not None and item.claimed_until > now:
                    continue
                item.attempts += 1
                item.claimed_until = now + timedelta(seconds=lease_seconds)
                claimed.append(Delivery(id=item.id, entry=item.entry, attempts=item.attempts,
                                        last_error=item.last_error))
        return claimed

    def complete_delivery(self, delivery_id: int) -> None:
        with self._lock:
            self._outbox.pop(delivery_id, None)

    def retry_delivery(self, delivery_id: int, next_attempt_at: datetime, error: str) -> None:
        with self._lock:
            item = self._outbox.get(delivery_id)
            if item is not None:
                item.due, item.claimed_until = as_utc(next_attempt_at), None
                item.last_error = error

    def abandon_delivery(self, delivery_id: int, error: str) -> None:
        with self._lock:
            item = self._outbox.get(delivery_id)
            if item is not None:
                item.abandoned, item.claimed_until, item.last_error = True, None, error

    def pending_deliveries(self, task_id: str) -> int:
        with self._lock:
            return sum(1 for o in self._outbox.values()
                       if o.entry.task_id == task_id and not o.abandoned)

    # -- leases ------------------------------------------------------------------------

    def acquire_lease(self, task_id: str, worker_id: str, expires_at: datetime, *,
                      now: datetime, owner: str | None = None, tenant: str | None = None,
                      payload: bytes = b"") -> bool:
        with self._lock:
            return self._take_lease(task_id, worker_id, expires_at, now=now, owner=owner,
                                    tenant=tenant, payload=payload)

    def _take_lease(self, task_id: str, worker_id: str, expires_at: datetime, *,
                    now: datetime, owner: str | None, tenant: str | None,
                    payload: bytes) -> bool:
        """acquire_lease with the lock held (a save takes it in the same step)."""
        held = self._leases.get(task_id)
        if held is None:
            attempts = 1
        elif held.worker_id == worker_id:
            attempts = held.attempts
        elif held.expires_at <= as_utc(now):
            attempts = held.attempts + 1
        else:
            return False
        self._leases[task_id] = Lease(task_id=task_id, worker_id=worker_id,
                                      expires_at=as_utc(expires_at), attempts=attempts,
                                      owner=owner, tenant=tenant, payload=payload)
        return True

    def renew_leases(self, worker_id: str, task_ids: Sequence[str],
                     expires_at: datetime) -> set[str]:
        renewed: set[str] = set()
        with self._lock:
            for task_id in task_ids:
                held = self._leases.get(task_id)
                if held is not None and held.worker_id == worker_id:
                    self._leases[task_id] = replace(held, expires_at=as_utc(expires_at))
                    renewed.add(task_id)
        return renewed

    def release_lease(self, task_id: str, worker_id: str) -> None:
        with self._lock:
            held = self._leases.get(task_id)
            if held is not None and held.worker_id == worker_id:
                del self._leases[task_id]

    def expired_leases(self, now: datetime, *, limit: int = 100) -> Leases:
        now = as_utc(now)
        with self._lock:
            found = [lease for lease in self._leases.values() if lease.expires_at <= now]
        found.sort(key=lambda lease: lease.expires_at)
        return found[:limit]

    def get_lease(self, task_id: str) -> Lease | None:
        with self._lock:
            return self._leases.get(task_id)

    # -- retention ---------------------------------------------------------------------

    def purge(self, older_than: datetime, *, limit: int | None = None) -> int:
        cutoff = as_utc(older_than)
        with self._lock:
            doomed = [task_id for task_id, r in self._tasks.items()
                      if r.task.status.state.is_terminal and sort_key(r.task)[0] < cutoff]
            doomed = doomed if limit is None else doomed[:limit]
            for task_id in doomed:
                del self._tasks[task_id]
                self._push.pop(task_id, None)
                self._leases.pop(task_id, None)
            gone = set(doomed)
            for key in [k for k, task_id in self._by_message.items() if task_id in gone]:
                del self._by_message[key]
            for number in [n for n, o in self._outbox.items() if o.entry.task_id in gone]:
                del self._outbox[number]
        return len(doomed)
