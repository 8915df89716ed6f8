"""The runtime facade: one method per :class:`~a2a_core._service.A2AService` operation.

Each method checks the caller's scope and hands the work to the part that owns
it: :mod:`._execution` runs the agent, :mod:`._updates` writes tasks,
:mod:`._subscriptions` streams, :mod:`._keeper` holds leases, :mod:`._paging`
lists and :mod:`._push_configs` keeps push configs.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import partial

from a2a_core._service import CallContext, StreamItem
from a2a_core._tasks import is_cancelable
from a2a_core.errors import (
    ExtendedAgentCardNotConfiguredError,
    InvalidTransitionError,
    TaskNotCancelableError,
    TaskNotFoundError,
)
from a2a_core.models import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)

from .._agent import Agent, AgentContext
from .._concurrency import default_agent_workers
from ..execution import RunRef
from ..push._planner import PushPlanner as DefaultPushPlanner
from ..push._settings import PushSettings
from ..stores import DuplicateMessageError, MemoryTaskStore, StoredTask, TaskStore, open_store
from ._changes import Changes
from ._defaults import (
    DEFAULT_LEASE_SECONDS,
    Scope,
    default_owner,
    describe,
    log,
    random_id,
    utc_now,
)
from ._execution import AgentRunner
from ._generations import held_until_changed
from ._keeper import LeaseKeeper
from ._paging import list_page
from ._push_configs import PushConfigs
from ._queued import QueuedRuns
from ._resends import sent_before
from ._runs import Run, RunRegistry
from ._settings import RuntimeSettings, StreamSettings
from ._subscriptions import Subscriptions
from ._updates import TaskUpdates

__all__ = ["Runtime", "stop_all_streams"]

#: Every live runtime of this process, so a shutdown signal can end their streams.
_LIVE: weakref.WeakSet[Runtime] = weakref.WeakSet()


def stop_all_streams() -> None:
    """End the open streams of every runtime in this process (a server is stopping)."""
    for runtime in list(_LIVE):
        runtime.stop_streams()


class Runtime:
    """Runs one agent and implements every :class:`~a2a_core._service.A2AService` operation.

    What each setting does is written on :class:`~a2a_wsgi.settings.RuntimeSettings`
    (a retried blocking send: docs/protocol.md, "Retried sends").
    """

    def __init__(
        self,
        agent: Agent,
        settings: RuntimeSettings | None = None,
        *,
        store: TaskStore | str | None = None,
        streams: StreamSettings | None = None,
        push: PushSettings | None = None,
        on_outbox: Callable[[], None] | None = None,
        extended_card: Callable[[CallContext], AgentCard] | None = None,
        card_overrides: Callable[[AgentCard], AgentCard] | None = None,
        generations: bool = False,
    ) -> None:
        """``settings`` and ``streams`` are the runtime's options; the keywords its
        collaborators: ``push`` turns on webhook delivery (its outbox rows are written
        with each save, ``on_outbox`` is told of new ones), ``extended_card`` serves the
        extended card, ``card_overrides`` edits the card, ``generations`` serves the
        task generations preview."""
        self.agent = agent
        self.settings = settings = settings or RuntimeSettings()
        streams = streams or StreamSettings()
        self.store: TaskStore = open_store(store)
        clock = settings.clock or utc_now
        changes = Changes(clock, settings.id_factory or random_id)
        self._owner_key = settings.owner_key or default_owner
        self._extended_card = extended_card
        self._runs = RunRegistry()
        planner = settings.push_planner
        if planner is None and push is not None:
            planner = DefaultPushPlanner(default_version=push.default_version)
        self._updates = TaskUpdates(self.store, self._runs, on_transition=settings.on_transition,
                                    push_planner=planner, on_outbox=on_outbox,
                                    max_history=settings.max_history,
                                    max_artifacts=settings.max_artifacts,
                                    generations=generations)
        executor = settings.executor
        self._keeper = LeaseKeeper(
            self.store, self._runs, self._updates, changes,
            lease_seconds=self._default_lease(settings.lease_seconds),
            poll_interval=settings.poll_interval, retention=settings.retention, clock=clock,
            may_rerun=self._may_rerun, rerun=self._rerun,
            queue_timeout=settings.queue_timeout if executor is not None else None)
        self._push = PushConfigs(self.store, push, changes.new_id)
        self._pool = ThreadPoolExecutor(max_workers=settings.max_workers
                                        or default_agent_workers(),
                                        thread_name_prefix="a2a-agent")
        self._runner = AgentRunner(agent, updates=self._updates, changes=changes,
                                   keeper=self._keeper, runs=self._runs,
                                   push_configs=self._push, pool=self._pool, clock=clock)
        #: Runs handed to a job queue (None: they execute on this process's pool).
        self._streams = Subscriptions(self.store, running=self._keeper.running,
                                      heartbeat_interval=streams.heartbeat_interval,
                                      resubscribe_timeout=streams.resubscribe_timeout)
        self._queued = None if executor is None else QueuedRuns(
            executor, store=self.store, runner=self._runner, updates=self._updates,
            keeper=self._keeper, runs=self._runs, changes=changes,
            streams=self._streams)
        self._card = self._build_card(push is not None)
        if card_overrides is not None:
            self._card = card_overrides(self._card)
        _LIVE.add(self)

    def _default_lease(self, given: float | None) -> float | None:
        """Work leases (and the keeper thread) only matter when other processes share the store."""
        if given is not None:
            return given
        return None if isinstance(self.store, MemoryTaskStore) else DEFAULT_LEASE_SECONDS

    def _may_rerun(self, attempts: int) -> bool:
        """A lost worker's task runs again only if the agent says that is safe, a few times."""
        return (bool(self.agent.rerun_on_worker_loss)
                and attempts <= self.settings.rerun_attempts)

    def _rerun(self, stored: StoredTask, scope: Scope, call: CallContext, runs: int) -> None:
        """The keeper's hook: run a lost worker's task again (through the job queue, if any)."""
        if self._queued is not None:
            self._queued.requeue(stored, scope, call, runs)
        else:
            self._runner.rerun(stored, scope, call)

    def run_queued(self, ref: RunRef, *, on_stuck: Callable[[], None] | None = None,
                   cancel_grace: float | None = None) -> bool:
        """A job queue worker's entry point (:mod:`a2a_wsgi.execution`): claim the task and
        run the agent on it in this thread; False when the delivery was dropped.
        ``on_stuck``: called when the agent still runs ``cancel_grace`` s after its cancel."""
        if self._queued is None:
            raise RuntimeError("run_queued() needs RuntimeSettings(executor=...)")
        return self._queued.execute(ref, on_stuck=on_stuck, cancel_grace=cancel_grace)

    def stop_streams(self) -> None:
        """End open streams cleanly (tasks go on; clients resume with Last-Event-ID)."""
        self._streams.stop()

    @property
    def stopping(self) -> bool:
        """True once :meth:`stop_streams` or :meth:`close` was called."""
        return self._streams.stopping.is_set()

    def close(self, *, wait: bool = False) -> None:
        """Stop taking work and the lease keeper; running agents finish unless the process exits."""
        self.stop_streams()
        self._keeper.stopping.set()
        self._pool.shutdown(wait=wait, cancel_futures=True)
        self._keeper.stop(wait=wait)

    @property
    def worker_id(self) -> str:
        """This process's name in the lease table (a forked worker gets its own)."""
        return self._keeper.worker_id

    def start_keeper(self) -> None:
        """Start renewing, watching and reaping now rather than at the first run."""
        self._keeper.start()

    def reap(self) -> int:
        """Take over expired leases: fail their tasks, or re-run them; the number handled."""
        return self._keeper.reap()

    def _scope(self, ctx: CallContext) -> Scope:
        return (self._owner_key(ctx.identity), ctx.tenant)

    # -- cards -------------------------------------------------------------------------

    def _build_card(self, push_enabled: bool) -> AgentCard:
        """The agent's card with the capabilities this runtime implements."""
        declared = self.agent.agent_card().capabilities
        caps = replace(
            declared,
            streaming=True if declared.streaming is None else declared.streaming,
            push_notifications=push_enabled,
            extended_agent_card=self._extended_card is not None,
        )
        return self.agent.agent_card(capabilities=caps)

    def agent_card(self) -> AgentCard:
        return self._card

    def extended_agent_card(self, ctx: CallContext) -> AgentCard:
        if self._extended_card is None:
            raise ExtendedAgentCardNotConfiguredError()
        return self._extended_card(ctx)

    # -- sending -----------------------------------------------------------------------

    def send_message(self, request: SendMessageRequest, ctx: CallContext) -> Task | Message:
        """Blocking sends run the agent in this thread; others return the SUBMITTED task.

        A new-task request this caller already sent (same messageId, same request)
        answers the task it created (a retried send makes no
        second task); a reused messageId with another request is a new send.
        """
        blocking = request.configuration is None or request.configuration.blocking
        earlier, claim = self._sent_before(request, ctx)
        if earlier is not None:
            return self._replayed(earlier.id, ctx) if blocking else earlier
        run = self._begin(request, claim, ctx)
        if self._queued is not None:
            return self._queued.send(run, blocking, ctx, replayed=self._replayed)
        if blocking:
            self._runner.execute(run)
            if run.duplicate_of is not None:  # a concurrent send of it stored its task first
                return self._replayed(run.duplicate_of, ctx)
            return self._runner.result(run)
        try:
            task = self._runner.create_submitted(run)
        except DuplicateMessageError as dup:  # a concurrent send of it stored its task first
            return self._updates.visible(dup.task_id, self._scope(ctx))
        self._runner.submit(run)
        return task

    def _replayed(self, task_id: str, ctx: CallContext) -> Task:
        """What a retried blocking send answers: what its first send would answer now.

        With no run of the task active, the task as it is; else the task once it
        settles, the run ends, the client hangs up or ``retry_wait_timeout`` passes.
        """
        return self._updates.settled(task_id, self._scope(ctx),
                                     running=partial(self._keeper.running, task_id),
                                     client_gone=ctx.client_gone,
                                     limit=self.settings.retry_wait_timeout)

    def send_streaming_message(
        self, request: SendMessageRequest, ctx: CallContext
    ) -> Iterator[StreamItem]:
        """Validate now (errors are plain JSON-RPC errors), then stream the run's events.

        A new-task request this caller already sent streams the task it created.
        """
        earlier, claim = self._sent_before(request, ctx)
        if earlier is not None:
            return self._streams.resent(earlier.id, self._scope(ctx), ctx.client_gone,
                                        ctx.stream_holder)
        run = self._begin(request, claim, ctx)
        if self._queued is not None:
            return self._queued.stream(run, ctx)
        self._runner.submit(run)
        return self._streams.run_stream(run)

    def _sent_before(self, request: SendMessageRequest,
                     ctx: CallContext) -> tuple[Task | None, str]:
        """The task this new-task request already created for this caller, if it is one
        a retry should answer; and the key a new task claims the message under."""
        return sent_before(self.store, request, self._scope(ctx))


    def _begin(self, request: SendMessageRequest, claim: str, ctx: CallContext) -> Run:
        """A run for a new task, or a continuation already applied to its task."""
        config = request.configuration
        push = config.push_notification_config if config is not None else None
        if push is not None:
            self._push.check(push, ctx.version)  # -32602 before any write
        msg = request.message
        if msg.task_id is None:
            scope = self._scope(ctx)
            if msg.context_id is not None and self.store.context_taken(
                    msg.context_id, owner=scope[0], tenant=scope[1]):
                # Another caller's context answers as another caller's task does: not found.
                raise TaskNotFoundError(f"Context {msg.context_id} not found")
            return self._runner.new_run(msg, scope, ctx, push, claim)
        match = config.if_generation_match if config is not None else None
        return self._runner.continued_run(msg, msg.task_id, self._scope(ctx), ctx, push, match)

    def subscribe_to_task(
        self, request: SubscribeToTaskRequest, ctx: CallContext
    ) -> Iterator[StreamItem]:
        """Current task, then each change from the event log; never re-runs the agent."""
        return self._streams.subscribe(request.id, self._scope(ctx), ctx.last_event_id,
                                       ctx.client_gone, ctx.stream_holder)

    # -- reading and canceling ----------------------------------------------------------

    def get_task(self, task_id: str, ctx: CallContext) -> Task:
        return self._updates.visible(task_id, self._scope(ctx))

    def task_after_generation(self, task_id: str, generation: int, ctx: CallContext) -> Task:
        """Long-poll GetTask (generation preview): held until the task's generation moves."""
        return held_until_changed(self.store, task_id, self._scope(ctx), generation,
                                  limit=self.settings.long_poll_timeout,
                                  client_gone=ctx.client_gone)

    def list_tasks(self, request: ListTasksRequest, ctx: CallContext) -> ListTasksResponse:
        """Newest first by status timestamp; the page token is an opaque cursor."""
        return list_page(self.store, self._scope(ctx), request)

    def cancel_task(self, request: CancelTaskRequest, ctx: CallContext) -> Task:
        """Terminal tasks refuse (-32002, a re-cancel too, as A2A 1.0 says); the agent's
        handle_cancel may veto. A cancel racing another that wins answers the canceled task."""
        scope = self._scope(ctx)
        task = self._updates.visible(request.id, scope, ctx.task)
        if task.status.state.is_terminal or not is_cancelable(task):
            raise TaskNotCancelableError(f"Task {task.id} is {task.status.state.value}")
        self._run_cancel_hook(task, ctx)
        try:
            stored = self._updates.update(task.id, scope,
                                          self._runner.changes.status(TaskState.CANCELED))
        except InvalidTransitionError:
            current = self._updates.visible(task.id, scope)
            if current.status.state is TaskState.CANCELED:
                return current
            raise TaskNotCancelableError(
                f"Task {task.id} is {current.status.state.value}"
            ) from None
        for run in self._runs.of(task.id):
            run.cancelled.set()
        if self._queued is not None:
            self._queued.canceled(task.id)
        return stored.task

    def _run_cancel_hook(self, task: Task, ctx: CallContext) -> None:
        context = AgentContext(task_id=task.id, context_id=task.context_id,
                               history=tuple(task.history), metadata=ctx.metadata,
                               extensions=ctx.extensions, identity=ctx.identity)
        try:
            self.agent.handle_cancel(context)
        except Exception as exc:
            log.info("handle_cancel refused to cancel task %s: %s", task.id, exc)
            raise TaskNotCancelableError(
                f"Task {task.id} cannot be canceled: {describe(exc)}"
            ) from None

    # -- push notification configs --------------------------------------------------------

    def create_push_config(
        self, config: TaskPushNotificationConfig, ctx: CallContext
    ) -> TaskPushNotificationConfig:
        self._updates.visible(config.task_id, self._scope(ctx), ctx.task)
        return self._push.shown(self._push.put(config.task_id, config.push_notification_config,
                                               config.tenant, ctx.version))

    def get_push_config(
        self, request: GetTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> TaskPushNotificationConfig:
        """Without a config id (0.3 style) the task's first config is answered."""
        self._updates.visible(request.task_id, self._scope(ctx), ctx.task)
        return self._push.get(request.task_id, request.config_id)

    def list_push_configs(
        self, request: ListTaskPushNotificationConfigsRequest, ctx: CallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        self._updates.visible(request.task_id, self._scope(ctx), ctx.task)
        return ListTaskPushNotificationConfigsResponse(configs=self._push.list(request.task_id))

    def delete_push_config(
        self, request: DeleteTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> None:
        self._updates.visible(request.task_id, self._scope(ctx), ctx.task)
        self._push.delete(request.task_id, request.config_id)

