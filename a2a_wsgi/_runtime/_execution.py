"""Agent execution: running ``handle_message`` and applying what it returns.

A run executes inline (blocking sends) or on the runtime's thread pool. The
agent's code never takes the runtime down (runtime Rule 4): an exception
becomes FAILED "Error: <text>", and an update the task can no longer take
because it was canceled meanwhile is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import partial
from typing import Any

from a2a_core._service import CallContext
from a2a_core._tasks import new_task
from a2a_core.errors import (
    InternalError,
    InvalidAgentResponseError,
    InvalidTransitionError,
    RPCError,
    UnsupportedOperationError,
)
from a2a_core.models import (
    Artifact,
    Message,
    Part,
    PushNotificationConfig,
    Role,
    Task,
    TaskState,
    evolve,
)

from .._agent import (
    Agent,
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
from .._telemetry import agent_raised, agent_span, carry
from ..stores import DuplicateMessageError, StoredTask, is_outage
from ._changes import Changes
from ._defaults import Change, Scope, describe, log
from ._generations import guarded
from ._keeper import LeaseKeeper
from ._push_configs import PushConfigs
from ._retry import outage_reason, retry_outage
from ._runs import Run, RunRegistry, stored_run
from ._updates import TaskUpdates

__all__ = ["AgentRunner"]

#: Outcomes that move the task to a state with the agent's parts as status message.
_PROMPT_STATES: dict[type, TaskState] = {InputRequired: TaskState.INPUT_REQUIRED,
                                         AuthRequired: TaskState.AUTH_REQUIRED,
                                         Rejected: TaskState.REJECTED}


class _RunUpdater:
    """The TaskUpdater behind a run's AgentContext (emit_status / emit_artifact)."""

    def __init__(self, runner: AgentRunner, run: Run) -> None:
        self._runner, self._run = runner, run

    def update_status(self, state: TaskState, message: Message | None) -> None:
        self._runner.emit(self._run, self._runner.changes.agent_status(state, message))

    def update_artifact(self, artifact: Artifact, *, append: bool, last_chunk: bool) -> None:
        change = self._runner.changes.artifact(artifact, append=append, last_chunk=last_chunk)
        self._runner.emit(self._run, change)

    def new_id(self, prefix: str) -> str:
        return self._runner.changes.new_id(prefix)


