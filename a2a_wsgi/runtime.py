"""The runtime: runs an :class:`~a2a_wsgi.agent.Agent` behind :class:`~a2a_core.service.A2AService`.

The dispatcher hands it typed requests; it creates and updates tasks through
:mod:`a2a_core.tasks`, stores them in a :class:`~a2a_wsgi.stores.TaskStore`
and runs the agent inline (blocking sends) or on a bounded thread pool
(non-blocking and streaming sends).
"""

# Theory of operation
# -------------------
#
# Rule 1: every change is a compare-and-set. ``_update`` reads the task and its
# version, applies a pure change function (built on a2a_core.tasks), and saves
# with ``expected_version``. On ConflictError it re-reads and re-applies. So a
# cancel and an agent finishing at the same moment both see each other's write,
# and the one that comes second finds a terminal task and is dropped: the first
# terminal state wins and CANCELED is never overwritten.
#
# Rule 2: every stream event goes to the store's per-task event log in the same
# save. Streams and subscribers replay the log from the sequence number of the
# snapshot they sent first, so they never miss or repeat an update.
#
# Rule 3: a new task is stored lazily. handle_message may answer with a bare
# message, and then no task may exist (seed: "no task is kept"). The task is
# therefore created (SUBMITTED, then WORKING) when the agent first emits an
# update or returns a task outcome. A non-blocking send must return a task at
# once, so it creates the task eagerly; a bare message then completes that task
# with the message in its history. Continuations always act at once: the user
# message is appended and the task moved to WORKING before the agent runs.
#
# Rule 4: the agent's code never takes the runtime down. An exception becomes
# FAILED "Error: <text>" (the traceback is logged); an update the task can no
# longer take because it was canceled meanwhile is dropped.

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from functools import partial
from typing import Any

