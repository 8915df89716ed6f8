"""Runs: one execution of ``handle_message``, and this process's registry of them.

A run is shared by the thread executing the agent and whoever waits on it (a
blocking send, a stream). Its condition variable is poked after every commit
on its task, so a waiting stream wakes to read the event log.
"""

from __future__ import annotations

import threading

from a2a_core._service import CallContext
from a2a_core.errors import RPCError
from a2a_core.models import Message, PushNotificationConfig, Role, TaskState

from .._agent import AgentContext
from .._wakeups import Signal
from ..stores import StoredTask
from ._defaults import Scope

__all__ = ["Run", "RunRegistry", "stored_run"]


class Run:
    """One execution of handle_message, shared by its worker and whoever waits on it."""

    def __init__(
        self,
        *,
        task_id: str,
        context_id: str,
        scope: Scope,
        message: Message,
        history: tuple[Message, ...],
        is_new: bool,
        call: CallContext,
        push: PushNotificationConfig | None,
        snapshot: StoredTask | None = None,
        fingerprint: str | None = None,
    ) -> None:
        self.task_id, self.context_id, self.scope = task_id, context_id, scope
        self.message, self.is_new, self.push, self.call = message, is_new, push, call
        #: The request fingerprint a new task's creating message is claimed with.
        self.fingerprint = fingerprint
        #: True while this process holds the task's work lease for this run (from the
        #: save that acknowledged the task, or from the run's start).
        self.leased = False
        #: Set when the agent's run begins (before: queued in the pool).
        self.started = False
        #: Runs the task had before this one's lease (a queued run's; see _keeper).
        self.prior_runs = 0
        #: Guards the run's state below; ``cond`` (on this lock) wakes whoever waits on it.
        self.lock = threading.RLock()
        self.cond = Signal(self.lock)
        #: Set when the streaming client went away: stop consuming the agent's iterator.
        self.detached = threading.Event()
        #: Set on cancel (here or on another worker) or a lost lease: the agent should stop.
        self.cancelled = threading.Event()
        #: The agent's context, until :meth:`hand_over_context` gives it to the agent.
        self.context = AgentContext(
            task_id=task_id,
            context_id=context_id,
            history=history,
            metadata=call.metadata,
            extensions=call.extensions,
            identity=call.identity,
            cancelled=self.cancelled,
        )
        self.created = not is_new
        #: The task as first stored for this run (a stream's first item).
        self.snapshot = snapshot
        #: The newest stored task this run wrote or read: a blocking send's answer.
        self.latest = snapshot
        #: Bumped after every commit on this task, so a stream waiting on ``cond`` wakes.
        self.ticks = 0
        self.done = False
        self.reply: Message | None = None
        self.error: RPCError | None = None
        #: Set when this run's message (same id, same request) had already created a
        #: task (idempotent sends): that task's id, which the send answers instead.
        self.duplicate_of: str | None = None

    def hand_over_context(self) -> AgentContext:
        """The agent's context, which the run lets go of as the agent is called.

        From then on only the agent holds it, for as long as it likes (emitting through
        its updater, which holds this run). Were the run to keep it too, each run would
        be a reference cycle, freed only by the garbage collector (with everything the
        run holds: its events, locks and tasks), not when its last user lets go of it.
        """
        context = self.context
        del self.context
        return context

    def poke(self) -> None:
        """Wake whoever waits on this run: something was committed or it ended."""
        with self.lock:
            self.ticks += 1
            if self.cond.waiting:
                self.cond.notify_all()

    def notify(self) -> None:
        """Wake whoever waits on this run after a change of its state (hold ``lock``)."""
        if self.cond.waiting:
            self.cond.notify_all()

    def keep_latest(self, stored: StoredTask) -> None:
        """Remember the newest version of the task the run has seen (agents may emit from
        threads)."""
        with self.lock:
            if self.latest is None or stored.version >= self.latest.version:
                self.latest = stored

    def moved_on(self, ticks: int) -> bool:
        """Has the run committed something since ``ticks``, or finished?"""
        return self.ticks != ticks or self.done


def stored_run(stored: StoredTask, scope: Scope, call: CallContext) -> Run:
    """A run of a stored task on its last user message (a re-run, a job queue's run); a
    SUBMITTED task's is a new task's run (a bare message completes it)."""
    task = stored.task
    users = [m for m in task.history if m.role is Role.USER]
    run = Run(task_id=task.id, context_id=task.context_id, scope=scope,
              message=users[-1] if users else task.history[-1], call=call, push=None,
              history=tuple(task.history), snapshot=stored,
              is_new=task.status.state is TaskState.SUBMITTED)
    run.created = True
    return run


class RunRegistry:
    """This process's runs by task id (several may share a task: a stream and a follow-up)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._runs: dict[str, list[Run]] = {}

    def add(self, run: Run) -> None:
        with self.lock:
            self._runs.setdefault(run.task_id, []).append(run)

    def discard(self, run: Run) -> None:
        with self.lock:
            runs = self._runs.get(run.task_id, [])
            if run in runs:
                runs.remove(run)
            if not runs:
                self._runs.pop(run.task_id, None)

    def of(self, task_id: str) -> list[Run]:
        with self.lock:
            return list(self._runs.get(task_id, ()))

    def leased(self) -> list[Run]:
        """Runs this process holds a lease for (the keeper renews and watches them)."""
        with self.lock:
            return [run for runs in self._runs.values() for run in runs if run.leased]