class AgentRunner:
    """Executes runs: the lease, handle_message, its outcome, and the run's bookkeeping."""

    def __init__(
        self,
        agent: Agent,
        *,
        updates: TaskUpdates,
        changes: Changes,
        keeper: LeaseKeeper,
        runs: RunRegistry,
        push_configs: PushConfigs,
        pool: ThreadPoolExecutor,
        clock: Callable[[], datetime],
    ) -> None:
        self.agent, self.changes = agent, changes
        self._updates, self._keeper, self._runs = updates, keeper, runs
        self._push, self._pool, self._clock = push_configs, pool, clock

    # -- starting and finishing runs -----------------------------------------------------

    def register(self, run: Run) -> Run:
        """Give the run its updater and make it visible to this process's commits."""
        run.context.updater = _RunUpdater(self, run)
        self._runs.add(run)
        return run

    def submit(self, run: Run) -> None:
        """Execute a registered run on the pool (unregistered again if the pool refuses)."""
        try:
            # The agent runs in the trace of the request that started it (its own calls join it).
            self._pool.submit(carry(self.execute), run)
        except BaseException:
            self._runs.discard(run)
            raise

    def new_run(self, msg: Message, scope: Scope, call: CallContext,
                push: PushNotificationConfig | None, fingerprint: str) -> Run:
        """A run for a message that names no task: the task is stored later (runtime Rule 3),
        claiming the message's id with the request's ``fingerprint``."""
        task_id = self.changes.new_id("tsk")
        context_id = msg.context_id or self.changes.new_id("ctx")
        bound = evolve(msg, task_id=task_id, context_id=context_id)
        return self.register(Run(task_id=task_id, context_id=context_id, scope=scope,
                                 message=bound, history=(bound,), is_new=True, call=call,
                                 push=push, fingerprint=fingerprint))

    def continued_run(self, msg: Message, task_id: str, scope: Scope, call: CallContext,
                      push: PushNotificationConfig | None, generation: int | None = None) -> Run:
        """Append the user's message and move the task to WORKING now (runtime Rule 3);
        refused (-32010) unless the task is at ``generation`` when one is given."""
        change = guarded(self.changes.continuation(msg), generation)
        lease = self._keeper.claim(call, task_id)
        stored = self._updates.update(task_id, scope, change, lease=lease)
        task = stored.task
        if push is not None:
            self._push.put(task.id, push, call.tenant, call.version)
        run = Run(task_id=task.id, context_id=task.context_id, scope=scope,
                  message=task.history[-1], history=tuple(task.history),
                  is_new=False, call=call, push=None, snapshot=stored)
        # The keeper renews a lease of this process while the run waits in the pool.
        run.leased = self._keeper.holds(lease)
        return self.register(run)

    def rerun(self, stored: StoredTask, scope: Scope, call: CallContext) -> None:
        """Re-run a lost worker's task from its last user message (the keeper's hook)."""
        run = self.register(stored_run(stored, scope, call))
        run.leased = True  # the reaper took the lease: renew it while the run waits in the pool
        self.submit(run)

    def create_submitted(self, run: Run) -> Task:
        """Store a non-blocking send's task at once, SUBMITTED; drop the run if that fails."""
        try:
            self._materialize(run)
        except BaseException:
            self._runs.discard(run)
            raise
        assert run.snapshot is not None
        return run.snapshot.task

    def result(self, run: Run) -> Task | Message:
        """What a blocking send answers once the run is over: the task as the run left it
        (a run whose message had made a task already is answered by the caller)."""
        if run.error is not None:
            raise run.error
        if run.reply is not None:
            return run.reply
        return run.latest.task if run.latest is not None else self._updates.visible(
            run.task_id, run.scope)

    def _finish(self, run: Run) -> None:
        self._keeper.release(run)
        with run.lock:
            run.done = True
            run.notify()
        self._runs.discard(run)

    # -- running the agent -------------------------------------------------------------

    def execute(self, run: Run) -> None:
        """Run handle_message and apply its outcome; never raises (runtime Rule 4)."""
        try:
            self._keeper.take(run)
            if run.created:
                self._ensure_working(run)
            with agent_span(getattr(self.agent, "name", None), run.task_id, run.context_id):
                self._apply_outcome(run, self._call_agent(run))
        except RPCError as err:
            run.error = err
        except DuplicateMessageError as dup:
            # A concurrent send of the same message stored its task first: answer that one.
            run.duplicate_of = dup.task_id
            run.cancelled.set()
        except Exception as exc:
            if is_outage(exc):
                log.error("task %s: the task store stayed unavailable: %s", run.task_id, exc)
            else:
                log.exception("runtime failure while running task %s", run.task_id)
            run.error = InternalError()
            self._fail_quietly(run, outage_reason(exc) if is_outage(exc) else "internal error")
        finally:
            self._finish(run)

    def _call_agent(self, run: Run) -> Outcome | None:
        try:
            return as_outcome(self.agent.handle_message(run.message, run.hand_over_context()))
        except Exception as exc:
            log.exception("agent raised while handling task %s", run.task_id)
            agent_raised(exc)
            return Failure(describe(exc))

    def _apply_outcome(self, run: Run, outcome: Outcome | None) -> None:
        if isinstance(outcome, MessageReply):
            self._message_outcome(run, outcome)
            return
        if isinstance(outcome, Stream):
            self._ensure_working(run)
            self._consume(run, outcome)
            return
        change = self._outcome_change(run, outcome)
        if not run.created:
            # Nothing stored the task while the agent ran: one save, WORKING then changed,
            # unleased (the run is over: nothing is left to recover).
            then = () if change is None else (change,)
            self._materialize(run, self.changes.leave_submitted(), *then, lease=False)
            return
        self._ensure_working(run)
        if change is not None:
            self._apply_late(run, change)

    def _outcome_change(self, run: Run, outcome: Outcome | None) -> Change | None:
        """The change an outcome makes to a WORKING task (None: leave it as it is)."""
        if isinstance(outcome, Reply):
            return self.changes.completion(
                outcome.parts, artifact_id=self.changes.new_id("art"), name=outcome.artifact_name
            )
        if isinstance(outcome, (InputRequired, AuthRequired, Rejected)):
            return self.changes.status(_PROMPT_STATES[type(outcome)],
                                       self._agent_message(run, outcome.parts))
        if isinstance(outcome, Failure):
            return self._failure(run, outcome.reason)
        if isinstance(outcome, Working):
            if outcome.text is None:
                return None
            return self.changes.status(TaskState.WORKING,
                                       self._agent_message(run, (outcome.text,)))
        return self.changes.complete_if_active()

    def _message_outcome(self, run: Run, outcome: MessageReply) -> None:
        """A bare message: no task when none was stored; -32006 on a continuation."""
        if not run.created:
            reply = Message(message_id=self.changes.new_id("msg"), role=Role.AGENT,
                            parts=outcome.parts, context_id=run.context_id)
            with run.lock:
                run.reply = reply
                run.notify()
        elif run.is_new:
            self._apply_late(run, self.changes.completion(outcome.parts, artifact_id=None))
        else:
            reason = "the agent answered a task with a bare message"
            self._apply_late(run, self._failure(run, reason))
            raise InvalidAgentResponseError(
                "The agent replied with a bare message while continuing a task"
            )

    def _consume(self, run: Run, outcome: Stream) -> None:
        """Send each part as a chunk of one artifact; the last chunk is held back one step
        so it can carry ``last_chunk``. Stops early on cancel or client disconnect."""
        artifact_id = self.changes.new_id("art")
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
            agent_raised(exc)
            failure = describe(exc)
        finally:
            close = getattr(iterator, "close", None)
            if callable(close):
                close()
        if held is not None:
            self._chunk(run, artifact_id, held, outcome.artifact_name, sent, last=True)
        self._end_stream(run, tuple(sent), failure)

    def _end_stream(self, run: Run, sent: tuple[Part, ...], failure: str | None) -> None:
        """COMPLETED with everything sent; FAILED on an error or a client gone mid-stream."""
        if failure is None and run.detached.is_set() and not run.cancelled.is_set():
            failure = "the client disconnected before the stream ended"
        if failure is not None:
            self._apply_late(run, self._failure(run, failure))
        elif not run.cancelled.is_set():
            self._apply_late(run, self.changes.completion(sent, artifact_id=None))

    def _chunk(
        self, run: Run, artifact_id: str, part: Part, name: str | None, sent: list[Part],
        *, last: bool,
    ) -> None:
        artifact = Artifact(artifact_id=artifact_id, parts=(part,), name=name)
        self.emit(run, self.changes.artifact(artifact, append=bool(sent), last_chunk=last))
        sent.append(part)

    def _fail_quietly(self, run: Run, reason: str) -> None:
        """Best effort after a runtime bug: the task should not stay WORKING for ever."""
        if not run.created:
            return
        try:
            self._apply_late(run, self._failure(run, reason))
        except Exception:
            log.exception("could not mark task %s failed", run.task_id)

    def _failure(self, run: Run, reason: str) -> Change:
        return self.changes.failure(run.task_id, run.context_id, reason)

    def _agent_message(self, run: Run, parts: Sequence[Any]) -> Message:
        return self.changes.agent_message(run.task_id, run.context_id, parts)

    # -- writing the run's task ----------------------------------------------------------

    def emit(self, run: Run, change: Change) -> None:
        """An update the agent emits while running: the task is WORKING first."""
        self._ensure_working(run)
        self._apply_late(run, change)

    def _materialize(self, run: Run, *then: Change, lease: bool = True) -> None:
        """Store the run's new task (runtime Rule 3): SUBMITTED, or changed by each of
        ``then`` in the same save; leased unless ``lease`` is False. A no-op once stored.

        The run's snapshot (a stream's first item) is the task as created, before
        ``then``: the stream then sends ``then``'s events from the log as updates.
        """
        if run.created:
            return
        task = new_task(task_id=run.task_id, context_id=run.context_id, message=run.message,
                        timestamp=self._clock())
        if self._updates.generations:  # the snapshot below is generation 1 (preview)
            task = evolve(task, generation=1)
        if run.push is not None:  # first, so the planner sees it for ``then``'s events
            self._push.put(task.id, run.push, run.scope[1], run.call.version)
        # Only a new task's run has a fingerprint: its creating message is claimed.
        message_id = run.message.message_id if run.fingerprint is not None else None
        # The save that acknowledges the task leases it too: if this process dies
        # before the run starts (queued in the pool), a reaper recovers it.
        claim = None if run.leased or not lease else self._keeper.claim(run.call, run.task_id)
        stored = self._updates.create(task, run.scope, then, message_id=message_id,
                                      fingerprint=run.fingerprint, lease=claim)
        with run.lock:
            run.leased = run.leased or self._keeper.holds(claim)
            run.created = True
            run.snapshot = StoredTask(task, stored.version, 0)
            run.latest = stored
            run.notify()

    def _ensure_working(self, run: Run) -> None:
        """Make sure the task exists and has left SUBMITTED (agents run on WORKING tasks).

        A task not stored yet is stored WORKING at once: one save, not two. Once
        the run has seen it past SUBMITTED there is nothing to read: no task ever
        goes back to SUBMITTED (a2a_core._tasks.TRANSITIONS).
        """
        if not run.created:
            self._materialize(run, self.changes.leave_submitted())
        elif run.latest is None or run.latest.task.status.state is TaskState.SUBMITTED:
            self._apply_late(run, self.changes.leave_submitted())

    def _apply_late(self, run: Run, change: Change) -> None:
        """Apply an agent-side change (to the run's newest task); drop it if the task ended."""
        try:
            write = partial(self._updates.update, run.task_id, run.scope, change, known=run.latest)
            stored = retry_outage(write, task_id=run.task_id)
        except (InvalidTransitionError, UnsupportedOperationError):
            current = self._updates.store.load(run.task_id, owner=run.scope[0],
                                               tenant=run.scope[1])
            if current is None or not current.task.status.state.is_terminal:
                raise
            log.debug("task %s is %s: update dropped", run.task_id,
                      current.task.status.state.value)
            stored = current
        run.keep_latest(stored)
