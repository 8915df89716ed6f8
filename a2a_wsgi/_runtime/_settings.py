"""The runtime's settings groups: each option's type, default and check, written once.

:class:`RuntimeSettings` and :class:`StreamSettings` are what a
:class:`~a2a_wsgi._runtime.Runtime` is built from; an app takes them as its
``runtime=`` and ``streams=`` groups (:mod:`a2a_wsgi.settings`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from a2a_core._tasks import TransitionEvent

from .._stalled_writes import DEFAULT_STALLED_WRITE_TIMEOUT
from ..execution import Executor
from ._defaults import DEFAULT_HEARTBEAT_INTERVAL, DEFAULT_RESUBSCRIBE_TIMEOUT, PushPlanner
from ._generations import DEFAULT_LONG_POLL_TIMEOUT

__all__ = ["DEFAULT_QUEUE_TIMEOUT", "RuntimeSettings", "StreamSettings", "check_positive"]

#: A day: a queue whose workers are all down longer than that fails (or re-runs) its runs.
DEFAULT_QUEUE_TIMEOUT = 86_400.0


def check_positive(owner: object, **values: float | None) -> None:
    """Refuse a value of 0 or less (None passes: "not set")."""
    for name, value in values.items():
        if value is not None and value <= 0:
            raise ValueError(f"{type(owner).__name__}.{name} must be positive, not {value!r}")


@dataclass(frozen=True, kw_only=True)
class StreamSettings:
    """SSE streams: the heartbeat that keeps proxies from cutting them, the idle end."""

    heartbeat_interval: float = DEFAULT_HEARTBEAT_INTERVAL
    resubscribe_timeout: float = DEFAULT_RESUBSCRIBE_TIMEOUT
    #: Seconds one write of a stream may stay stuck (its client reads nothing) before the
    #: stream is cut (the client resumes with Last-Event-ID); see a2a_wsgi._stalled_writes.
    stalled_write_timeout: float = DEFAULT_STALLED_WRITE_TIMEOUT

    def __post_init__(self) -> None:
        check_positive(self, heartbeat_interval=self.heartbeat_interval,
                       resubscribe_timeout=self.resubscribe_timeout,
                       stalled_write_timeout=self.stalled_write_timeout)


@dataclass(frozen=True, kw_only=True)
class RuntimeSettings:
    """The agent runtime: its pool, its leases, what it keeps, its hooks."""

    #: Where runs execute (None: this process's thread pool below; a job queue's
    #: executor, e.g. :class:`~a2a_wsgi.celery_executor.CeleryExecutor`: its workers).
    executor: Executor | None = None
    #: Seconds a run queued with an ``executor`` may wait for a worker before the
    #: keeper takes it for lost (re-run or failed, as after a lost worker).
    queue_timeout: float = DEFAULT_QUEUE_TIMEOUT
    #: Agents running at once for non-blocking and streaming sends (None: 8, 1024 under gevent).
    max_workers: int | None = None
    #: Called after every task transition (metrics, audit).
    on_transition: Callable[[TransitionEvent], None] | None = None
    #: The caller's identity -> the owner tasks are scoped by (None: the app's
    #: principal_owner; a bare Runtime's str(identity)).
    owner_key: Callable[[object], str | None] | None = None
    #: Seconds a work lease lasts (None: none on an in-memory store, else 30).
    lease_seconds: float | None = None
    #: Seconds between the lease keeper's rounds.
    poll_interval: float = 0.5
    #: How long a terminal task is kept before the keeper deletes it (None: forever).
    retention: timedelta | None = None
    #: Newest messages a task's history keeps (None: all).
    max_history: int | None = None
    #: Artifacts a task keeps (None: all).
    max_artifacts: int | None = None
    #: Runs a task whose worker was lost may get again (when the agent allows reruns).
    rerun_attempts: int = 3
    #: Longest a retried blocking send waits for the task its first send still runs.
    retry_wait_timeout: float = 30.0
    #: Longest a long-poll GetTask (generations preview) is held.
    long_poll_timeout: float = DEFAULT_LONG_POLL_TIMEOUT
    #: What to POST for a task update (None: :class:`~a2a_wsgi.push.PushPlanner` when
    #: push is on).
    push_planner: PushPlanner | None = None
    #: Aware UTC datetimes (None: the system clock); tests give a fixed one.
    clock: Callable[[], datetime] | None = None
    #: ``id_factory(prefix)``: unique ids for "tsk", "ctx", "msg", "art", "pcfg" (None: random).
    id_factory: Callable[[str], str] | None = None

    def __post_init__(self) -> None:
        check_positive(self, max_workers=self.max_workers, lease_seconds=self.lease_seconds,
                       poll_interval=self.poll_interval,
                       long_poll_timeout=self.long_poll_timeout,
                       queue_timeout=self.queue_timeout)
        if self.retry_wait_timeout < 0:
            raise ValueError("RuntimeSettings.retry_wait_timeout must be 0 or more seconds")
        if self.rerun_attempts < 0:
            raise ValueError("RuntimeSettings.rerun_attempts must be 0 or more")
