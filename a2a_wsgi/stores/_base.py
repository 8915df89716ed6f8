"""The store interface every implementation (memory, SQLite, PostgreSQL) honours.

A :class:`TaskStore` is shared by every thread of a process and, for the
durable stores, by every process and host. These rules make that safe:

* **Versioned compare-and-set.** Each saved task carries a version. ``save``
  names the version it read; if the stored one differs, :class:`ConflictError`
  is raised and the writer re-reads and re-applies its change. Two writers
  (an agent finishing and a cancel on another worker) never lose each other's
  writes, and a terminal state, once stored, is seen by every later writer.
* **An append-only event log per task,** written in the same transaction as
  the task. After a save the new events are numbered ``event_seq + 1 …`` of
  the version read, so subscribers that read a task with its ``event_seq``
  (:meth:`TaskStore.load`) and follow the log from there miss nothing and see
  nothing twice, on any worker. A cursor older than the retained log raises
  :class:`EventsExpiredError`: a gap is an error, never a silent loss.
* **Scoping.** A task is stored with its owner (the caller's identity as a
  string) and tenant; every task query is scoped by both, and ``None`` is a
  value like any other. A task of another caller is exactly like a missing one.
* **The push outbox** is written in the same transaction as the events that
  cause it, so a notification is never lost between "task saved" and "POST
  queued"; deliveries are claimed per (task, config) oldest first, so each
  webhook sees a task's events in order.
* **Leases** say which worker runs a task. The worker renews them; when it dies
  the lease expires and any other worker's reaper takes it over atomically.
* **Message claims.** A new task may be saved with the id and the request
  fingerprint (:func:`a2a_core._idempotency.request_fingerprint`) of the message
  that created it; (owner, tenant, message id, fingerprint) then names at most
  one task, so a retried send finds it and a reused id with another request
  does not.

Times are aware UTC datetimes passed in by the caller; stores never guess the time.
The contracts are exported by :mod:`a2a_wsgi.stores` (its ``__all__``); the helpers
here (:func:`as_utc`, :func:`sort_key`, …) serve the implementations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Protocol, runtime_checkable

from a2a_core.models import StreamEvent, Task, TaskPushNotificationConfig, TaskState

#: The fingerprint of message claims recorded before fingerprints were (schema version 2).
#: Real fingerprints are 64 hex digits, so these never match one: a send made before the
#: upgrade and retried after it is taken for a new send.
LEGACY_FINGERPRINT = "legacy"

#: A position in the newest-first listing order: (status timestamp, task id), exclusive.
TaskCursor = tuple[datetime, str]

EPOCH_MIN = datetime.min.replace(tzinfo=timezone.utc)
_UNIX = datetime(1970, 1, 1, tzinfo=timezone.utc)

# Aliases defined before the Protocol: inside it, the ``list`` method shadows the builtin.
Events = list[tuple[int, StreamEvent]]
Page = tuple[list[Task], int]
Configs = list[TaskPushNotificationConfig]


class ConflictError(Exception):
    """The task changed since it was read (or already exists): re-read and retry."""


class DuplicateMessageError(ConflictError):
    """A new task's creating message (id and request fingerprint) was already claimed
    by this owner and tenant.

    A client retrying a send re-sends the same request:
    the runtime answers ``task_id``, the task that message already created.
    """

    def __init__(self, task_id: str, message_id: str) -> None:
        super().__init__(f"message {message_id!r} already created task {task_id!r}")
        self.task_id, self.message_id = task_id, message_id


class StoreOpenError(RuntimeError):
    """The store cannot be opened where it was configured (a path, a folder, a permission).

    Its message is one line naming the place and what is wrong, so that a server
    that refuses to start says so without a traceback (``a2a serve`` prints it).
    """


class EventsExpiredError(Exception):
    """The events after a replay cursor are no longer all stored (trimmed or purged)."""

    def __init__(self, task_id: str, after_seq: int, floor: int) -> None:
        super().__init__(
            f"events of task {task_id} after #{after_seq} are no longer available "
            f"(the log now starts after #{floor})"
        )
        self.task_id, self.after_seq, self.floor = task_id, after_seq, floor


@dataclass(frozen=True, slots=True)
class StoredTask:
    """A task as stored: its CAS ``version`` and the sequence number of its last event."""

    task: Task
    version: int
    event_seq: int


@dataclass(frozen=True, slots=True, kw_only=True)
class OutboxEntry:
    """One webhook POST to make, queued in the same transaction as the event ``seq``."""

    task_id: str
    config_id: str
    seq: int
    url: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    #: Not due before this moment (None: due at once).
    not_before: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Delivery:
    """An outbox entry claimed by one worker; ``attempts`` counts this claim."""

    id: int
    entry: OutboxEntry
    attempts: int
    last_error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Lease:
    """Which worker runs a task, until when; ``payload`` is the runtime's, opaque here."""

    task_id: str
    worker_id: str
    expires_at: datetime
    attempts: int
    owner: str | None = None
    tenant: str | None = None
    payload: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaseClaim:
    """A lease taken by the save that acknowledges a task (see :meth:`TaskRecords.save`),
    so a crash between the answer and the run is recovered like one during the run."""

    worker_id: str
    expires_at: datetime
    #: The moment that decides whether another worker's lease has expired.
    now: datetime
    payload: bytes = b""


