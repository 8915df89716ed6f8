"""The lease keeper: work leases, cancels seen by other workers, and lost workers.

From the save that acknowledges a task (or, for a blocking send, from the
start of its run) until the run ends, this process holds the task's lease and
a keeper thread (one per process, started when the app is assembled) renews it
every lease/3 seconds; a task still queued for an agent thread is covered too. The same thread
polls the store for runs whose task became terminal elsewhere (a cancel on
another worker, or a reaper that took the lease over) and sets their
``cancelled`` flag; and it reaps expired leases of dead workers: their tasks
are failed (or re-run, when the agent says that is safe), with the final event
in the log so every subscriber, on any worker, hears it.

Leases only matter when other processes share the store; with the memory
store ``lease_seconds`` is None and all of this is skipped.

With a job queue (an executor), the save that acknowledges a task leases it to
the queue instead (:func:`queued_holder`, for ``queue_timeout`` seconds), and a
queue worker's claim turns that lease into its own (runtime._queued). A lease's
payload counts the runs its task had before (``runs``), so a task handed from
the queue to a worker and back keeps counting towards ``rerun_attempts``.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from a2a_core._service import CallContext
from a2a_core.auth import Principal
from a2a_core.models import TaskState

from ..stores import LeaseClaim, StoredTask, TaskStore
from ._changes import Changes, unless_terminal
from ._defaults import (
    LOST_WORKER_REASON,
    PURGE_EVERY,
    UNSTARTED_REASON,
    Scope,
    log,
    utc_now,
    worker_name,
)
from ._runs import Run, RunRegistry
from ._updates import TaskUpdates

__all__ = ["LeaseKeeper", "call_payload", "payload_call", "payload_runs", "queued_holder"]

#: rerun(stored task, scope, the call it was leased with, runs so far): run the agent again.
Rerun = Callable[[StoredTask, Scope, CallContext, int], None]

#: The lease holder of a task whose run waits in a job queue (no process renews it).
_QUEUED = "queued:"


def queued_holder(task_id: str) -> str:
    """The lease holder that says "this task's run is in the job queue"."""
    return _QUEUED + task_id


def call_payload(call: CallContext, runs: int = 0) -> bytes:
    """What a run on another worker needs of the call: its metadata, and the caller's
    tenant and claims (a :class:`Principal`'s), when they are JSON; and ``runs``, the runs
    the task had before this lease (see the module docstring)."""
    data: dict[str, object] = {"runs": runs} if runs else {}
    identity = call.identity
    parts: dict[str, object] = {"metadata": dict(call.metadata or {})}
    if isinstance(identity, Principal) and (identity.tenant is not None or identity.claims):
        parts["caller"] = {"id": identity.identity, "tenant": identity.tenant,
                           "claims": dict(identity.claims)}
    for name, value in parts.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue
        data[name] = value
    return json.dumps(data).encode()


def payload_runs(payload: bytes) -> int:
    """The runs a lease's task had before the lease (0 when the payload does not say)."""
    try:
        data = json.loads(payload or b"{}")
    except ValueError:
        return 0
    runs = data.get("runs") if isinstance(data, dict) else None
    return runs if isinstance(runs, int) and runs > 0 else 0


def payload_call(payload: bytes, scope: Scope) -> CallContext:
    """The call a re-run acts for: the lease's scope, the metadata it was saved with, and
    the caller's tenant and claims when they were saved."""
    try:
        data = json.loads(payload or b"{}")
    except ValueError:
        data = None
    data = data if isinstance(data, dict) else {}
    metadata, caller = data.get("metadata"), data.get("caller")
    identity: object = scope[0]
    if isinstance(caller, dict) and isinstance(caller.get("id"), str):
        tenant, claims = caller.get("tenant"), caller.get("claims")
        identity = Principal(caller["id"], tenant=tenant if isinstance(tenant, str) else None,
                             claims=claims if isinstance(claims, dict) else None)
    return CallContext(version="1.0", identity=identity, tenant=scope[1],
                       metadata=metadata if isinstance(metadata, dict) and metadata else None)


class LeaseKeeper:
    """Takes, renews and releases this process's leases; reaps those of dead workers."""

    def __init__(
        self,
        store: TaskStore,
        runs: RunRegistry,
        updates: TaskUpdates,
        changes: Changes,
        *,
        lease_seconds: float | None,
        poll_interval: float,
        retention: timedelta | None,
        clock: Callable[[], datetime],
        may_rerun: Callable[[int], bool],
        rerun: Rerun,
        queue_timeout: float | None = None,
    ) -> None:
        self.store, self._runs, self._updates, self._changes = store, runs, updates, changes
        self.lease_seconds, self._poll_interval = lease_seconds, poll_interval
        self._retention, self._clock = retention, clock
        #: may_rerun(attempts): does the agent allow another run after a lost worker?
        self._may_rerun = may_rerun
        #: How to run a recovered task again (the runtime's runner does it).
        self._rerun = rerun
        #: Seconds a run may wait in a job queue (None: runs execute in this process).
        self.queue_timeout = queue_timeout
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._worker = ""
        self._lock = threading.Lock()
        self.stopping = threading.Event()

    @property
    def worker_id(self) -> str:
        """This process's name in the lease table (a forked worker gets its own)."""
        if not self._worker or self._pid != os.getpid():
            self._worker, self._pid, self._thread = worker_name(), os.getpid(), None
        return self._worker

    def stop(self, *, wait: bool) -> None:
        """Stop the keeper thread; with ``wait``, join it (only in the process that started it)."""
        self.stopping.set()
        thread = self._thread
        if wait and thread is not None and thread.is_alive() and self._pid == os.getpid():
            thread.join(timeout=5)

    def start(self) -> None:
        """Start renewing, watching and reaping now rather than at the first run (cheap
        once started in this process: the app calls it on every request)."""
        if self.lease_seconds is None or (self._thread is not None
                                          and self._pid == os.getpid()):
            return
        self._ensure_thread()

    # -- a run's lease -------------------------------------------------------------------

    def claim(self, call: CallContext, task_id: str) -> LeaseClaim | None:
        """The lease a save acknowledging work for ``call`` takes (None: no leases here):
        for this worker, or, with a job queue, for the queue (:func:`queued_holder`).
        A run counts as leased (:meth:`holds`) once that save succeeded."""
        if self.lease_seconds is None:
            return None
        self._ensure_thread()
        now = utc_now()
        if self.queue_timeout is not None:
            return LeaseClaim(worker_id=queued_holder(task_id), now=now,
                              payload=call_payload(call),
                              expires_at=now + timedelta(seconds=self.queue_timeout))
        return LeaseClaim(worker_id=self.worker_id, now=now, payload=call_payload(call),
                          expires_at=now + timedelta(seconds=self.lease_seconds))

    def holds(self, claim: LeaseClaim | None) -> bool:
        """Whether a save's ``claim`` leased the task to this process (not to a queue)."""
        return claim is not None and claim.worker_id == self.worker_id

    def take(self, run: Run) -> None:
        """Lease the run's task to this worker (another's live lease: run anyway, warn).

        A new task's run leases it when it stores it (no other worker can know its
        id before): nothing to write here, whether it is stored yet or not."""
        run.started = True
        if self.lease_seconds is None or run.is_new and (run.leased or not run.created):
            return
        self._ensure_thread()
        now = utc_now()
        owner, tenant = run.scope
        run.leased = self.store.acquire_lease(
            run.task_id, self.worker_id, now + timedelta(seconds=self.lease_seconds), now=now,
            owner=owner, tenant=tenant, payload=call_payload(run.call, run.prior_runs))
        if not run.leased:
            log.warning("task %s is leased by another worker; running it anyway", run.task_id)

    def release(self, run: Run) -> None:
        """Give the run's lease back; a failure is logged (the lease then simply expires)."""
        if not run.leased:
            return
        run.leased = False
        try:
            self.store.release_lease(run.task_id, self.worker_id)
        except Exception:
            log.exception("could not release the lease of task %s", run.task_id)

    def running(self, task_id: str) -> bool:
        """Is a run of the task active: in this process, or on a worker whose lease is live?"""
        if self._runs.of(task_id):
            return True
        if self.lease_seconds is None:
            return False  # one process: its registry knows every run
        lease = self.store.get_lease(task_id)
        return lease is not None and lease.expires_at > utc_now()

    # -- the keeper thread ---------------------------------------------------------------

    def _ensure_thread(self) -> None:
        """Start this process's keeper thread once (again after a fork)."""
        worker = self.worker_id
        with self._lock:
            if self._thread is not None or self.stopping.is_set():
                return
            self._thread = threading.Thread(target=self._keep, args=(worker,), daemon=True,
                                            name="a2a-lease-keeper")
            self._thread.start()

    def _keep(self, worker: str) -> None:
        assert self.lease_seconds is not None
        renew_every = self.lease_seconds / 3
        last_renew = last_reap = last_purge = 0.0
        while not self.stopping.wait(self._poll_interval):
            if self._pid != os.getpid():
                return
            now = time.monotonic()
            try:
                self._watch_cancels()
                if now - last_renew >= renew_every:
                    last_renew = now
                    self._renew(worker)
                if now - last_reap >= min(renew_every, 5.0):
                    last_reap = now
                    self.reap()
                if self._retention is not None and now - last_purge >= PURGE_EVERY:
                    last_purge = now
                    self.store.purge(self._clock() - self._retention)
            except Exception:
                log.exception("lease keeper pass failed; retrying")

    def _watch_cancels(self) -> None:
        """Stop runs whose task another worker ended (a cancel is a stored CANCELED state)."""
        runs = self._runs.leased()
        if not runs:
            return
        finished = self.store.finished_among(sorted({run.task_id for run in runs}))
        for run in runs:
            if run.task_id in finished and not run.cancelled.is_set():
                run.cancelled.set()
                run.poke()

    def _renew(self, worker: str) -> None:
        runs = self._runs.leased()
        if not runs:
            return
        assert self.lease_seconds is not None
        until = utc_now() + timedelta(seconds=self.lease_seconds)
        kept = self.store.renew_leases(worker, sorted({run.task_id for run in runs}), until)
        for run in runs:
            if run.task_id not in kept and run.leased and not run.started:
                run.leased = False  # another worker's live lease: take() tries again at start
            elif run.task_id not in kept and run.leased:
                log.warning("lost the lease of task %s; stopping its agent", run.task_id)
                run.leased = False
                run.cancelled.set()
                run.poke()

    # -- lost workers ----------------------------------------------------------------------

    def reap(self) -> int:
        """Take over expired leases: fail their tasks, or re-run them; the number handled."""
        if self.lease_seconds is None:
            return 0
        handled = 0
        now = utc_now()
        mine = {run.task_id for run in self._runs.leased()}
        for lease in self.store.expired_leases(now):
            if lease.task_id in mine:
                continue  # ours, just late: the next renewal extends it
            until = now + timedelta(seconds=self.lease_seconds)
            if not self.store.acquire_lease(lease.task_id, self.worker_id, until, now=now,
                                            owner=lease.owner, tenant=lease.tenant,
                                            payload=lease.payload):
                continue  # another worker's reaper won
            handled += 1
            try:
                self._recover(lease.task_id, (lease.owner, lease.tenant),
                              lease.attempts + payload_runs(lease.payload), lease.payload)
            except Exception:
                log.exception("could not recover task %s", lease.task_id)
                self.store.release_lease(lease.task_id, self.worker_id)
        return handled

    def _recover(self, task_id: str, scope: Scope, attempts: int, payload: bytes) -> None:
        """A dead worker's task: re-run it when the agent allows, else fail it."""
        stored = self.store.load(task_id, owner=scope[0], tenant=scope[1])
        if stored is None or stored.task.status.state.is_terminal:
            self.store.release_lease(task_id, self.worker_id)
            return
        if self._may_rerun(attempts):
            log.warning("re-running task %s after its worker was lost (attempt %d)",
                        task_id, attempts)
            self._rerun(stored, scope, payload_call(payload, scope), attempts)
            return
        queued = stored.task.status.state is TaskState.SUBMITTED
        reason = UNSTARTED_REASON if queued else LOST_WORKER_REASON
        log.warning("failing task %s after %d run(s): %s", task_id, attempts, reason)
        fail = self._changes.failure(task_id, stored.task.context_id, reason)
        try:
            self._updates.update(task_id, scope, unless_terminal(fail))
        finally:
            self.store.release_lease(task_id, self.worker_id)


