"""The runtime: runs an :class:`~a2a_wsgi._agent.Agent` behind
:class:`~a2a_core._service.A2AService`.

The dispatcher hands it typed requests; it creates and updates tasks through
:mod:`a2a_core._tasks`, stores them in a :class:`~a2a_wsgi.stores.TaskStore`
and runs the agent inline (blocking sends) or on a bounded thread pool
(non-blocking and streaming sends), or hands its runs to a job queue's workers
(:mod:`a2a_wsgi.execution`).
"""

# Theory of operation
# -------------------
#
# Rule 1: every change is a compare-and-set. ``TaskUpdates.update`` reads the
# task and its version, applies a pure change function (``_changes``, built on
# a2a_core._tasks), and saves with ``expected_version``. On ConflictError it
# re-reads and re-applies. So a cancel and an agent finishing at the same
# moment both see each other's write, and the one that comes second finds a
# terminal task and is dropped: the first terminal state wins and CANCELED is
# never overwritten.
#
# Rule 2: every stream event goes to the store's per-task event log in the same
# save. Streams and subscribers replay the log from the sequence number of the
# snapshot they sent first, so they never miss or repeat an update.
#
# Rule 3: a new task is stored lazily. handle_message may answer with a bare
# message, and then no task may exist (the caller gets only the message). The
# task is therefore created when the agent first emits an update or returns a
# task outcome, and it is created already WORKING: one save holds the task, the
# WORKING event and both transitions (SUBMITTED, then WORKING) are reported; a
# stream still starts with the SUBMITTED snapshot and hears WORKING from the
# log. A non-blocking send must return a task at once, so it creates the task
# eagerly (SUBMITTED); a bare message then completes that task with the message
# in its history. Continuations always act at once: the user message is appended
# and the task moved to WORKING before the agent runs.
#
# Rule 4: the agent's code never takes the runtime down. An exception becomes
# FAILED "Error: <text>" (the traceback is logged); an update the task can no
# longer take because it was canceled meanwhile is dropped.
#
# Rule 5: every acknowledged task settles. With a shared store, the save that
# acknowledges a task (a non-blocking send's SUBMITTED task, a continuation)
# also leases it to this worker, so a task still queued for an agent thread is
# recovered like a running one if the process dies; each worker's keeper starts
# when the app is assembled, so a restart reclaims expired leases with no request.
# An agent-side save that meets a store outage is retried (_retry) rather than
# left for a reaper to blame on a lost worker.
#
# Rule 6: with an executor (RuntimeSettings.executor, a job queue) runs execute
# in the queue's workers, not here: the save that acknowledges a task leases it
# to the queue, and a worker's claim swaps that lease for its own (_queued), so a
# delivery of a run that is over or running elsewhere is dropped, and a run
# whose worker died is re-run (through the queue) or failed by the reapers.
#
# Layout: _service (the Runtime facade), _execution (running the agent),
# _updates (compare-and-set writes), _changes (change functions),
# _subscriptions (streams), _keeper (leases and lost workers), _runs,
# _queued (runs on a job queue), _resends (retried sends),
# _paging, _push_configs, _retry (store outages), _defaults (clock, ids, shared shapes).

from __future__ import annotations

from ._defaults import (
    DEFAULT_HEARTBEAT_INTERVAL,
    DEFAULT_LEASE_SECONDS,
    DEFAULT_RESUBSCRIBE_TIMEOUT,
    LOST_WORKER_REASON,
    UNSTARTED_REASON,
    PushPlanner,
)
from ._paging import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from ._retry import STORE_RETRY_DELAYS
from ._service import Runtime

__all__ = ["Runtime", "PushPlanner", "DEFAULT_PAGE_SIZE", "MAX_PAGE_SIZE", "DEFAULT_LEASE_SECONDS",
           "DEFAULT_HEARTBEAT_INTERVAL", "DEFAULT_RESUBSCRIBE_TIMEOUT",
           "LOST_WORKER_REASON", "UNSTARTED_REASON", "STORE_RETRY_DELAYS"]
