"""Runs on a job queue (an :class:`~a2a_wsgi.execution.Executor`): both ends of the hand-over.

The web tier stores the task as the in-process runtime does (SUBMITTED, or a
continuation already applied), leased to the queue (:func:`._keeper.queued_holder`)
in that same save, then submits a :class:`~a2a_wsgi.execution.RunRef` (ids only).
When the queue refuses it, the task is marked FAILED with :data:`NOT_QUEUED_REASON`
and the send answers "retry later": nothing is left SUBMITTED without a run.
A send then answers from the store: the task at once (non-blocking), once it
settles (blocking), or its event log (streaming); the store's change signal
wakes it, the queue is never asked.

A queue worker's :meth:`QueuedRuns.execute` claims the task: only while the
queue holds its lease may a delivery run it, so a redelivered message of a run
that is over, or running on a live worker, is dropped; a run whose worker died
is left to the keepers' reapers (they re-run or fail it, by the agent's
``rerun_on_worker_loss``; a re-run goes back through the queue).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from datetime import timedelta

from a2a_core._observe import TraceParent
from a2a_core._service import CallContext, StreamItem
from a2a_core.errors import TaskNotFoundError
from a2a_core.models import Task, TaskState, TextPart

from .._telemetry import current_traceparent
from .._telemetry._trace import incoming, otel
from ..execution import Executor, QueueUnavailable, RunRef
from ..stores import DuplicateMessageError, MemoryTaskStore, StoredTask, TaskStore
from ._changes import Changes, unless_terminal
from ._defaults import Scope, log, utc_now
from ._execution import AgentRunner
from ._keeper import LeaseKeeper, call_payload, payload_call, payload_runs, queued_holder
from ._runs import Run, RunRegistry, stored_run
from ._subscriptions import Subscriptions
from ._updates import SETTLE_POLL, TaskUpdates

__all__ = ["NOT_QUEUED_REASON", "QueuedRuns", "never_queued"]

#: The FAILED status of a task whose run the job queue did not take (a retry of the
#: same send makes a new task: see :func:`never_queued`).
NOT_QUEUED_REASON = "the job queue did not take this task's run; nothing ran"

#: The states a queued run may still be about to change (claimed or running).
_UNSETTLED = (TaskState.SUBMITTED, TaskState.WORKING)
#: How long a blocking send waits before it looks again whether its run is still
#: pending, when no lease says so (a worker's claim swaps the queue's lease for its own).
_CLAIM_GAP = 0.05
#: Publishes of blocking sends at once, per process (each waits at most about the
#: executor's publish timeout, a few seconds, when the broker is down).
_PUBLISHERS = 64
#: How often a running queued run's backstop looks whether the run ended (it wakes at
#: once when the run's ``cancelled`` is set).
_BACKSTOP_SLICE = 1.0


def never_queued(task: Task) -> bool:
    """Whether the task FAILED because the job queue did not take its run (nothing ran)."""
    message = task.status.message
    if task.status.state is not TaskState.FAILED or message is None or not message.parts:
        return False
    part = message.parts[0]
    return isinstance(part, TextPart) and part.text.endswith(NOT_QUEUED_REASON)


class QueuedRuns:
    """Hands runs to a job queue (web tier) and executes them from it (queue worker)."""

    def __init__(self, executor: Executor, *, store: TaskStore, runner: AgentRunner,
                 updates: TaskUpdates, keeper: LeaseKeeper, runs: RunRegistry,
                 changes: Changes, streams: Subscriptions) -> None:
        if isinstance(store, MemoryTaskStore):
            raise ValueError("runs on a job queue (RuntimeSettings.executor) need a task store "
                             "the queue's workers share: A2A_STORE=sqlite:// on one host, "
                             "postgresql://... on many; not memory")
        self.executor, self._store, self._runner = executor, store, runner
        self._updates, self._keeper, self._runs, self._changes = updates, keeper, runs, changes
        self._streams = streams
        #: Publishes of blocking sends (made at first use in each process: after a fork).
        self._publishers: ThreadPoolExecutor | None = None
        self._publishers_pid = 0
        self._publishers_lock = threading.Lock()

    # -- the web tier ----------------------------------------------------------------------

    def send(self, run: Run, blocking: bool, ctx: CallContext,
             replayed: Callable[[str, CallContext], Task]) -> Task:
        """Queue the run; the task at once, or (blocking) once it settles. A concurrent
        send of the same request that stored its task first answers that task.

        A blocking send waits for the broker's acknowledgement of the run and for the
        run's result at once (the publish goes on in a thread of its own): a worker
        often finishes an instant agent before a durable broker confirms its message,
        and a task a worker claimed was evidently delivered."""
        try:
            stored = self._stored(run)
        except DuplicateMessageError as dup:
            return (replayed(dup.task_id, ctx) if blocking
                    else self._updates.visible(dup.task_id, run.scope))
        ref = self._ref(run.task_id, run.scope)
        if not blocking:
            self._submit(ref)
            return stored.task
        return self._settled(stored, run.scope, ctx.client_gone, self._submit_behind(ref))

    def _settled(self, stored: StoredTask, scope: Scope,
                 client_gone: Callable[[], bool] | None, queued: Future[None]) -> Task:
        """The task once it settles (terminal or interrupted), its client hangs up, or no
        run of it is pending any more. It is read again only when its event log moved:
        the store's change signal wakes the wait; leases are looked at only when a wait
        heard nothing. A run the queue refused raises :class:`QueueUnavailable`."""
        task_id, pending = stored.task.id, self.pending(stored.task.id, scope)
        while True:
            if queued.done() or never_queued(stored.task):
                queued.result()  # (waits for the publish that failed the task, and raises)
            state = stored.task.status.state
            if state.is_terminal or state.is_interrupted:
                return stored.task
            if client_gone is not None and client_gone():
                return stored.task
            moved = self._store.wait_for_events(task_id, stored.event_seq, SETTLE_POLL)
            if not moved and not pending():
                moved = self._store.events_after(task_id, stored.event_seq)
                if not moved:  # the run ended and left the task as it is
                    return stored.task
            found = self._store.load(task_id, owner=scope[0], tenant=scope[1])
            if found is None:
                raise TaskNotFoundError(f"Task {task_id} not found")
            stored = found

    def stream(self, run: Run, ctx: CallContext) -> Iterator[StreamItem]:
        """Queue the run; its task as stored, then its event log until it settles."""
        try:
            stored = self.start(run)
        except DuplicateMessageError as dup:
            return self._streams.resent(dup.task_id, run.scope, ctx.client_gone,
                                        ctx.stream_holder)
        return self._streams.sent(stored, ctx.client_gone, ctx.stream_holder)

    def start(self, run: Run) -> StoredTask:
        """Store the run's task leased to the queue (if not yet) and queue the run; the task
        as stored (a stream's first item). The run is not this process's to track."""
        stored = self._stored(run)
        self._submit(self._ref(run.task_id, run.scope))
        return stored

    def _stored(self, run: Run) -> StoredTask:
        """Store the run's task leased to the queue, if not yet; the task as stored."""
        try:
            if not run.created:
                self._runner.create_submitted(run)
        finally:
            self._runs.discard(run)
        assert run.snapshot is not None
        return run.snapshot

    @staticmethod
    def _ref(task_id: str, scope: Scope) -> RunRef:
        """The run's ids, and the trace of the request that queues it (read here: a
        publish in a thread of its own would not see it)."""
        trace = current_traceparent()
        return RunRef(task_id, scope[0], scope[1],
                      trace.header() if trace is not None else None)

    def _submit(self, ref: RunRef) -> None:
        """Queue the run; when the queue refuses, fail the task and answer "retry later"."""
        try:
            self.executor.submit(ref)
        except Exception as exc:
            if self._delivered(ref.task_id):
                log.warning("task %s: the job queue reported %s, but a worker has claimed the "
                            "run: it was delivered", ref.task_id, exc)
                return
            log.error("task %s: the job queue did not take its run: %s", ref.task_id, exc)
            self._fail_unqueued(ref.task_id, (ref.owner, ref.tenant))
            if isinstance(exc, QueueUnavailable):
                raise
            raise QueueUnavailable(detail="the job queue is unavailable") from exc

    def _submit_behind(self, ref: RunRef) -> Future[None]:
        """:meth:`_submit` on a publisher thread (a greenlet under gevent); its outcome.
        The threads live on between sends: starting one per send waits for it to be
        scheduled, milliseconds on a busy machine."""
        with self._publishers_lock:
            pool = self._publishers
            if pool is None or self._publishers_pid != os.getpid():
                pool = self._publishers = ThreadPoolExecutor(
                    max_workers=_PUBLISHERS, thread_name_prefix="a2a-queue")
                self._publishers_pid = os.getpid()
        return pool.submit(self._submit, ref)

    def _delivered(self, task_id: str) -> bool:
        """Whether the queue no longer holds the task's lease: a worker claimed the run (so
        a publish that failed after all delivered it: its confirm was lost), or the task
        was canceled. A claim after this look finds the task FAILED and drops the run."""
        try:
            lease = self._store.get_lease(task_id)
        except Exception:
            return False
        return lease is None or lease.worker_id != queued_holder(task_id)

    def _fail_unqueued(self, task_id: str, scope: Scope) -> None:
        fail = self._changes.failure(task_id, self._task_context(task_id, scope),
                                     NOT_QUEUED_REASON)
        try:
            self._updates.update(task_id, scope, unless_terminal(fail))
        finally:
            self._store.release_lease(task_id, queued_holder(task_id))

    def _task_context(self, task_id: str, scope: Scope) -> str:
        return self._updates.visible(task_id, scope).context_id

    def pending(self, task_id: str, scope: Scope) -> Callable[[], bool]:
        """``running()`` of a blocking send's wait: a lease (the queue's or a worker's) is
        live. Without one, a task that is not settled is looked at again a moment later:
        a worker's claim swaps the queue's lease for its own."""

        def running() -> bool:
            if self._keeper.running(task_id):
                return True
            stored = self._store.load(task_id, owner=scope[0], tenant=scope[1])
            if stored is None or stored.task.status.state not in _UNSETTLED:
                return False
            time.sleep(_CLAIM_GAP)
            return self._keeper.running(task_id)

        return running

    def canceled(self, task_id: str) -> None:
        """A canceled task's run need not wait for a worker: the queue lets go of it."""
        self._store.release_lease(task_id, queued_holder(task_id))

    def requeue(self, stored: StoredTask, scope: Scope, call: CallContext, runs: int) -> None:
        """The keeper's re-run of a lost run (it holds the lease): back to the queue."""
        task_id = stored.task.id
        assert self._keeper.lease_seconds is not None and self._keeper.queue_timeout is not None
        self._store.release_lease(task_id, self._keeper.worker_id)
        now = utc_now()
        self._store.acquire_lease(task_id, queued_holder(task_id),
                                  now + timedelta(seconds=self._keeper.queue_timeout), now=now,
                                  owner=scope[0], tenant=scope[1],
                                  payload=call_payload(call, runs))
        self._submit(self._ref(task_id, scope))

    # -- a queue worker ----------------------------------------------------------------------

    def execute(self, ref: RunRef, *, on_stuck: Callable[[], None] | None = None,
                cancel_grace: float | None = None) -> bool:
        """Claim the task and run the agent on it here; False when the delivery is dropped
        (the run is over, runs elsewhere, or is left to the reapers).

        ``on_stuck`` is the queue's backstop for an agent that ignores its cancel: called
        (in another thread) when the run is still going ``cancel_grace`` seconds after its
        ``cancelled`` was set, once the run's lease is given back (the task has ended)."""
        scope: Scope = (ref.owner, ref.tenant)
        claimed = self._claim(ref.task_id, scope)
        if claimed is None:
            return False
        stored, call, runs = claimed
        run = self._runner.register(stored_run(stored, scope, call))
        run.leased, run.prior_runs = True, runs
        self._keeper.start()  # renews the lease, hears a cancel stored by the web tier
        with _in_trace(ref.traceparent), self._backstop(run, on_stuck, cancel_grace):
            self._runner.execute(run)
        return True

    @contextmanager
    def _backstop(self, run: Run, on_stuck: Callable[[], None] | None,
                  grace: float | None) -> Iterator[None]:
        """While the run executes: a watch that calls ``on_stuck`` when the agent is still
        running ``grace`` seconds after its ``cancelled`` was set."""
        if on_stuck is None or grace is None:
            yield
            return
        ended = threading.Event()

        def watch() -> None:
            while not run.cancelled.wait(_BACKSTOP_SLICE):
                if ended.is_set():
                    return
            if ended.wait(grace):
                return
            log.warning("task %s: its agent did not stop within %s s of its cancel; "
                        "ending its run by force", run.task_id, grace)
            self._store.release_lease(run.task_id, self._keeper.worker_id)
            on_stuck()

        threading.Thread(target=watch, daemon=True, name=f"a2a-backstop-{run.task_id}").start()
        try:
            yield
        finally:
            ended.set()

    def _claim(self, task_id: str, scope: Scope) -> tuple[StoredTask, CallContext, int] | None:
        """Swap the queue's lease for this worker's; the task, its call and prior runs."""
        assert self._keeper.lease_seconds is not None
        lease = self._store.get_lease(task_id)
        holder = queued_holder(task_id)
        if lease is None or lease.worker_id != holder:
            log.info("task %s: a queued run not held by the queue (over, or running "
                     "elsewhere); delivery dropped", task_id)
            return None
        self._store.release_lease(task_id, holder)
        runs = payload_runs(lease.payload) + lease.attempts - 1
        call = payload_call(lease.payload, scope)
        now = utc_now()
        until = now + timedelta(seconds=self._keeper.lease_seconds)
        if not self._store.acquire_lease(task_id, self._keeper.worker_id, until, now=now,
                                         owner=scope[0], tenant=scope[1],
                                         payload=call_payload(call, runs)):
            log.info("task %s: another delivery claimed it first; dropped", task_id)
            return None
        stored = self._store.load(task_id, owner=scope[0], tenant=scope[1])
        if stored is None or stored.task.status.state not in _UNSETTLED:
            log.info("task %s: nothing to run (%s); delivery dropped", task_id,
                     "gone" if stored is None else stored.task.status.state.value)
            self._store.release_lease(task_id, self._keeper.worker_id)
            return None
        return stored, call, runs


@contextmanager
def _in_trace(header: str | None) -> Iterator[None]:
    """Run in the trace of the request that queued the run: its log lines and webhook
    POSTs name it, and (with OpenTelemetry) the agent's span is a child of it."""
    parent = TraceParent.parse(header)
    if parent is None:
        yield
        return
    reset = incoming.set(parent)
    span = otel.start("A2A queued run", otel.INTERNAL, {}, incoming=parent) if (
        otel is not None and otel.listening()) else None
    token = otel.activate(span) if span is not None else None
    try:
        yield
    finally:
        if token is not None and span is not None:
            otel.deactivate(token)
            span.end()
        incoming.reset(reset)