Deliveries = list[Delivery]
Leases = list[Lease]


def message_claim(message_id: str | None, fingerprint: str | None) -> tuple[str, str] | None:
    """(message id, fingerprint) of a save that claims its creating message, else None."""
    if message_id is None and fingerprint is None:
        return None
    if message_id is None or fingerprint is None:
        raise ValueError("a message claim needs both message_id and fingerprint")
    return message_id, fingerprint


def as_utc(stamp: datetime) -> datetime:
    """Naive timestamps are read as UTC, so they compare with aware ones."""
    return stamp.replace(tzinfo=timezone.utc) if stamp.tzinfo is None else stamp


def sort_key(task: Task) -> TaskCursor:
    """Listing order key: status timestamp (naive read as UTC, missing oldest), then id."""
    stamp = task.status.timestamp
    return (EPOCH_MIN if stamp is None else as_utc(stamp), task.id)


def to_micros(stamp: datetime) -> int:
    """Exact integer microseconds since the Unix epoch (SQL stores order and compare on it)."""
    delta = as_utc(stamp) - _UNIX
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_micros(micros: int) -> datetime:
    """The aware UTC datetime for :func:`to_micros` output."""
    return _UNIX + timedelta(microseconds=micros)


@runtime_checkable
class TaskRecords(Protocol):
    """Tasks: compare-and-set saves (with their events, outbox entries and message claim),
    scoped reads, listing and retention."""

    def get(self, task_id: str, *, owner: str | None = None,
            tenant: str | None = None) -> Task | None:
        """The task, or None when unknown or another owner's/tenant's: :meth:`load`
        without the version (a store naming this protocol as a base inherits it)."""
        stored = self.load(task_id, owner=owner, tenant=tenant)
        return stored.task if stored is not None else None

    def load(self, task_id: str, *, owner: str | None = None,
             tenant: str | None = None) -> StoredTask | None:
        """Task, version and last event sequence, read together."""
        ...

    def save(self, task: Task, *, expected_version: int | None, owner: str | None = None,
             tenant: str | None = None, events: Sequence[StreamEvent] = (),
             outbox: Sequence[OutboxEntry] = (), message_id: str | None = None,
             fingerprint: str | None = None, lease: LeaseClaim | None = None) -> int:
        """Store ``task``, append ``events`` and queue ``outbox`` atomically; the new version.

        ``expected_version=None`` creates (ConflictError when the id exists);
        otherwise the stored version must equal it (ConflictError if not).
        ``message_id`` and ``fingerprint`` (both or neither; creates only) claim
        the message that created the task; when (owner, tenant, message_id,
        fingerprint) already names a task, nothing is written and
        :class:`DuplicateMessageError` names that task. The same id with another
        fingerprint is another claim. ``lease`` takes the task's lease in the same
        write, as :meth:`LeaseStore.acquire_lease` would (free, ours or expired at
        ``lease.now``; another worker's live lease is left alone).
        """
        ...

    def find_by_message(self, message_id: str, *, fingerprint: str, owner: str | None = None,
                        tenant: str | None = None) -> Task | None:
        """The task this owner's and tenant's message ``message_id`` created with a request
        of this ``fingerprint``, if any."""
        ...

    def list(self, *, owner: str | None = None, tenant: str | None = None,
             context_id: str | None = None, status: TaskState | None = None,
             status_timestamp_after: datetime | None = None, after: TaskCursor | None = None,
             limit: int | None = None) -> Page:
        """Matching tasks newest first (by :func:`sort_key`), strictly after ``after``, at
        most ``limit``; and the number of all matches (ignoring ``after``/``limit``)."""
        ...

    def context_taken(self, context_id: str, *, owner: str | None = None,
                      tenant: str | None = None) -> bool:
        """Whether tasks of another owner or tenant use ``context_id`` (a send into it by
        this caller is refused: an agent keeping memory per context would mix callers)."""
        ...

    def finished_among(self, task_ids: Sequence[str]) -> dict[str, TaskState]:
        """Those of ``task_ids`` whose stored state is terminal (how a worker hears a cancel)."""
        ...

    def purge(self, older_than: datetime, *, limit: int | None = None) -> int:
        """Delete terminal tasks last changed before ``older_than`` with everything of theirs."""
        ...

    def close(self) -> None:
        """Release connections (idempotent)."""
        ...


