"""Streams: a send's own stream, and subscriptions that follow a task's event log.

Every item but a bare Message carries its event-log sequence number as the SSE
id (a task snapshot: the number of the last event it includes), so a client
that reconnects with ``Last-Event-ID`` is replayed exactly what came after it.
Quiet streams get a heartbeat every ``heartbeat_interval`` seconds; a
subscription that hears nothing for ``resubscribe_timeout`` seconds ends.
Once :meth:`Subscriptions.stop` is called (the server is shutting down) every
open stream ends at its next wake-up, at most ``STOP_POLL`` seconds later:
the generator returns, so the server writes a proper end of the response and
the client resumes elsewhere with ``Last-Event-ID``. Tasks are left alone.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from functools import partial

from a2a_core.errors import InternalError, TaskNotFoundError, UnsupportedOperationError
from a2a_core.models import StreamEvent, TaskStatusUpdateEvent
from a2a_core.service import HEARTBEAT, OutboundEvent, StreamItem

from ..stores import EventsExpiredError, StoredTask, TaskStore
from ._defaults import Scope
from ._runs import Run

__all__ = ["STOP_POLL", "Subscriptions", "parse_seq"]

#: Longest a stream following a stored task waits before it looks at the stop flag.
STOP_POLL = 1.0


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
        #: Set when the server stops: open streams end cleanly, new ones end after their first item.
        self.stopping = threading.Event()
        self._lock = threading.RLock()  # RLock: stop() may run from a signal handler
        self._open_runs: set[Run] = set()

    def stop(self) -> None:
        """End every open stream at its next wake-up; send streams are woken now."""
        self.stopping.set()
        with self._lock:
            runs = list(self._open_runs)
        for run in runs:
            run.poke()

    # -- a send's own stream -------------------------------------------------------------

    def run_stream(self, run: Run) -> Iterator[StreamItem]:
        """Task (or the bare Message) first, then this run's events until it is over."""
        with self._lock:
            self._open_runs.add(run)
        try:
            while not self._wait(run, lambda: run.snapshot is not None or run.reply is not None
                                 or run.done):
                yield HEARTBEAT
            if (self.stopping.is_set() and run.snapshot is None and run.reply is None
                    and not run.done):
                return  # nothing to send yet; the run goes on (its task is in the store)
            if run.reply is not None:
                yield run.reply
                return
            if run.snapshot is None and run.duplicate_of is not None:
                yield from self.resent(run.duplicate_of, run.scope)
                return
            if run.snapshot is None:
                raise run.error or InternalError()
            seq = run.snapshot.event_seq
            yield OutboundEvent(run.snapshot.task, str(seq))
            yield from self._run_events(run, seq)
        except GeneratorExit:
            run.detached.set()
            raise
        finally:
            with self._lock:
                self._open_runs.discard(run)

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
            if self.stopping.is_set():
                return
            if not self._wait(run, partial(run.moved_on, ticks)):
                yield HEARTBEAT

    def _wait(self, run: Run, predicate: Callable[[], bool]) -> bool:
        """Wait for ``predicate``, a heartbeat's time or stop(); False means send a heartbeat."""
        with run.cond:
            return run.cond.wait_for(lambda: predicate() or self.stopping.is_set(),
                                     timeout=self._heartbeat)

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

    def resent(self, task_id: str, scope: Scope) -> Iterator[StreamItem]:
        """A stream for a message sent again: the task it created, followed while it runs."""
        stored = self._store.load(task_id, owner=scope[0], tenant=scope[1])
        if stored is None:
            raise TaskNotFoundError(f"Task {task_id} not found")
        state = stored.task.status.state
        if state.is_terminal or state.is_interrupted:
            return iter((OutboundEvent(stored.task, str(stored.event_seq)),))
        return self.follow(stored, None)

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
        """Wait for events after ``after``; end on a terminal one, after the quiet timeout
        or on stop().

        Waits are cut into slices of at most :data:`STOP_POLL` seconds: a store's
        wait cannot be interrupted, and a stop must not wait for the next heartbeat.
        """
        quiet_since = beat_at = time.monotonic()
        while not self.stopping.is_set():
            now = time.monotonic()
            left = self._resubscribe_timeout - (now - quiet_since)
            if left <= 0:
                return
            wait = min(max(self._heartbeat - (now - beat_at), 0.0), left, STOP_POLL)
            batch = self._store.wait_for_events(task_id, after, wait)
            for seq, event in batch:
                after = seq
                yield OutboundEvent(event, str(seq))
                if _is_terminal_event(event):
                    return
            now = time.monotonic()
            if batch:
                quiet_since = beat_at = now
            elif (now - beat_at >= self._heartbeat
                  and now - quiet_since < self._resubscribe_timeout):
                beat_at = now
                yield HEARTBEAT
