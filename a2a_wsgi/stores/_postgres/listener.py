"""The LISTEN connection of a process: wakes the threads waiting for a task's events.

A save with events sends ``NOTIFY`` on the store's channel with the task id
(delivered when it commits). One connection per process listens and counts
notifications per watched task; a waiting stream sleeps until its count
moves. Waiters also re-read the log every ``poll_interval``, so a lost
notification (the listener reconnecting, say) delays a stream, never hangs it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

import psycopg
from psycopg import sql

from .rows import unesc
from .schema import Conn

__all__ = ["Listener"]

log = logging.getLogger("a2a_wsgi.stores.postgres")


class Listener:
    """One LISTEN connection per process; counts notifications for the tasks being waited on.

    Waiters register a task (:meth:`watch`), read the count, query the log, and
    sleep until the count moves. Only watched tasks are counted, so the map is
    bounded by the number of open streams.
    """

    def __init__(self, connect: Callable[[], Conn], channel: str) -> None:
        self._connect, self._channel = connect, channel
        self._cond = threading.Condition()
        self._watchers: dict[str, int] = {}
        self._counts: dict[str, int] = {}
        self._stop = threading.Event()
        self._ready = threading.Event()
        #: The LISTEN connection while one is open (a forked child disarms it).
        self.conn: Conn | None = None
        self._thread = threading.Thread(target=self._run, name="a2a-pg-listen", daemon=True)
        self._thread.start()

    def watch(self, task_id: str) -> None:
        with self._cond:
            self._watchers[task_id] = self._watchers.get(task_id, 0) + 1
            self._counts.setdefault(task_id, 0)

    def unwatch(self, task_id: str) -> None:
        with self._cond:
            left = self._watchers.get(task_id, 0) - 1
            if left > 0:
                self._watchers[task_id] = left
            else:
                self._watchers.pop(task_id, None)
                self._counts.pop(task_id, None)

    def count(self, task_id: str) -> int:
        with self._cond:
            return self._counts.get(task_id, 0)

    def wait(self, task_id: str, seen: int, timeout: float) -> None:
        """Until a notification for ``task_id`` after ``seen`` (or the timeout)."""
        with self._cond:
            self._cond.wait_for(lambda: self._counts.get(task_id, 0) != seen, timeout)

    def wait_ready(self, timeout: float) -> bool:
        return self._ready.wait(timeout)

    def close(self, wake: Callable[[], object] | None = None) -> None:
        """Stop the thread; ``wake`` (a NOTIFY on our channel) ends its wait at once."""
        self._stop.set()
        if wake is not None and self._thread.is_alive():
            try:
                wake()
            except psycopg.Error:
                pass  # it stops within its half-second wait anyway
        self._thread.join(timeout=5)

    def _bump(self, task_ids: Sequence[str] | None) -> None:
        """Count a notification (None: all tasks, after a reconnect may have lost some)."""
        with self._cond:
            for task_id in self._counts if task_ids is None else task_ids:
                if task_id in self._counts:
                    self._counts[task_id] += 1
            self._cond.notify_all()

    def _run(self) -> None:
        """Listen until stopped, reconnecting with a growing pause after each loss."""
        backoff = 0.1
        while not self._stop.is_set():
            try:
                self._listen()
            except psycopg.Error as exc:
                if self._ready.is_set():  # it had been listening: a fresh loss
                    backoff = 0.1
                self._ready.clear()
                log.warning("LISTEN connection lost (%s); streams poll until it is back", exc)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)

    def _listen(self) -> None:
        """One connection's life: LISTEN, then count what arrives until stopped."""
        with self._connect() as conn:
            self.conn = conn
            conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._channel)))
            self._ready.set()
            self._bump(None)
            while not self._stop.is_set():
                # The generator yields each notification as it arrives and ends
                # after half a second of silence, so the stop flag is seen.
                for notify in conn.notifies(timeout=0.5):
                    self._bump((unesc(notify.payload),))
                    if self._stop.is_set():
                        break
