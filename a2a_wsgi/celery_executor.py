"""Agents on Celery: the web tier queues runs, Celery workers execute them (extra ``[celery]``).

    celery = Celery("my_agent", broker="amqp://guest:guest@127.0.0.1:5672//")
    executor = CeleryExecutor(celery, queue="a2a")
    app = A2AApp(MyAgent(), store="postgresql://...", runtime=RuntimeSettings(executor=executor))
    executor.serve(app)          # the Celery workers run this app's agent

    # web:  a2a serve my_agent:app --workers 2
    # work: celery -A my_agent:celery worker -Q a2a

A queued message carries ids only (:class:`~a2a_wsgi.execution.RunRef`); the
task lives in the store, and the worker writes every update there, where the
web tier's streams and waits pick it up. The Celery task is acknowledged late
(a worker that dies mid-run leaves its message to be redelivered), prefetches
one message at a time and keeps no result (results travel through the store).
On RabbitMQ the web tier waits for the broker's publisher confirm; a broker
that cannot be reached fails the send within seconds (``publish_retries``),
and the runtime answers "retry later". docs/work-tier.md says how to deploy
each tier without losing work.

Cancel is a write to the store that the worker hears within
``RuntimeSettings.poll_interval``; it sets the agent's ``ctx.cancelled``. Revoke is
only the backstop: an agent still running ``cancel_grace`` seconds after that has its
pool process killed (``revoke(terminate=True, signal="SIGKILL")``; the prefork pool
starts another; a thread of the threads pool cannot be killed, and is left to run on).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from celery import Celery  # type: ignore[import-untyped,import-not-found,unused-ignore]
from celery.signals import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
    worker_process_shutdown,
)

from .execution import QueueUnavailable, RunRef

if TYPE_CHECKING:
    from ._app import A2AApp

__all__ = ["CeleryExecutor", "TASK_NAME"]

log = logging.getLogger("a2a_wsgi.celery")

#: The Celery task that runs an agent (one per Celery app).
TASK_NAME = "a2a_wsgi.run"


class CeleryExecutor:
    """An :class:`~a2a_wsgi.execution.Executor` that queues runs as Celery tasks.

    ``queue`` is the queue the runs go to (start the workers with ``-Q`` naming it).
    ``publish_retries`` and ``publish_interval`` bound how long a send waits for a
    broker that cannot be reached (about 1 + retries x interval seconds, plus the
    connection timeout), and ``retry_after`` is the Retry-After it then answers.
    ``cancel_grace`` is how long an agent may go on after its cancel before the worker
    revokes its run by force (None: never).
    The Celery app's broker settings are the deployment's; this sets what running
    agents needs: prefetch 1, a bounded connection timeout, publisher confirms on AMQP.
    """

    def __init__(self, celery: Celery, *, queue: str = "a2a", publish_retries: int = 2,
                 publish_interval: float = 0.5, connect_timeout: float = 2.0,
                 retry_after: int = 5, cancel_grace: float | None = 30.0) -> None:
        self.celery, self.queue, self.retry_after = celery, queue, retry_after
        self.cancel_grace = cancel_grace
        self._retry_policy = {"max_retries": publish_retries, "interval_start": 0,
                              "interval_step": publish_interval,
                              "interval_max": publish_interval}
        self._app: A2AApp | None = None
        _configure(celery, connect_timeout)

        def run(task: Any, task_id: str, owner: str | None, tenant: str | None,
                traceparent: str | None = None) -> None:
            self._run(RunRef(task_id, owner, tenant, traceparent), task.request.id)

        self.task = celery.task(name=TASK_NAME, bind=True, acks_late=True, ignore_result=True,
                                queue=queue, shared=False)(run)
        worker_process_shutdown.connect(self._shutdown, weak=False)

    def serve(self, app: A2AApp) -> Celery:
        """Run ``app``'s agent in this Celery app's workers; the Celery app (for ``-A``)."""
        self._app = app
        return self.celery

    # -- the web tier ----------------------------------------------------------------------

    def submit(self, ref: RunRef) -> None:
        """Publish the run's ids; raise QueueUnavailable when the broker does not take them."""
        try:
            self.task.apply_async(args=(ref.task_id, ref.owner, ref.tenant, ref.traceparent),
                                  queue=self.queue,
                                  retry=True, retry_policy=self._retry_policy)
        except Exception as exc:
            raise QueueUnavailable(self.retry_after,
                                   f"the job queue's broker did not take it ({exc})") from exc

    # -- a worker ---------------------------------------------------------------------------

    def _run(self, ref: RunRef, request_id: str) -> None:
        """The Celery task's body: claim the task and run the agent in this process."""
        app = self._app
        if app is None:
            raise RuntimeError("CeleryExecutor.serve(app) was not called: no agent to run")
        # The app (its store, its lease keeper) is assembled in each worker process at its
        # first run, after the fork: nothing opened in the parent is used in a child.
        app.runtime.run_queued(ref, on_stuck=lambda: self._revoke(ref, request_id),
                               cancel_grace=self.cancel_grace)

    def _revoke(self, ref: RunRef, request_id: str) -> None:
        """The backstop: the worker kills the pool process running a canceled run."""
        log.warning("task %s: revoking Celery task %s (terminate, SIGKILL)", ref.task_id,
                    request_id)
        self.celery.control.revoke(request_id, terminate=True, signal="SIGKILL")

    def _shutdown(self, **_: Any) -> None:
        """A worker process ends: stop its runtime (its lease keeper, its store)."""
        if self._app is not None:
            self._app.close()


def _configure(celery: Celery, connect_timeout: float) -> None:
    """Worker and publisher settings every agent run needs (see the module docstring)."""
    conf = celery.conf
    conf.worker_prefetch_multiplier = 1
    conf.task_ignore_result = True
    conf.broker_connection_timeout = connect_timeout
    conf.broker_connection_retry_on_startup = True
    options = dict(conf.broker_transport_options or {})
    broker = str(conf.broker_url or "")
    if broker.startswith(("amqp", "pyamqp")):
        options.setdefault("confirm_publish", True)
    elif broker.startswith(("redis", "rediss")):
        options.setdefault("socket_connect_timeout", connect_timeout)
    conf.broker_transport_options = options
