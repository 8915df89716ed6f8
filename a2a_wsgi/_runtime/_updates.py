"""Task updates: every write to a task goes through here (runtime Rules 1 and 2).

``update`` reads the task and its version, applies a change function and saves
with ``expected_version``, retrying on ConflictError; the change's events go to
the task's event log, and the push planner's outbox entries, in that same save.
After each save the transition is reported and this process's runs are poked.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from a2a_core._tasks import TransitionEvent, transitions_between
from a2a_core.errors import TaskNotFoundError
from a2a_core.models import StreamEvent, Task

from .._telemetry import outbox_written, task_transition, traced_outbox, transitions_wanted
from ..stores import ConflictError, LeaseClaim, OutboxEntry, StoredTask, TaskStore
from ._defaults import CAS_RETRIES, Change, PushPlanner, Scope, log
from ._generations import stamped
from ._runs import RunRegistry

__all__ = ["SETTLE_POLL", "TaskUpdates"]

#: Longest slice of a retried send's wait for its task: between two slices it looks
#: whether the run is still active and the client still there (events end a slice early).
SETTLE_POLL = 0.5


class TaskUpdates:
    """Compare-and-set writes with their events, push outbox entries and transition reports."""

    def __init__(
        self,
        store: TaskStore,
        runs: RunRegistry,
        *,
        on_transition: Callable[[TransitionEvent], None] | None = None,
        push_planner: PushPlanner | None = None,
        on_outbox: Callable[[], None] | None = None,
        max_history: int | None = None,
        max_artifacts: int | None = None,
        generations: bool = False,
    ) -> None:
        self.store, self._runs = store, runs
        self._on_transition, self._push_planner = on_transition, push_planner
        #: Called after a save that wrote outbox entries: the delivery worker claims
        #: them at once instead of at its next poll.
        self._on_outbox = on_outbox
        self._max_history, self._max_artifacts = max_history, max_artifacts
        #: Count task generations (the dev-1.1 preview) in every save.
        self.generations = generations

    def visible(self, task_id: str, scope: Scope, read: Task | None = None) -> Task:
        """The task as this caller may see it; -32001 when missing or someone else's.

        ``read`` is the task this call already read through the same scope
        (``CallContext.task``: Operations authorized it); it is answered without a read.
        """
        if read is not None and read.id == task_id:
            return read
        task = self.store.get(task_id, owner=scope[0], tenant=scope[1])
        if task is None:
            raise TaskNotFoundError(f"Task {task_id} not found")
        return task

    def create(self, task: Task, scope: Scope, then: Sequence[Change] = (), *,
               message_id: str | None = None, fingerprint: str | None = None,
               lease: LeaseClaim | None = None) -> StoredTask:
        """Store a new task, already changed by each of ``then`` in turn, in one save
        (runtime Rule 3).

        Every transition (created, then each change) is reported, and the changes'
        events open the task's log, as if the task had been saved and then updated
        once per change. ``message_id`` and the request's ``fingerprint`` are
        recorded with the task, so the same request resent finds it (the store
        raises DuplicateMessageError when it already created one). ``lease`` leases
        the task in that same save.
        """
        steps: list[Task] = [task]
        events: tuple[StreamEvent, ...] = ()
        for change in then:
            changed, more = change(steps[-1])
            if changed is not steps[-1]:
                steps.append(changed)
            events += more
        updated = steps[-1]
        if updated is not task or events:
            updated = self._bounded(updated)
        if self.generations:  # the task as created is generation 1, then's changes count on
            base = task if task.generation is not None else replace(task, generation=1)
            updated, events = stamped(base, updated, events)
        outbox = self._plan_push(updated, 0, events)
        version = self.store.save(updated, expected_version=None, owner=scope[0],
                                  tenant=scope[1], events=events, outbox=outbox,
                                  message_id=message_id, fingerprint=fingerprint,
                                  lease=lease)
        self._reported(None, *steps[:-1], updated)
        self._poke(updated.id)  # once for all: a waiter reads the task as it is now
        self._outbox_written(outbox)
        return StoredTask(updated, version, len(events))

    def update(self, task_id: str, scope: Scope, change: Change, *,
               lease: LeaseClaim | None = None, known: StoredTask | None = None) -> StoredTask:
        """Read, change, compare-and-set; retry on conflict (runtime Rule 1).

        ``lease`` leases the task in the save that writes the change. ``known`` is
        the task as this caller last saved or read it through ``scope``: the first
        try changes it without a read (if it is no longer the stored version, the
        save conflicts and the next try reads)."""
        for _ in range(CAS_RETRIES):
            stored = known if known is not None and known.task.id == task_id else (
                self.store.load(task_id, owner=scope[0], tenant=scope[1]))
            known = None
            if stored is None:
                raise TaskNotFoundError(f"Task {task_id} not found")
            updated, events = change(stored.task)
            if updated is stored.task and not events:
                return stored
            updated = self._bounded(updated)
            if self.generations:
                updated, events = stamped(stored.task, updated, events)
            outbox = self._plan_push(updated, stored.event_seq, events)
            try:
                version = self.store.save(updated, expected_version=stored.version,
                                          owner=scope[0], tenant=scope[1], events=events,
                                          outbox=outbox, lease=lease)
            except ConflictError:
                continue
            self._committed(stored.task, updated)
            self._outbox_written(outbox)
            return StoredTask(updated, version, stored.event_seq + len(events))
        raise RuntimeError(f"task {task_id} kept changing; gave up after {CAS_RETRIES} tries")

    def settled(self, task_id: str, scope: Scope, *, running: Callable[[], bool],
                client_gone: Callable[[], bool] | None, limit: float) -> Task:
        """The task as a retried blocking send answers it: once it settles (terminal or
        interrupted), or as it is when the wait ends first.

        The wait ends when ``running()`` is False (no run of the task is active
        anywhere, so nothing will settle it: a task the agent left WORKING is
        answered at once), when ``client_gone()`` is True, or after ``limit``
        seconds. ``running`` is asked before each read, so a run that ends after
        settling the task is answered with the settled task. The store's wait is
        cut into slices of at most :data:`SETTLE_POLL` seconds, so a client that
        hung up is noticed within one.
        """
        deadline = time.monotonic() + limit
        while True:
            active = running()
            stored = self.store.load(task_id, owner=scope[0], tenant=scope[1])
            if stored is None:
                raise TaskNotFoundError(f"Task {task_id} not found")
            state = stored.task.status.state
            if state.is_terminal or state.is_interrupted or not active:
                return stored.task
            left = deadline - time.monotonic()
            if left <= 0 or (client_gone is not None and client_gone()):
                return stored.task
            self.store.wait_for_events(task_id, stored.event_seq, min(left, SETTLE_POLL))

    def _bounded(self, task: Task) -> Task:
        """Keep the newest ``max_history`` messages and ``max_artifacts`` artifacts."""
        if self._max_history is None and self._max_artifacts is None:
            return task
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
        # Each POST carries the trace of the change that queued it (docs/telemetry.md).
        return traced_outbox(tuple(self._push_planner(task, numbered, configs)))

    def _outbox_written(self, outbox: Sequence[OutboxEntry]) -> None:
        if not outbox:  # (most saves queue no webhook POST: nothing to count or wake)
            return
        outbox_written(len(outbox))
        if self._on_outbox is not None:
            self._on_outbox()

    def _committed(self, old: Task | None, new: Task) -> None:
        """After a save: report the transition, wake this process's streams."""
        self._reported(old, new)
        self._poke(new.id)

    def _reported(self, *chain: Task | None) -> None:
        """Report the transitions along ``chain`` (None first: the task was just created)."""
        if self._on_transition is None and not transitions_wanted():
            return  # nobody listens: no transition to build
        for old, new in itertools.pairwise(chain):
            assert new is not None
            transition = transitions_between(old, new)
            if transition is not None:
                self._report(transition)

    def _poke(self, task_id: str) -> None:
        for run in self._runs.of(task_id):
            run.poke()

    def _report(self, transition: TransitionEvent) -> None:
        task_transition(transition)  # the a2a_wsgi.tasks line, the state metric
        if self._on_transition is None:
            return
        try:
            self._on_transition(transition)
        except Exception:
            log.exception("on_transition hook raised")