@runtime_checkable
class EventLog(Protocol):
    """Each task's append-only log of stream events (written by :meth:`TaskRecords.save`)."""

    def events_after(self, task_id: str, after_seq: int, *,
                     limit: int | None = None) -> Events:
        """Logged events numbered above ``after_seq``, oldest first.

        Raises EventsExpiredError when some of them are no longer stored.
        """
        ...

    def wait_for_events(self, task_id: str, after_seq: int, timeout: float) -> Events:
        """Like events_after, but block up to ``timeout`` seconds until there is one."""
        ...



@runtime_checkable
class PushStore(Protocol):
    """Push-notification configs and the delivery outbox (filled by :meth:`TaskRecords.save`)."""

    def put_push_config(self, config: TaskPushNotificationConfig) -> None:
        """Store or replace a config (keyed by task id and config id, which is required)."""
        ...

    def get_push_config(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        ...

    def list_push_configs(self, task_id: str) -> Configs:
        """The task's configs in the order they were first stored."""
        ...

    def delete_push_config(self, task_id: str, config_id: str) -> bool:
        """True when a config was deleted."""
        ...

    def claim_deliveries(self, now: datetime, limit: int, worker_id: str,
                         lease_seconds: float) -> Deliveries:
        """Claim due entries, only the oldest pending one of each (task, config) queue."""
        ...

    def complete_delivery(self, delivery_id: int) -> None:
        """Delivered: forget the entry."""
        ...

    def retry_delivery(self, delivery_id: int, next_attempt_at: datetime, error: str) -> None:
        """Unclaim; due again at ``next_attempt_at``; still the head of its queue."""
        ...

    def abandon_delivery(self, delivery_id: int, error: str) -> None:
        """Give up on the entry; the next one of its queue becomes eligible."""
        ...

    def pending_deliveries(self, task_id: str) -> int:
        """Entries of the task not yet delivered nor abandoned."""
        ...



@runtime_checkable
class LeaseStore(Protocol):
    """Which worker runs which task, renewed while it lives, taken over when it dies."""

    def acquire_lease(self, task_id: str, worker_id: str, expires_at: datetime, *,
                      now: datetime, owner: str | None = None, tenant: str | None = None,
                      payload: bytes = b"") -> bool:
        """Take the lease if free, ours, or expired at ``now`` (a takeover counts an attempt)."""
        ...

    def renew_leases(self, worker_id: str, task_ids: Sequence[str],
                     expires_at: datetime) -> set[str]:
        """Extend the leases ``worker_id`` still holds; the ids renewed."""
        ...

    def release_lease(self, task_id: str, worker_id: str) -> None:
        """Drop the lease if ``worker_id`` holds it."""
        ...

    def expired_leases(self, now: datetime, *, limit: int = 100) -> Leases:
        """Leases whose worker stopped renewing them."""
        ...

    def get_lease(self, task_id: str) -> Lease | None:
        """The task's lease, live or expired (None: no worker runs it)."""
        ...



@runtime_checkable
class TaskStore(TaskRecords, EventLog, PushStore, LeaseStore, Protocol):
    """Everything the runtime and the push worker need, in one store (see the module
    docstring). The parts are separate Protocols so each consumer names only what it uses."""
