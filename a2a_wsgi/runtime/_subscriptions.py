"""Streams: a send's own stream, and subscriptions that follow a task's event log.

Every item but a bare Message carries its event-log sequence number as the SSE
id (a task snapshot: the number of the last event it includes), so a client
that reconnects with ``Last-Event-ID`` is replayed exactly what came after it.
Quiet streams get a heartbeat every ``heartbeat_interval`` seconds; a
subscription that hears nothing for ``resubscribe_timeout`` seconds ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from functools import partial

from a2a_core.errors import InternalError, TaskNotFoundError, UnsupportedOperationError
from a2a_core.models import StreamEvent, TaskStatusUpdateEvent
from a2a_core.service import HEARTBEAT, OutboundEvent, StreamItem

from ..stores import EventsExpiredError, StoredTask, TaskStore
from ._defaults import Scope
from ._runs import Run

__all__ = ["Subscriptions", "parse_seq"]


def parse_seq(value: str | None) -> int | None:
    """A Last-Event-ID we sent (a decimal sequence number), else None."""
    if value is None or not value.strip().isdigit():
        return None
    return int(value.strip())


def _replay_gap(err: EventsExpiredError) -> UnsupportedOperationError:
    """A stream cursor older than the retained log: say so, never skip events silently."""
    return UnsupportedOperationError(
        f"Events of task {err.task_id} after #{err.after_seq} are no longer available "
        f"(the log now starts after #{err.floor}); get the task and subscribe again "
        "without Last-Event-ID"
    )


def _ends_stream(event: StreamEvent) -> bool:
    """A status event after which a send stream has nothing more to say."""
    if not isinstance(event, TaskStatusUpdateEvent):
        return False
    return event.status.state.is_terminal or event.status.state.is_interrupted


def _is_terminal_event(event: StreamEvent) -> bool:
    return isinstance(event, TaskStatusUpdateEvent) and event.status.state.is_terminal


class Subscriptions:
    """Turns runs and event logs into stream items."""

    def __init__(self, store: TaskStore, *, heartbeat_interval: float,
                 resubscribe_timeout: float) -> None:
        self._store = store
        self._heartbeat, self._resubscribe_timeout = heartbeat_interval, resubscribe_timeout

    # -- a send's own stream -------------------------------------------------------------

    def run_stream(self, run: Run) -> Iterator[StreamItem]:
        """Task (or the bare Message) first, then this run's events until it is over."""
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

    def _run_events(self, run: Run, after: int) -> Iterator[StreamItem]:
        while True:
            with run.cond:
                ticks, done = run.ticks, run.done
            try:
                batch = self._store.events_after(run.task_id, after)
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
            if not self._wait(run, partial(run.moved_on, ticks)):
                yield HEARTBEAT

    def _wait(self, run: Run, predicate: Callable[[], bool]) -> bool:
        with run.cond:
            return run.cond.wait_for(predicate, timeout=self._heartbeat)

    # -- following a stored task -----------------------------------------------------------

    def subscribe(self, task_id: str, scope: Scope,
                  last_event_id: str | None) -> Iterator[StreamItem]:
        """Check now (errors are plain JSON-RPC errors), then follow the task's log.

        With ``Last-Event-ID`` (a sequence number we sent) the snapshot is skipped
        and the log is replayed from there, even for a task that has since ended.
        """
        stored = self._store.load(task_id, owner=scope[0], tenant=scope[1])
        if stored is None:
            raise TaskNotFoundError(f"Task {task_id} not found")
        resume = parse_seq(last_event_id)
        if resume is None and stored.task.status.state.is_terminal:
            raise UnsupportedOperationError(
                f"Task {task_id} is in a terminal state ({stored.task.status.state.value})"
            )
        return self.follow(stored, resume)

    def follow(self, stored: StoredTask, resume: int | None) -> Iterator[StreamItem]:
        """The task (unless resuming), then its logged events until a terminal one."""
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
                for seq, event in self._store.events_after(task_id, after):
                    yield OutboundEvent(event, str(seq))
                return
        yield from self._tail(task_id, after)

    def _tail(self, task_id: str, after: int) -> Iterator[StreamItem]:
        """Wait for events after ``after``; end on a terminal one or after the quiet timeout."""
        quiet_since = time.monotonic()
        while True:
            left = self._resubscribe_timeout - (time.monotonic() - quiet_since)
            if left <= 0:
                return
            batch = self._store.wait_for_events(task_id, after, min(self._heartbeat, left))
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
