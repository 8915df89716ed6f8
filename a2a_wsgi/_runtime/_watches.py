"""One waiter per followed task: it alone waits on the store and wakes the task's streams.

A stream following a stored task joins the task's :class:`TaskWatches` entry
and sleeps in a :class:`Sleeper` (an event, and a watch on its client's
socket) until the waiter wakes it: the task moved (the waiter keeps the batch
it read, and the streams take their events from it), the stream's heartbeat or
quiet deadline came (a heap of deadlines, so no stream has a timer of its own),
its client hung up, or the server stops.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Iterable
from typing import Protocol

from .._disconnect import watch_hangup
from ..stores import EventsExpiredError, TaskStore
from ..stores._base import Events
from ._defaults import log

__all__ = ["WAKE_BATCH", "Sleeper", "TaskWatches", "Woken"]

#: Streams a task's waiter wakes before it lets others run: under gevent, 10,000 streams
#: woken at once would each write before the next request is read (greenlets run in
#: the order they were woken), so a GetTask would wait for the whole fan-out.
WAKE_BATCH = 50


class _Watch:
    """One followed task: the newest event its waiter has seen, the batch it read last
    (``recent``: the events after ``recent[0]`` up to ``recent[1]``), how many times it
    woke its streams (``turn``), the streams asleep until it does (by sleep number)
    and their deadlines (a heap of (monotonic time, sleep number))."""

    __slots__ = ("task_id", "seq", "turn", "recent", "asleep", "deadlines", "followers",
                 "ended")

    def __init__(self, task_id: str, seq: int) -> None:
        self.task_id, self.seq, self.turn = task_id, seq, 0
        self.recent: tuple[int, int, Events] | None = None
        self.asleep: dict[int, Woken] = {}
        self.deadlines: list[tuple[float, int]] = []
        self.followers = 0
        self.ended = False


class Woken(Protocol):
    """What a stream sleeps on: a :class:`threading.Event`, or a held stream's wakeup
    (:class:`~a2a_core._service.Wakeup`), on which its server resumes it."""

    def set(self) -> None: ...
    def clear(self) -> None: ...
    def wait(self, timeout: float | None = None) -> bool: ...


class Sleeper:
    """What one stream sleeps with, made once per stream: what wakes it (an event, or
    ``woken`` when given: a held stream's wakeup), and the watch on its client's socket
    (None: cannot be watched)."""

    __slots__ = ("woken", "hangup")

    def __init__(self, fd: int | None, woken: Woken | None = None) -> None:
        self.woken: Woken = woken if woken is not None else threading.Event()
        self.hangup = watch_hangup(fd, self.woken.set) if fd is not None else None
        if self.hangup is not None:
            self.hangup.stop()  # watched only while asleep

    def close(self) -> None:
        if self.hangup is not None:
            self.hangup.cancel()
            self.hangup = None


class TaskWatches:
    """One waiter per followed task, however many streams follow it.

    The waiter (a thread; a greenlet under gevent) alone waits on the store's
    ``wait_for_events``: when the log moved on, it keeps the batch and wakes
    the streams asleep on the task; it also wakes each at its deadline (its
    heartbeat or quiet timeout), so a sleeping stream has no timer of its own.
    Its waits last at most ``slice_`` seconds, the most a deadline set during
    one can be late (a store's wait cannot be cut short). It ends once no
    stream follows the task, or at stop().
    """

    def __init__(self, store: TaskStore, stopping: threading.Event, slice_: float) -> None:
        self._store, self._stopping, self._slice = store, stopping, slice_
        self._lock = threading.Lock()
        self._watches: dict[str, _Watch] = {}
        self._sleeps = itertools.count()

    def join(self, task_id: str, after: int) -> _Watch:
        with self._lock:
            watch = self._watches.get(task_id)
            if watch is None:
                watch = self._watches[task_id] = _Watch(task_id, after)
                threading.Thread(target=self._run, args=(watch,), daemon=True,
                                 name=f"a2a-watch-{task_id}").start()
            watch.followers += 1
            return watch

    def leave(self, watch: _Watch) -> None:
        with self._lock:
            watch.followers -= 1
            if watch.followers <= 0 and not watch.ended:
                watch.ended = True
                if self._watches.get(watch.task_id) is watch:
                    del self._watches[watch.task_id]

    def read(self, watch: _Watch, after: int) -> Events:
        """The task's events after ``after``: from the waiter's last batch when it
        covers ``after``, else from the store."""
        recent = watch.recent
        if recent is not None and recent[0] <= after <= recent[1]:
            return [entry for entry in recent[2] if entry[0] > after]
        return self._store.events_after(watch.task_id, after)

    def sleep(self, watch: _Watch, turn: int, deadline: float, sleeper: Sleeper) -> bool:
        """Sleep unless the waiter has woken its streams since ``turn``: until it does,
        ``deadline`` (monotonic), stop(), or the client's socket turns readable.
        True when woken by the socket."""
        number = self.fall_asleep(watch, turn, deadline, sleeper)
        if number is None:
            return False
        try:
            sleeper.woken.wait()
        finally:
            fired = self.woke(watch, number, sleeper)
        return fired

    def fall_asleep(self, watch: _Watch, turn: int, deadline: float,
                    sleeper: Sleeper) -> int | None:
        """:meth:`sleep`'s first half, for a stream that is resumed when ``sleeper.woken``
        is set instead of waiting for it: the sleep's number, or None (awake at once)."""
        woken, hangup = sleeper.woken, sleeper.hangup
        woken.clear()
        with self._lock:
            if watch.turn != turn or self._stopping.is_set() or watch.ended:
                return None
            number = next(self._sleeps)
            watch.asleep[number] = woken
            heapq.heappush(watch.deadlines, (deadline, number))
        if hangup is not None:
            hangup.start()
        return number

    def woke(self, watch: _Watch, number: int, sleeper: Sleeper) -> bool:
        """:meth:`sleep`'s second half: True when woken by the socket."""
        hangup = sleeper.hangup
        if hangup is not None:
            hangup.stop()
        with self._lock:
            watch.asleep.pop(number, None)
        return hangup is not None and hangup.fired

    def wake_all(self) -> None:
        """Wake every sleeping stream (stop())."""
        with self._lock:
            sleepers = [e for watch in self._watches.values() for e in watch.asleep.values()]
        for woken in sleepers:
            woken.set()

    def _moved(self, watch: _Watch, seq: int, batch: Events | None) -> None:
        """The log reached ``seq`` (``batch``: the events read; None: read the store)."""
        with self._lock:
            watch.recent = (watch.seq, seq, batch) if batch is not None else None
            watch.seq, watch.turn = seq, watch.turn + 1
            sleepers, watch.asleep = watch.asleep, {}
        _wake(sleepers.values())

    def _expire(self, watch: _Watch) -> float:
        """Wake the streams whose deadline has come; seconds to the next one's."""
        now = time.monotonic()
        due = []
        with self._lock:
            deadlines = watch.deadlines
            while deadlines and deadlines[0][0] <= now:
                woken = watch.asleep.pop(heapq.heappop(deadlines)[1], None)
                if woken is not None:
                    due.append(woken)
            # Deadlines closer together than a twentieth of a slice share one wake-up.
            wait = max(deadlines[0][0] - now, self._slice / 20) if deadlines else self._slice
        _wake(due)
        return min(wait, self._slice)

    def _run(self, watch: _Watch) -> None:
        while not watch.ended and not self._stopping.is_set():
            wait = self._expire(watch)
            try:
                batch = self._store.wait_for_events(watch.task_id, watch.seq, wait)
            except EventsExpiredError as err:  # the streams read the store, and say so
                self._moved(watch, max(watch.seq, err.floor), None)
                continue
            except Exception:
                log.exception("waiting for the events of task %s failed", watch.task_id)
                self._moved(watch, watch.seq, None)  # the streams read the store themselves
                self._stopping.wait(self._slice)
                continue
            if batch:
                self._moved(watch, batch[-1][0], batch)
        with self._lock:
            sleepers = list(watch.asleep.values())
        _wake(sleepers)


def _wake(sleepers: Iterable[Woken]) -> None:
    for count, woken in enumerate(sleepers, 1):
        woken.set()
        if count % WAKE_BATCH == 0:
            time.sleep(0)  # let what else waits run between batches (gevent: a GetTask)
