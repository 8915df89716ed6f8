"""Where an agent's runs execute: the seam between the web tier and a job queue.

By default a run executes in the process that took the request, on the
runtime's thread pool (``RuntimeSettings(executor=None)``). An
:class:`Executor` moves it elsewhere: the web tier stores the task, hands the
executor a :class:`RunRef` (ids only: the task, its history and the call's
metadata are in the store), and answers from the store; a worker of the queue
calls :meth:`a2a_wsgi._runtime.Runtime.run_queued` with that ref, which claims
the task in the store, calls ``handle_message`` and writes every update
through the same compare-and-set path as the in-process runtime.

Another engine (RQ, Dramatiq, a cloud queue) is one module: a class with
``submit`` that enqueues a job whose body calls ``app.runtime.run_queued(ref)``
in the worker process. The queue must deliver at least once; the store's claim
makes a delivery of a run that is over, or running elsewhere, a no-op
(docs/work-tier.md). :mod:`a2a_wsgi.celery_executor` is the Celery one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from a2a_core._calls import Busy
from a2a_core.errors import InternalError

__all__ = ["Executor", "QueueUnavailable", "RunRef"]


@dataclass(frozen=True, slots=True)
class RunRef:
    """What a queued run names: a task and the scope it is stored under, and the W3C
    ``traceparent`` of the request that queued it (the run joins that trace)."""

    task_id: str
    owner: str | None
    tenant: str | None
    traceparent: str | None = None


@runtime_checkable
class Executor(Protocol):
    """Runs agents somewhere else than the process that took the request."""

    def submit(self, ref: RunRef) -> None:
        """Queue the run; return once the queue has it durably.

        Raise (any exception; :class:`QueueUnavailable` to set the retry hint)
        when it cannot: the send then answers "retry later" and its task is
        marked FAILED, so nothing is left SUBMITTED without a run.
        """
        ...


class QueueUnavailable(Busy):
    """The job queue did not take a run: the send answers -32603 / HTTP 503 with Retry-After."""

    def __init__(self, retry_after: int = 5, detail: str = "the job queue is unavailable") -> None:
        super().__init__(retry_after)
        self.detail = detail
        self.args = (f"{detail}; retry in {retry_after} s",)

    def error(self) -> InternalError:
        return InternalError(
            f"The task was not started: {self.detail}; retry in {self.retry_after} s"
        )
