"""Streams: a send's own stream, and subscriptions that follow a task's event log.

Every item but a bare Message carries its event-log sequence number as the SSE
id (a task snapshot: the number of the last event it includes), so a client
that reconnects with ``Last-Event-ID`` is replayed exactly what came after it.
Quiet streams get a heartbeat every ``heartbeat_interval`` seconds; a
subscription that hears nothing for ``resubscribe_timeout`` seconds ends, and
a stream whose client hung up (the call's ``client_gone``) ends at once rather
than at its next heartbeat's failed write. Once :meth:`Subscriptions.stop` is
called (the server is shutting down) every open stream is woken and ends: the
generator returns, so the server writes a proper end of the response and the
client resumes elsewhere with ``Last-Event-ID``. Tasks are left alone.

An idle stream sleeps until something concerns it, with no timer of its own but its
heartbeat's: the task's next event, the heartbeat (or quiet timeout) deadline, its
client's socket turning readable (:func:`..disconnect.watch_hangup`), or stop(); held by
its server (the call's ``stream_holder``), it yields IDLE instead. Streams following a
stored task share one waiter per task (:class:`TaskWatches`): it alone waits on the
store, keeps the batch it read, and wakes the task's sleeping streams, which take their
events from that batch. Only a connection that cannot be watched is still peeked at
every :data:`HANGUP_POLL` seconds, and a resent message's stream looks whether its run
is still active every :data:`STOP_POLL` seconds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from functools import partial

from a2a_core._service import HEARTBEAT, IDLE, OutboundEvent, StreamHolder, StreamItem, Wakeup
from a2a_core.errors import InternalError, TaskNotFoundError, UnsupportedOperationError
from a2a_core.models import StreamEvent, TaskStatusUpdateEvent

from .._disconnect import HangupWatch, hangup_fd, watch_hangup
from ..stores import EventsExpiredError, StoredTask, TaskStore
from ..stores._base import Events
from ._defaults import Scope
from ._runs import Run
from ._watches import Sleeper, TaskWatches

__all__ = ["STOP_POLL", "Subscriptions", "parse_seq"]

#: Longest a resent message's stream waits before it looks whether its run is still
#: active, and the slice a task's waiter waits on the store for (it then looks whether
#: anyone still follows the task).
STOP_POLL = 1.0
#: Seconds between peeks at a client's socket that cannot be watched (no descriptor,
#: or a pipelined request keeps it readable) while its stream waits.
HANGUP_POLL = 1.0

#: ``client_gone`` of a call: True once its client hung up (None: cannot tell).
ClientGone = Callable[[], bool] | None


class _Held:
    """What a stream its server holds sleeps on (:class:`~a2a_core._service.StreamHolder`)."""

    __slots__ = ("_wakeup",)

    def __init__(self, wakeup: Wakeup) -> None:
        self._wakeup = wakeup

    @classmethod
    def take(cls, holder: StreamHolder | None) -> _Held | None:
        wakeup = holder.hold() if holder is not None else None
        return cls(wakeup) if wakeup is not None else None

    def set(self) -> None:
        self._wakeup.set()

    def clear(self) -> None:
        self._wakeup.clear()

    def wait(self, timeout: float | None = None) -> bool:
        raise RuntimeError("a held stream is resumed by its server, never waited for")


#: More digits than any sequence number we send (a store's is a signed 64-bit integer).
_MAX_SEQ_DIGITS = 18


def parse_seq(value: str | None) -> int | None:
    """A Last-Event-ID we sent (ASCII decimal digits, at most 18), else None.

    ``str.isdigit`` alone takes ``'¹'`` (which ``int`` refuses) and any length
    (past 4,300 digits ``int`` refuses too; past 18 the store's integer overflows).
    """
    text = value.strip() if value is not None else ""
    if not (text.isascii() and text.isdigit()) or len(text) > _MAX_SEQ_DIGITS:
        return None
    return int(text)


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


def _outbound(batch: Events) -> list[tuple[int, OutboundEvent]]:
    """A batch read from the log as stream items, each but the last marked ``more``
    (the next is at hand: the writer sends them in one write)."""
    last = len(batch) - 1
    return [(seq, OutboundEvent(event, str(seq), n < last))
            for n, (seq, event) in enumerate(batch)]


def _is_terminal_event(event: StreamEvent) -> bool:
    return isinstance(event, TaskStatusUpdateEvent) and event.status.state.is_terminal


def _settled(stored: StoredTask) -> bool:
    state = stored.task.status.state
    return state.is_terminal or state.is_interrupted


class Subscriptions:
    """Turns runs and event logs into stream items.

    ``running(task_id)`` says whether a run of the task is active anywhere (a
    resent message's stream follows its task only while one is).
    """

    def __init__(self, store: TaskStore, *, running: Callable[[str], bool],
                 heartbeat_interval: float, resubscribe_timeout: float) -> None:
        self._store, self._running = store, running
        self._heartbeat, self._resubscribe_timeout = heartbeat_interval, resubscribe_timeout
        #: Set when the server stops: open streams end cleanly, new ones end after their first item.
        self.stopping = threading.Event()
        self._lock = threading.RLock()  # RLock: stop() may run from a signal handler
        self._open_runs: set[Run] = set()
        #: The most a stream's deadline can be late: a tenth of its interval (at least 5 ms).
        slice_ = max(min(STOP_POLL, heartbeat_interval / 10, resubscribe_timeout / 10), 0.005)
        self._watches = TaskWatches(store, self.stopping, slice_)

    def stop(self) -> None:
        """End every open stream: each is woken now."""
        self.stopping.set()
        with self._lock:
            runs = list(self._open_runs)
        for run in runs:
            run.poke()
        self._watches.wake_all()

    # -- a send's own stream -------------------------------------------------------------

    def run_stream(self, run: Run) -> Iterator[StreamItem]:
        """Task (or the bare Message) first, then this run's events until it is over."""
        with self._lock:
            self._open_runs.add(run)
        try:
            while not self._wait(run, lambda: run.snapshot is not None or run.reply is not None
                                 or run.done):
                yield HEARTBEAT
            if run.detached.is_set():
                return  # the client hung up; the run goes on as after a failed write
            if (self.stopping.is_set() and run.snapshot is None and run.reply is None
                    and not run.done):
                return  # nothing to send yet; the run goes on (its task is in the store)
            if run.reply is not None:
                yield run.reply
                return
            if run.snapshot is None and run.duplicate_of is not None:
                yield from self.resent(run.duplicate_of, run.scope, run.call.client_gone)
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
            for seq, item in _outbound(batch):
                after = seq
                yield item
                if _ends_stream(item.event):
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
            if run.detached.is_set():
                return

    def _wait(self, run: Run, predicate: Callable[[], bool]) -> bool:
        """Wait for ``predicate``, a heartbeat's time, stop() or the client hanging up;
        False means send a heartbeat.

        The client's socket is watched (:func:`..disconnect.watch_hangup` pokes the
        run when it turns readable) or, when it cannot be, peeked at every
        :data:`HANGUP_POLL` seconds; once it is gone ``run.detached`` is set, as
        when a write to it fails.
        """
        gone = run.call.client_gone
        deadline = time.monotonic() + self._heartbeat
        fd = hangup_fd(gone)
        hangup: HangupWatch | None = watch_hangup(fd, run.poke) if fd is not None else None
        try:
            while True:
                left = max(deadline - time.monotonic(), 0.0)
                polled = gone is not None and hangup is None
                step = min(left, HANGUP_POLL) if polled else left
                with run.cond:
                    woke = run.cond.wait_for(partial(self._woken, predicate, hangup),
                                             timeout=step)
                if gone is not None and (polled or (hangup is not None and hangup.fired)):
                    if gone():
                        run.detached.set()
                        return True
                    if hangup is not None:  # readable, but there: a pipelined request
                        hangup.cancel()
                        hangup = None
                if woke and (predicate() or self.stopping.is_set()):
                    return True
                if step >= left:
                    return False
        finally:
            if hangup is not None:
                hangup.cancel()

    def _woken(self, predicate: Callable[[], bool], hangup: HangupWatch | None) -> bool:
        return predicate() or self.stopping.is_set() or (hangup is not None and hangup.fired)

    # -- following a stored task -----------------------------------------------------------

    def subscribe(self, task_id: str, scope: Scope, last_event_id: str | None,
                  client_gone: ClientGone = None,
                  holder: StreamHolder | None = None) -> Iterator[StreamItem]:
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
        return self.follow(stored, resume, client_gone, _Held.take(holder))

    def resent(self, task_id: str, scope: Scope, client_gone: ClientGone = None,
               holder: StreamHolder | None = None) -> Iterator[StreamItem]:
        """A stream for a request sent again: what its first stream would show now.

        The task it created, and nothing more when the task has settled (terminal
        or interrupted) or no run of it is active (nothing will change it). While
        a run is active, the task's events follow until one settles it, the run
        ends, the client goes, the quiet timeout passes or :meth:`stop` is called.
        """
        active = self._running(task_id)
        stored = self._store.load(task_id, owner=scope[0], tenant=scope[1])
        if stored is None:
            raise TaskNotFoundError(f"Task {task_id} not found")
        if _settled(stored) or not active:
            return iter((OutboundEvent(stored.task, str(stored.event_seq)),))
        return self._follow_run(stored, client_gone, partial(self._running, task_id),
                                _Held.take(holder))

    def sent(self, stored: StoredTask, client_gone: ClientGone = None,
             holder: StreamHolder | None = None) -> Iterator[StreamItem]:
        """A send's stream when its run executes elsewhere (a job queue): the task as
        stored, then its logged events until one settles it (or the quiet timeout)."""
        return self._follow_run(stored, client_gone, None, _Held.take(holder))

    def _follow_run(self, stored: StoredTask, client_gone: ClientGone,
                    running: Callable[[], bool] | None, held: _Held | None) -> Iterator[StreamItem]:
        task_id, after = stored.task.id, stored.event_seq
        yield OutboundEvent(stored.task, str(after))
        del stored  # a held stream keeps its position, not the task
        try:
            yield from self._tail(task_id, after, ends=_ends_stream, running=running,
                                  client_gone=client_gone, held=held)
        except EventsExpiredError as err:
            raise _replay_gap(err) from None

    def follow(self, stored: StoredTask, resume: int | None, client_gone: ClientGone = None,
               held: _Held | None = None) -> Iterator[StreamItem]:
        """The task (unless resuming), then its logged events until a terminal one."""
        task_id = stored.task.id
        try:
            if resume is None:
                after = stored.event_seq
                yield OutboundEvent(stored.task, str(after))  # resuming from its id skips nothing
                del stored  # a held stream keeps its position, not the task
            else:
                after = resume
                terminal = stored.task.status.state.is_terminal
                del stored
                if terminal:
                    for seq, event in self._store.events_after(task_id, after):
                        yield OutboundEvent(event, str(seq))
                    return
            yield from self._tail(task_id, after, client_gone=client_gone, held=held)
        except EventsExpiredError as err:
            raise _replay_gap(err) from None

    def _tail(self, task_id: str, after: int, *,
              ends: Callable[[StreamEvent], bool] = _is_terminal_event,
              running: Callable[[], bool] | None = None,
              client_gone: ClientGone = None, held: _Held | None = None) -> Iterator[StreamItem]:
        """Wait for events after ``after``; end on an event ``ends`` accepts, after the
        quiet timeout, on stop(), once the client is gone, or once ``running()`` is
        False (after reading what the run logged last).

        Between events the stream sleeps (:meth:`TaskWatches.sleep`) until the
        task's waiter moves on, its heartbeat or quiet deadline, its client's
        socket turns readable, or stop(). Only a ``running`` to look at, or a
        socket that cannot be watched, cuts the sleep into slices
        (:data:`STOP_POLL`, :data:`HANGUP_POLL`). A ``held`` one yields IDLE instead.
        """
        watches = self._watches
        watch = watches.join(task_id, after)
        sleeper = Sleeper(hangup_fd(client_gone), held)
        poll = STOP_POLL if running is not None else None
        if client_gone is not None and sleeper.hangup is None:
            poll = min(poll or HANGUP_POLL, HANGUP_POLL)
        quiet_since = beat_at = time.monotonic()
        try:
            while not self.stopping.is_set():
                # (a socket watched while the stream slept and not turned readable: not gone)
                watched = sleeper.hangup is not None and not sleeper.hangup.fired
                if client_gone is not None and not watched and client_gone():
                    return
                active = running is None or running()
                now = time.monotonic()
                if self._resubscribe_timeout - (now - quiet_since) <= 0:
                    return
                turn = watch.turn
                batch = watches.read(watch, after)
                for seq, item in _outbound(batch):
                    after = seq
                    yield item
                    if ends(item.event):
                        return
                if not active:
                    return
                now = time.monotonic()
                if batch:
                    quiet_since = beat_at = now
                    del batch, item  # asleep, a stream keeps its position only
                    continue
                if now - quiet_since >= self._resubscribe_timeout:
                    return  # quiet too long: no last heartbeat
                if now - beat_at >= self._heartbeat:
                    beat_at = now
                    yield HEARTBEAT
                    continue
                deadline = min(beat_at + self._heartbeat, quiet_since + self._resubscribe_timeout)
                if poll is not None:
                    deadline = min(deadline, now + poll)
                if held is None:
                    by_socket = watches.sleep(watch, turn, deadline, sleeper)
                else:
                    number = watches.fall_asleep(watch, turn, deadline, sleeper)
                    by_socket = False
                    if number is not None:
                        try:
                            yield IDLE  # resumed once woken (an empty write meanwhile)
                        finally:
                            by_socket = watches.woke(watch, number, sleeper)
                if by_socket and client_gone is not None and not client_gone():
                    sleeper.close()  # readable, but there (a pipelined request): peek on a timer
                    poll = min(poll or HANGUP_POLL, HANGUP_POLL)
        finally:
            sleeper.close()
            watches.leave(watch)