from a2a_core.errors import (
    ExtendedAgentCardNotConfiguredError,
    InternalError,
    InvalidAgentResponseError,
    InvalidParamsError,
    InvalidTransitionError,
    RPCError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_core.models import (
    AgentCard,
    Artifact,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Part,
    PushNotificationConfig,
    Role,
    SendMessageRequest,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_core.service import HEARTBEAT, CallContext, OutboundEvent, StreamItem
from a2a_core.tasks import (
    ACTIVE_STATES,
    TransitionEvent,
    append_message,
    apply_event,
    is_cancelable,
    new_task,
    transitions_between,
)

from .agent import (
    Agent,
    AgentContext,
    AuthRequired,
    Failure,
    InputRequired,
    MessageReply,
    Outcome,
    Rejected,
    Reply,
    Stream,
    Working,
    as_outcome,
    to_parts,
)
from .push.settings import PushSettings, redact
from .stores import (
    ConflictError,
    EventsExpiredError,
    MemoryTaskStore,
    OutboxEntry,
    StoredTask,
    TaskCursor,
    TaskStore,
    open_store,
    sort_key,
)

__all__ = ["Runtime", "PushPlanner", "DEFAULT_PAGE_SIZE", "MAX_PAGE_SIZE", "DEFAULT_LEASE_SECONDS"]

log = logging.getLogger("a2a_wsgi.runtime")

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100
_CAS_RETRIES = 100
DEFAULT_LEASE_SECONDS = 30.0
_PURGE_EVERY = 60.0

#: (owner, tenant): every task query is scoped by both.
_Scope = tuple["str | None", "str | None"]

#: push_planner(task after the save, [(seq, event), ...], the task's push configs) -> entries.
PushPlanner = Callable[
    [Task, "Sequence[tuple[int, StreamEvent]]", "Sequence[TaskPushNotificationConfig]"],
    "Sequence[OutboxEntry]",
]

LOST_WORKER_REASON = "the worker running this task stopped (lease expired)"

#: A change function: the task as read -> the new task and the events it produced.
_Change = Callable[[Task], "tuple[Task, tuple[StreamEvent, ...]]"]


#: Outcomes that move the task to a state with the agent's parts as status message.
_PROMPT_STATES: dict[type, TaskState] = {
    InputRequired: TaskState.INPUT_REQUIRED,
    AuthRequired: TaskState.AUTH_REQUIRED,
    Rejected: TaskState.REJECTED,
}


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _random_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


def _worker_id() -> str:
    """Unique per process (and per fork): host, pid and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _call_payload(call: CallContext) -> bytes:
    """What a re-run on another worker needs of the call: its metadata, when it is JSON."""
    try:
        return json.dumps({"metadata": dict(call.metadata or {})}).encode()
    except (TypeError, ValueError):
        return b"{}"


def _payload_metadata(payload: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(payload or b"{}")
    except ValueError:
        return None
    metadata = data.get("metadata") if isinstance(data, dict) else None
    return metadata if isinstance(metadata, dict) and metadata else None


def _replay_gap(err: EventsExpiredError) -> UnsupportedOperationError:
    """A stream cursor older than the retained log: say so, never skip events silently."""
    return UnsupportedOperationError(
        f"Events of task {err.task_id} after #{err.after_seq} are no longer available "
        f"(the log now starts after #{err.floor}); get the task and subscribe again "
        "without Last-Event-ID"
    )


def _default_owner(identity: Any) -> str | None:
    """The store owner for an identity: None stays anonymous, anything else its str()."""
    return None if identity is None else str(identity)


def _describe(exc: BaseException) -> str:
    """The text a peer may see for an agent's exception: its message, never a traceback."""
    return str(exc) or type(exc).__name__


def _ends_stream(event: StreamEvent) -> bool:
    """A status event after which a send stream has nothing more to say."""
    if not isinstance(event, TaskStatusUpdateEvent):
        return False
    return event.status.state.is_terminal or event.status.state.is_interrupted


def _moved_on(run: _Run, ticks: int) -> bool:
    """Has the run committed something since ``ticks``, or finished?"""
    return run.ticks != ticks or run.done


def _is_terminal_event(event: StreamEvent) -> bool:
    return isinstance(event, TaskStatusUpdateEvent) and event.status.state.is_terminal


class _Run:
    """One execution of handle_message, shared by its worker and whoever waits on it."""

    def __init__(
        self,
        *,
        task_id: str,
        context_id: str,
        scope: _Scope,
        message: Message,
        history: tuple[Message, ...],
        is_new: bool,
        call: CallContext,
        push: PushNotificationConfig | None,
        snapshot: StoredTask | None = None,
    ) -> None:
        self.task_id, self.context_id, self.scope = task_id, context_id, scope
        self.message, self.is_new, self.push, self.call = message, is_new, push, call
        #: True while this process holds the task's work lease for this run.
        self.leased = False
        self.cond = threading.Condition()
        #: Set when the streaming client went away: stop consuming the agent's iterator.
        self.detached = threading.Event()
        self.context = AgentContext(
            task_id=task_id,
            context_id=context_id,
            history=history,
            metadata=call.metadata,
            extensions=call.extensions,
            identity=call.identity,
        )
        self.created = not is_new
        #: The task as first stored for this run (a stream's first item).
        self.snapshot = snapshot
        #: Bumped after every commit on this task, so a stream waiting on ``cond`` wakes.
        self.ticks = 0
        self.done = False
        self.reply: Message | None = None
        self.error: RPCError | None = None

    @property
    def cancelled(self) -> threading.Event:
        return self.context.cancelled

    def poke(self) -> None:
        with self.cond:
            self.ticks += 1
            self.cond.notify_all()


class _RunUpdater:
    """The TaskUpdater behind a run's AgentContext (emit_status / emit_artifact)."""

    def __init__(self, runtime: Runtime, run: _Run) -> None:
        self._runtime, self._run = runtime, run

    def update_status(self, state: TaskState, message: Message | None) -> None:
        self._runtime._emit_status(self._run, state, message)

    def update_artifact(self, artifact: Artifact, *, append: bool, last_chunk: bool) -> None:
        self._runtime._emit_artifact(self._run, artifact, append=append, last_chunk=last_chunk)

    def new_id(self, prefix: str) -> str:
        return self._runtime._new_id(prefix)


class Runtime:
    """Runs one agent and implements every :class:`~a2a_core.service.A2AService` operation.

    ``clock`` returns aware UTC datetimes; ``id_factory(prefix)`` returns unique
    ids ("tsk", "ctx", "msg", "art", "pcfg" prefixes); ``owner_key`` maps the
    caller's identity to the owner string tasks are scoped by.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        store: TaskStore | None = None,
        max_workers: int = 8,
        clock: Callable[[], datetime] | None = None,
        id_factory: Callable[[str], str] | None = None,
        on_transition: Callable[[TransitionEvent], None] | None = None,
        resubscribe_timeout: float = 60.0,
        heartbeat_interval: float = 15.0,
        extended_card: Callable[[CallContext], AgentCard] | None = None,
        push_enabled: bool = False,
        owner_key: Callable[[Any], str | None] | None = None,
        lease_seconds: float | None = None,
        poll_interval: float = 0.5,
        push_planner: PushPlanner | None = None,
        push_settings: PushSettings | None = None,
        retention: timedelta | None = None,
        max_history: int | None = None,
        max_artifacts: int | None = None,
        rerun_attempts: int = 3,
    ) -> None:
        self.agent = agent
        self.store: TaskStore = open_store(store)
        shared = not isinstance(self.store, MemoryTaskStore)
        #: Work leases (and the keeper thread) only matter when other processes share the store.
        self._lease_seconds = (lease_seconds if lease_seconds is not None
                               else DEFAULT_LEASE_SECONDS if shared else None)
        self._poll_interval = poll_interval
        self._push_planner = push_planner
        #: Checks (SSRF, header injection, cap) and stamps push configs; None: stored as given.
        self._push_settings = push_settings
        self._retention = retention
        self._max_history, self._max_artifacts = max_history, max_artifacts
        self._rerun_attempts = rerun_attempts
        self._keeper: threading.Thread | None = None
        self._keeper_pid = 0
        self._worker = ""
        self._stopping = threading.Event()
        self._clock = clock or _utc_now
        self._new_id = id_factory or _random_id
        self._on_transition = on_transition
        self._resubscribe_timeout = resubscribe_timeout
        self._heartbeat = heartbeat_interval
        self._extended_card = extended_card
        self._owner_key = owner_key or _default_owner
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="a2a-agent")
        self._lock = threading.Lock()
        self._runs: dict[str, list[_Run]] = {}
        self._card = self._build_card(push_enabled)

    def close(self, *, wait: bool = False) -> None:
        """Stop taking work and the lease keeper; running agents finish unless the process exits."""
        self._stopping.set()
        self._pool.shutdown(wait=wait, cancel_futures=True)
        keeper = self._keeper
        if wait and keeper is not None and keeper.is_alive() and self._keeper_pid == os.getpid():
            keeper.join(timeout=5)

    @property
    def worker_id(self) -> str:
        """This process's name in the lease table (a forked worker gets its own)."""
        if not self._worker or self._keeper_pid != os.getpid():
            self._worker, self._keeper_pid, self._keeper = _worker_id(), os.getpid(), None
        return self._worker

    def _scope(self, ctx: CallContext) -> _Scope:
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
        """Blocking sends run the agent in this thread; others return the SUBMITTED task."""
        run = self._begin(request, ctx)
        blocking = request.configuration is None or request.configuration.blocking
        if blocking:
            self._execute(run)
            return self._result(run)
        try:
            self._materialize(run)
        except BaseException:
            self._unregister(run)
            raise
        assert run.snapshot is not None
        self._submit(run)
        return run.snapshot.task

    def send_streaming_message(
        self, request: SendMessageRequest, ctx: CallContext
    ) -> Iterator[StreamItem]:
        """Validate now (errors are plain JSON-RPC errors), then stream the run's events."""
        run = self._begin(request, ctx)
        self._submit(run)
        return self._stream_run(run)

    def _begin(self, request: SendMessageRequest, ctx: CallContext) -> _Run:
        """A run for a new task, or a continuation already applied to its task."""
        scope = self._scope(ctx)
        config = request.configuration
        push = config.push_notification_config if config is not None else None
        if push is not None and self._push_settings is not None:  # -32602 before any write
            self._push_settings.prepare(
                TaskPushNotificationConfig(task_id="", push_notification_config=push), ctx.version)
        msg = request.message
        if msg.task_id is None:
            task_id = self._new_id("tsk")
            context_id = msg.context_id or self._new_id("ctx")
            bound = replace(msg, task_id=task_id, context_id=context_id)
            run = _Run(task_id=task_id, context_id=context_id, scope=scope, message=bound,
                       history=(bound,), is_new=True, call=ctx, push=push)
        else:
            run = self._continue(msg, msg.task_id, scope, ctx, push)
        run.context.updater = _RunUpdater(self, run)
        self._register(run)
        return run

    def _continue(
        self, msg: Message, task_id: str, scope: _Scope, ctx: CallContext,
        push: PushNotificationConfig | None,
    ) -> _Run:
        """Append the user's message and move the task to WORKING (Rule 3)."""

        def change(task: Task) -> tuple[Task, tuple[StreamEvent, ...]]:
            if msg.context_id is not None and msg.context_id != task.context_id:
                raise InvalidParamsError(
                    f"message.contextId {msg.context_id!r} does not match task {task.id}",
                    field_violations={"params.message.contextId": "does not match the task"},
                )
            return self._status_change(TaskState.WORKING)(append_message(task, msg))

        stored = self._update(task_id, scope, change)
        task = stored.task
        if push is not None:
            self._put_push(task.id, push, ctx.tenant, ctx.version)
        return _Run(task_id=task.id, context_id=task.context_id, scope=scope,
                    message=task.history[-1], history=tuple(task.history), is_new=False,
                    call=ctx, push=None, snapshot=stored)

    def _submit(self, run: _Run) -> None:
        try:
            self._pool.submit(self._execute, run)
        except BaseException:
            self._unregister(run)
            raise

    def _result(self, run: _Run) -> Task | Message:
        """What a blocking send answers once the run is over."""
        if run.error is not None:
            raise run.error
        if run.reply is not None:
            return run.reply
        return self._visible(run.task_id, run.scope)

    # -- running the agent -------------------------------------------------------------

    def _execute(self, run: _Run) -> None:
        """Run handle_message and apply its outcome; never raises (Rule 4)."""
        try:
            self._take_lease(run)
            if run.created:
                self._ensure_working(run)
            self._apply_outcome(run, self._call_agent(run))
        except RPCError as err:
            run.error = err
        except Exception:
            log.exception("runtime failure while running task %s", run.task_id)
            run.error = InternalError()
            self._fail_quietly(run, "internal error")
        finally:
            self._finish(run)

    def _call_agent(self, run: _Run) -> Outcome | None:
        try:
            return as_outcome(self.agent.handle_message(run.message, run.context))
        except Exception as exc:
            log.exception("agent raised while handling task %s", run.task_id)
            return Failure(_describe(exc))

    def _apply_outcome(self, run: _Run, outcome: Outcome | None) -> None:
        if isinstance(outcome, MessageReply):
            self._message_outcome(run, outcome)
            return
        self._ensure_working(run)
        if isinstance(outcome, Stream):
            self._consume(run, outcome)
            return
        change = self._outcome_change(run, outcome)
        if change is not None:
            self._apply_late(run, change)

    def _outcome_change(self, run: _Run, outcome: Outcome | None) -> _Change | None:
        """The change an outcome makes to a WORKING task (None: leave it as it is)."""
        if isinstance(outcome, Reply):
            return self._completion(
                outcome.parts, artifact_id=self._new_id("art"), name=outcome.artifact_name
            )
        if isinstance(outcome, (InputRequired, AuthRequired, Rejected)):
            state = _PROMPT_STATES[type(outcome)]
            return self._status_change(state, self._agent_message(run, outcome.parts))
        if isinstance(outcome, Failure):
            return self._failure(run, outcome.reason)
        if isinstance(outcome, Working):
            if outcome.text is None:
                return None
            return self._status_change(TaskState.WORKING, self._agent_message(run, (outcome.text,)))
        return self._complete_if_active()

    def _message_outcome(self, run: _Run, outcome: MessageReply) -> None:
        """A bare message: no task when none was stored; -32006 on a continuation."""
        if not run.created:
            reply = Message(message_id=self._new_id("msg"), role=Role.AGENT,
                            parts=outcome.parts, context_id=run.context_id)
            with run.cond:
                run.reply = reply
                run.cond.notify_all()
        elif run.is_new:
            self._apply_late(run, self._completion(outcome.parts, artifact_id=None))
        else:
            reason = "the agent answered a task with a bare message"
            self._apply_late(run, self._failure(run, reason))
            raise InvalidAgentResponseError(
                "The agent replied with a bare message while continuing a task"
            )

    def _consume(self, run: _Run, outcome: Stream) -> None:
        """Send each part as a chunk of one artifact; the last chunk is held back one step
        so it can carry ``last_chunk``. Stops early on cancel or client disconnect."""
        artifact_id = self._new_id("art")
        sent: list[Part] = []
        held: Part | None = None
        failure: str | None = None
        iterator = iter(outcome.source)
        try:
            while not (run.cancelled.is_set() or run.detached.is_set()):
                try:
                    item = next(iterator)
                except StopIteration:
                    break
                for part in to_parts(item):
                    if held is not None:
                        self._chunk(run, artifact_id, held, outcome.artifact_name, sent, last=False)
                    held = part
        except Exception as exc:
            log.exception("agent stream raised on task %s", run.task_id)
            failure = _describe(exc)
        finally:
            close = getattr(iterator, "close", None)
            if callable(close):
                close()
        if held is not None:
            self._chunk(run, artifact_id, held, outcome.artifact_name, sent, last=True)
        if failure is None and run.detached.is_set() and not run.cancelled.is_set():
            failure = "the client disconnected before the stream ended"
        if failure is not None:
            self._apply_late(run, self._failure(run, failure))
        elif not run.cancelled.is_set():
            self._apply_late(run, self._completion(tuple(sent), artifact_id=None))

    def _chunk(
        self, run: _Run, artifact_id: str, part: Part, name: str | None, sent: list[Part],
        *, last: bool,
    ) -> None:
        artifact = Artifact(artifact_id=artifact_id, parts=(part,), name=name)
        self._emit_artifact(run, artifact, append=bool(sent), last_chunk=last)
        sent.append(part)

    def _finish(self, run: _Run) -> None:
        if run.leased:
            run.leased = False
            try:
                self.store.release_lease(run.task_id, self.worker_id)
            except Exception:
                log.exception("could not release the lease of task %s", run.task_id)
        with run.cond:
            run.done = True
            run.cond.notify_all()
        self._unregister(run)

    def _fail_quietly(self, run: _Run, reason: str) -> None:
        """Best effort after a runtime bug: the task should not stay WORKING for ever."""
        if not run.created:
            return
        try:
            self._apply_late(run, self._failure(run, reason))
        except Exception:
            log.exception("could not mark task %s failed", run.task_id)

    # -- agent-driven updates (AgentContext.emit_*) ---------------------------------------

    def _emit_status(self, run: _Run, state: TaskState, message: Message | None) -> None:
        self._ensure_working(run)
        update = self._status_change(state, message)

        def change(task: Task) -> tuple[Task, tuple[StreamEvent, ...]]:
            if state is task.status.state is TaskState.WORKING and message is None:
                return task, ()  # already WORKING: nothing new to say
            return update(task)

        self._apply_late(run, change)

    def _emit_artifact(
        self, run: _Run, artifact: Artifact, *, append: bool, last_chunk: bool
    ) -> None:
        self._ensure_working(run)

        def change(task: Task) -> tuple[Task, tuple[StreamEvent, ...]]:
            event = TaskArtifactUpdateEvent(task_id=task.id, context_id=task.context_id,
                                            artifact=artifact, append=append,
                                            last_chunk=last_chunk)
            return apply_event(task, event), (event,)

        self._apply_late(run, change)

    def _materialize(self, run: _Run) -> None:
        """Store the run's new task, SUBMITTED (Rule 3); a no-op once stored."""
        if run.created:
            return
        task = new_task(task_id=run.task_id, context_id=run.context_id, message=run.message,
                        timestamp=self._clock())
        owner, tenant = run.scope
        version = self.store.save(task, expected_version=None, owner=owner, tenant=tenant)
        self._committed(None, task)
        if run.push is not None:
            self._put_push(task.id, run.push, tenant, run.call.version)
        with run.cond:
            run.created = True
            run.snapshot = StoredTask(task, version, 0)
            run.cond.notify_all()

    def _ensure_working(self, run: _Run) -> None:
        """Make sure the task exists and has left SUBMITTED (the seed's "working first")."""
        self._materialize(run)

        def change(task: Task) -> tuple[Task, tuple[StreamEvent, ...]]:
            if task.status.state is not TaskState.SUBMITTED:
                return task, ()
            return self._status_change(TaskState.WORKING)(task)

        self._apply_late(run, change)

    def _apply_late(self, run: _Run, change: _Change) -> None:
        """Apply an agent-side change; drop it when the task became terminal meanwhile."""
        try:
            self._update(run.task_id, run.scope, change)
        except (InvalidTransitionError, UnsupportedOperationError):
            current = self.store.get(run.task_id, owner=run.scope[0], tenant=run.scope[1])
            if current is None or not current.status.state.is_terminal:
                raise
            log.debug("task %s is %s: update dropped", run.task_id, current.status.state.value)

    # -- change functions ----------------------------------------------------------------

    def _status_change(self, state: TaskState, message: Message | None = None) -> _Change:
        def change(task: Task) -> tuple[Task, tuple[StreamEvent, ...]]:
            status = TaskStatus(state=state, message=message, timestamp=self._clock())
            event = TaskStatusUpdateEvent(
                task_id=task.id, context_id=task.context_id, status=status,
                final=state.is_terminal or state.is_interrupted,
            )
            updated = apply_event(task, event)
            return (task, ()) if updated is task else (updated, (event,))

        return change

    def _completion(
        self, parts: Sequence[Part], *, artifact_id: str | None, name: str | None = None
    ) -> _Change:
        """COMPLETED with the agent's message in history, plus one artifact when given an id."""
        reply_id = self._new_id("msg")

        def change(task: Task) -> tuple[Task, tuple[StreamEvent, ...]]:
            events: tuple[StreamEvent, ...] = ()
            if artifact_id is not None:
                artifact = Artifact(artifact_id=artifact_id, parts=tuple(parts), name=name)
                events = (TaskArtifactUpdateEvent(task_id=task.id, context_id=task.context_id,
                                                  artifact=artifact, last_chunk=True),)
                task = apply_event(task, events[0])
            if parts:
                task = append_message(task, Message(message_id=reply_id, role=Role.AGENT,
                                                    parts=tuple(parts)))
            done, status_events = self._status_change(TaskState.COMPLETED)(task)
            return done, events + status_events

        return change

    def _failure(self, run: _Run, reason: str) -> _Change:
        message = self._agent_message(run, (f"Error: {reason}",))
        return self._status_change(TaskState.FAILED, message)

    def _complete_if_active(self) -> _Change:
        """Returning None: complete a task the agent left WORKING, keep any other state."""
        complete = self._status_change(TaskState.COMPLETED)

        def change(task: Task) -> tuple[Task, tuple[StreamEvent, ...]]:
            if task.status.state in ACTIVE_STATES:
                return complete(task)
            return task, ()

        return change

    def _agent_message(self, run: _Run, parts: Sequence[Any]) -> Message:
        return Message(message_id=self._new_id("msg"), role=Role.AGENT, parts=to_parts(*parts),
                       task_id=run.task_id, context_id=run.context_id)

    # -- the store ----------------------------------------------------------------------

    def _update(self, task_id: str, scope: _Scope, change: _Change) -> StoredTask:
        """Read, change, compare-and-set; retry on conflict (Rule 1)."""
        for _ in range(_CAS_RETRIES):
            stored = self.store.load(task_id, owner=scope[0], tenant=scope[1])
            if stored is None:
                raise TaskNotFoundError(f"Task {task_id} not found")
            updated, events = change(stored.task)
            if updated is stored.task and not events:
                return stored
            updated = self._bounded(updated)
            outbox = self._plan_push(updated, stored.event_seq, events)
            try:
                version = self.store.save(updated, expected_version=stored.version,
                                          owner=scope[0], tenant=scope[1], events=events,
                                          outbox=outbox)
            except ConflictError:
                continue
            self._committed(stored.task, updated)
            return StoredTask(updated, version, stored.event_seq + len(events))
        raise RuntimeError(f"task {task_id} kept changing; gave up after {_CAS_RETRIES} tries")

    def _bounded(self, task: Task) -> Task:
        """Keep the newest ``max_history`` messages and ``max_artifacts`` artifacts."""
        if self._max_history is not None and len(task.history) > self._max_history:
            task = replace(task, history=task.history[len(task.history) - self._max_history:])
        if self._max_artifacts is not None and len(task.artifacts) > self._max_artifacts:
            task = replace(task,
                           artifacts=task.artifacts[len(task.artifacts) - self._max_artifacts:])
        return task

    def _plan_push(self, task: Task, last_seq: int,
                   events: Sequence[StreamEvent]) -> Sequence[OutboxEntry]:
        """Outbox entries for these events, saved with them (configs read only with a planner)."""
        if self._push_planner is None or not events:
            return ()
        configs = self.store.list_push_configs(task.id)
        if not configs:
            return ()
        numbered = [(last_seq + n, event) for n, event in enumerate(events, 1)]
        return tuple(self._push_planner(task, numbered, configs))

    def _committed(self, old: Task | None, new: Task) -> None:
        """After a save: report the transition, wake this process's streams."""
        transition = transitions_between(old, new)
        if transition is not None:
            self._report(transition)
        for run in self._runs_of(new.id):
            run.poke()

    def _report(self, transition: TransitionEvent) -> None:
        log.debug("task %s: %s -> %s at %s", transition.task_id,
                  transition.from_state.value if transition.from_state else None,
                  transition.to_state.value, transition.timestamp)
        if self._on_transition is None:
            return
        try:
            self._on_transition(transition)
        except Exception:
            log.exception("on_transition hook raised")

    def _visible(self, task_id: str, scope: _Scope) -> Task:
        task = self.store.get(task_id, owner=scope[0], tenant=scope[1])
        if task is None:
            raise TaskNotFoundError(f"Task {task_id} not found")
        return task

    def _register(self, run: _Run) -> None:
        with self._lock:
            self._runs.setdefault(run.task_id, []).append(run)

    def _unregister(self, run: _Run) -> None:
        with self._lock:
            runs = self._runs.get(run.task_id, [])
            if run in runs:
                runs.remove(run)
            if not runs:
                self._runs.pop(run.task_id, None)

    def _runs_of(self, task_id: str) -> list[_Run]:
        with self._lock:
            return list(self._runs.get(task_id, ()))

    # -- leases, cancels from other workers, lost workers ------------------------------
    #
    # While a run executes, this process holds the task's lease and a keeper
    # thread (one per process) renews it every lease/3 seconds. The same thread
    # polls the store for runs whose task became terminal elsewhere (a cancel
    # on another worker, or a reaper that took the lease over) and sets their
    # ``cancelled`` flag; and it reaps expired leases of dead workers: their
    # tasks are failed (or re-run, when the agent says that is safe), with the
    # final event in the log so every subscriber, on any worker, hears it.

    def _take_lease(self, run: _Run) -> None:
        if self._lease_seconds is None:
            return
        self._ensure_keeper()
        now = _utc_now()
        owner, tenant = run.scope
        run.leased = self.store.acquire_lease(
            run.task_id, self.worker_id, now + timedelta(seconds=self._lease_seconds), now=now,
            owner=owner, tenant=tenant, payload=_call_payload(run.call))
        if not run.leased:
            log.warning("task %s is leased by another worker; running it anyway", run.task_id)

    def _ensure_keeper(self) -> None:
        """Start this process's keeper thread once (again after a fork)."""
        worker = self.worker_id
        with self._lock:
            if self._keeper is not None or self._stopping.is_set():
                return
            self._keeper = threading.Thread(target=self._keep, args=(worker,), daemon=True,
                                            name="a2a-lease-keeper")
            self._keeper.start()

    def start_keeper(self) -> None:
        """Start renewing, watching and reaping now rather than at the first run."""
        if self._lease_seconds is not None:
            self._ensure_keeper()

    def _keep(self, worker: str) -> None:
        assert self._lease_seconds is not None
        renew_every = self._lease_seconds / 3
        last_renew = last_reap = last_purge = 0.0
        while not self._stopping.wait(self._poll_interval):
            if self._keeper_pid != os.getpid():
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
                if self._retention is not None and now - last_purge >= _PURGE_EVERY:
                    last_purge = now
                    self.store.purge(self._clock() - self._retention)
            except Exception:
                log.exception("lease keeper pass failed; retrying")

    def _leased_runs(self) -> list[_Run]:
        with self._lock:
            return [run for runs in self._runs.values() for run in runs if run.leased]

    def _watch_cancels(self) -> None:
        """Stop runs whose task another worker ended (a cancel is a stored CANCELED state)."""
        runs = self._leased_runs()
        if not runs:
            return
        finished = self.store.finished_among(sorted({run.task_id for run in runs}))
        for run in runs:
            if run.task_id in finished and not run.cancelled.is_set():
                run.cancelled.set()
                run.poke()

    def _renew(self, worker: str) -> None:
        runs = self._leased_runs()
        if not runs:
            return
        assert self._lease_seconds is not None
        until = _utc_now() + timedelta(seconds=self._lease_seconds)
        kept = self.store.renew_leases(worker, sorted({run.task_id for run in runs}), until)
        for run in runs:
            if run.task_id not in kept and run.leased:
                log.warning("lost the lease of task %s; stopping its agent", run.task_id)
                run.leased = False
                run.cancelled.set()
                run.poke()

    def reap(self) -> int:
        """Take over expired leases: fail their tasks, or re-run them; the number handled."""
        if self._lease_seconds is None:
            return 0
        handled = 0
        now = _utc_now()
        mine = {run.task_id for run in self._leased_runs()}
        for lease in self.store.expired_leases(now):
            if lease.task_id in mine:
                continue  # ours, just late: the next renewal extends it
            until = now + timedelta(seconds=self._lease_seconds)
            if not self.store.acquire_lease(lease.task_id, self.worker_id, until, now=now,
                                            owner=lease.owner, tenant=lease.tenant,
                                            payload=lease.payload):
                continue  # another worker's reaper won
            handled += 1
            try:
                self._recover(lease.task_id, (lease.owner, lease.tenant), lease.attempts,
                              lease.payload)
            except Exception:
                log.exception("could not recover task %s", lease.task_id)
                self.store.release_lease(lease.task_id, self.worker_id)
        return handled

    def _recover(self, task_id: str, scope: _Scope, attempts: int, payload: bytes) -> None:
        """A dead worker's task: re-run it when the agent allows, else fail it."""
        stored = self.store.load(task_id, owner=scope[0], tenant=scope[1])
        if stored is None or stored.task.status.state.is_terminal:
            self.store.release_lease(task_id, self.worker_id)
            return
        rerun = self.agent.rerun_on_worker_loss
        if rerun and attempts <= self._rerun_attempts:
            log.warning("re-running task %s after its worker was lost (attempt %d)",
                        task_id, attempts)
            self._rerun(stored, scope, payload)
            return
        log.warning("failing task %s: %s", task_id, LOST_WORKER_REASON)
        message = Message(message_id=self._new_id("msg"), role=Role.AGENT,
                          parts=to_parts(f"Error: {LOST_WORKER_REASON}"), task_id=task_id,
                          context_id=stored.task.context_id)
        fail = self._status_change(TaskState.FAILED, message)

        def change(task: Task) -> tuple[Task, tuple[StreamEvent, ...]]:
            return (task, ()) if task.status.state.is_terminal else fail(task)

        try:
            self._update(task_id, scope, change)
        finally:
            self.store.release_lease(task_id, self.worker_id)

    def _rerun(self, stored: StoredTask, scope: _Scope, payload: bytes) -> None:
        task = stored.task
        users = [m for m in task.history if m.role is Role.USER]
        message = users[-1] if users else task.history[-1]
        call = CallContext(version="1.0", metadata=_payload_metadata(payload),
                           identity=scope[0], tenant=scope[1])
        run = _Run(task_id=task.id, context_id=task.context_id, scope=scope, message=message,
                   history=tuple(task.history), is_new=False, call=call, push=None,
                   snapshot=stored)
        run.context.updater = _RunUpdater(self, run)
        self._register(run)
        self._submit(run)

    # -- streams ------------------------------------------------------------------------

    def _stream_run(self, run: _Run) -> Iterator[StreamItem]:
        """Task (or the bare Message) first, then this run's events until it is over.

        Every item but a bare Message carries the event-log sequence number as its
        id (the snapshot: the number of the last event it includes).
        """
        try:
            while not self._wait(run, lambda: run.snapshot is not None or run.reply is not None
                                 or run.done):
                yield HEARTBEAT
            if run.reply is not None:
                yield run.reply
                return
            if run.snapshot is None:
                raise run.error or InternalError()
            seq = run.snapshot.event_seq
            yield OutboundEvent(run.snapshot.task, str(seq))
            yield from self._run_events(run, seq)
        except GeneratorExit:
            run.detached.set()
            raise

    def _run_events(self, run: _Run, after: int) -> Iterator[StreamItem]:
        while True:
            with run.cond:
                ticks, done = run.ticks, run.done
            try:
                batch = self.store.events_after(run.task_id, after)
            except EventsExpiredError as err:
                raise _replay_gap(err) from None
            for seq, event in batch:
                after = seq
                yield OutboundEvent(event, str(seq))
                if _ends_stream(event):
                    return
            if batch:
                continue
            if done:
                if run.error is not None:
                    raise run.error
                return
            if not self._wait(run, partial(_moved_on, run, ticks)):
                yield HEARTBEAT

    def _wait(self, run: _Run, predicate: Callable[[], bool]) -> bool:
        with run.cond:
            return run.cond.wait_for(predicate, timeout=self._heartbeat)

    def subscribe_to_task(
        self, request: SubscribeToTaskRequest, ctx: CallContext
    ) -> Iterator[StreamItem]:
        """Current task, then each change from the event log; never re-runs the agent.

        With ``Last-Event-ID`` (a sequence number we sent) the snapshot is skipped
        and the log is replayed from there, even for a task that has since ended.
        """
        owner, tenant = self._scope(ctx)
        stored = self.store.load(request.id, owner=owner, tenant=tenant)
        if stored is None:
            raise TaskNotFoundError(f"Task {request.id} not found")
        resume = _parse_seq(ctx.last_event_id)
        if resume is None and stored.task.status.state.is_terminal:
            raise UnsupportedOperationError(
                f"Task {request.id} is in a terminal state ({stored.task.status.state.value})"
            )
        return self._follow(stored, resume)

    def _follow(self, stored: StoredTask, resume: int | None) -> Iterator[StreamItem]:
        try:
            yield from self._follow_log(stored, resume)
        except EventsExpiredError as err:
            raise _replay_gap(err) from None

    def _follow_log(self, stored: StoredTask, resume: int | None) -> Iterator[StreamItem]:
        task_id = stored.task.id
        if resume is None:
            after = stored.event_seq
            yield OutboundEvent(stored.task, str(after))  # resuming from its id skips nothing
        else:
            after = resume
            if stored.task.status.state.is_terminal:
                for seq, event in self.store.events_after(task_id, after):
                    yield OutboundEvent(event, str(seq))
                return
        quiet_since = time.monotonic()
        while True:
            left = self._resubscribe_timeout - (time.monotonic() - quiet_since)
            if left <= 0:
                return
            batch = self.store.wait_for_events(task_id, after, min(self._heartbeat, left))
            if not batch:
                if time.monotonic() - quiet_since < self._resubscribe_timeout:
                    yield HEARTBEAT
                continue
            for seq, event in batch:
                after = seq
                yield OutboundEvent(event, str(seq))
                if _is_terminal_event(event):
                    return
            quiet_since = time.monotonic()

    # -- reading and canceling ----------------------------------------------------------

    def get_task(self, task_id: str, ctx: CallContext) -> Task:
        return self._visible(task_id, self._scope(ctx))

    def list_tasks(self, request: ListTasksRequest, ctx: CallContext) -> ListTasksResponse:
        """Newest first by status timestamp; the page token is an opaque cursor."""
        size = DEFAULT_PAGE_SIZE if request.page_size is None else request.page_size
        if not 1 <= size <= MAX_PAGE_SIZE:
            raise InvalidParamsError(
                f"pageSize must be between 1 and {MAX_PAGE_SIZE}",
                field_violations={"params.pageSize": f"must be 1..{MAX_PAGE_SIZE}"},
            )
        cursor = _decode_token(request.page_token) if request.page_token else None
        tasks, total = self.store.list(
            owner=self._owner_key(ctx.identity), tenant=ctx.tenant, context_id=request.context_id,
            status=request.status, status_timestamp_after=request.status_timestamp_after,
            after=cursor, limit=size + 1,
        )
        page = tasks[:size]
        token = _encode_token(sort_key(page[-1])) if len(tasks) > size else ""
        return ListTasksResponse(tasks=page, next_page_token=token, page_size=len(page),
                                 total_size=total)

    def cancel_task(self, request: CancelTaskRequest, ctx: CallContext) -> Task:
        """Seed rules: re-cancel succeeds, finished tasks refuse, the hook may veto."""
        scope = self._scope(ctx)
        task = self._visible(request.id, scope)
        if task.status.state is TaskState.CANCELED:
            return task
        if not is_cancelable(task):
            raise TaskNotCancelableError(f"Task {task.id} is {task.status.state.value}")
        self._run_cancel_hook(task, ctx)
        try:
            stored = self._update(task.id, scope, self._status_change(TaskState.CANCELED))
        except InvalidTransitionError:
            current = self._visible(task.id, scope)
            if current.status.state is TaskState.CANCELED:
                return current
            raise TaskNotCancelableError(
                f"Task {task.id} is {current.status.state.value}"
            ) from None
        for run in self._runs_of(task.id):
            run.cancelled.set()
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
                f"Task {task.id} cannot be canceled: {_describe(exc)}"
            ) from None

    # -- push notification configs --------------------------------------------------------

    def _put_push(
        self, task_id: str, config: PushNotificationConfig, tenant: str | None, version: str
    ) -> TaskPushNotificationConfig:
        """Store a config, checked and stamped with its dialect when push delivery is on."""
        if config.id is None:
            config = replace(config, id=self._new_id("pcfg"))
        stored = TaskPushNotificationConfig(task_id=task_id, push_notification_config=config,
                                            tenant=tenant, protocol_version=version)
        if self._push_settings is not None:
            stored = self._push_settings.prepare(stored, version,
                                                 self.store.list_push_configs(task_id))
        self.store.put_push_config(stored)
        return stored

    def _shown(self, config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
        """A config as answered to callers: credentials are write-only when push is on."""
        return redact(config) if self._push_settings is not None else config

    def create_push_config(
        self, config: TaskPushNotificationConfig, ctx: CallContext
    ) -> TaskPushNotificationConfig:
        self._visible(config.task_id, self._scope(ctx))
        return self._shown(self._put_push(config.task_id, config.push_notification_config,
                                          config.tenant, ctx.version))

    def get_push_config(
        self, request: GetTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> TaskPushNotificationConfig:
        """Without a config id (0.3 style) the task's first config is answered."""
        self._visible(request.task_id, self._scope(ctx))
        if request.config_id is None:
            configs = self.store.list_push_configs(request.task_id)
            found = configs[0] if configs else None
        else:
            found = self.store.get_push_config(request.task_id, request.config_id)
        if found is None:
            raise TaskNotFoundError(
                f"Push notification config {request.config_id} not found for task "
                f"{request.task_id}"
            )
        return self._shown(found)

    def list_push_configs(
        self, request: ListTaskPushNotificationConfigsRequest, ctx: CallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        self._visible(request.task_id, self._scope(ctx))
        return ListTaskPushNotificationConfigsResponse(
            configs=[self._shown(c) for c in self.store.list_push_configs(request.task_id)]
        )

    def delete_push_config(
        self, request: DeleteTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> None:
        self._visible(request.task_id, self._scope(ctx))
        if not self.store.delete_push_config(request.task_id, request.config_id):
            raise TaskNotFoundError(
                f"Push notification config {request.config_id} not found for task "
                f"{request.task_id}"
            )


# -- page tokens ---------------------------------------------------------------------------


def _encode_token(cursor: TaskCursor) -> str:
    """An opaque cursor: base64url of [timestamp, task id]."""
    raw = json.dumps([cursor[0].isoformat(), cursor[1]]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_token(token: str) -> TaskCursor:
    """The cursor in a token we made; anything else is -32602."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        stamp, task_id = json.loads(raw)
        cursor = (datetime.fromisoformat(stamp), task_id)
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError):
        cursor = None
    if cursor is None or not isinstance(cursor[1], str) or cursor[0].tzinfo is None:
        raise InvalidParamsError(
            "Invalid page token", field_violations={"params.pageToken": "unknown page token"}
        )
    return cursor


def _parse_seq(value: str | None) -> int | None:
    """A Last-Event-ID we sent (a decimal sequence number), else None."""
    if value is None or not value.strip().isdigit():
        return None
    return int(value.strip())
