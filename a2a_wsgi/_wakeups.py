"""Wake-ups that cost nothing while nobody waits."""

from __future__ import annotations

import threading

__all__ = ["Signal"]


class Signal(threading.Condition):
    """A Condition that counts its waiters, so a notify with nobody waiting is skipped.

    Most runs (every blocking send) are never waited on, yet each commit on
    their task pokes them; a store's event log is watched by open streams only,
    yet each save with events notifies it. ``waiting`` changes only under the
    lock (``wait`` holds it on entry and again on return), so a notifier
    holding the lock reads it exactly: a waiter counted is one that checked its
    predicate before the notifier took the lock, and is woken.
    """

    def __init__(self, lock: threading.Lock | threading.RLock) -> None:
        super().__init__(lock)
        self.waiting = 0

    def wait(self, timeout: float | None = None) -> bool:
        self.waiting += 1
        try:
            return super().wait(timeout)
        finally:
            self.waiting -= 1

    def notify_all(self) -> None:
        if self.waiting:
            super().notify_all()

    def notify(self, n: int = 1) -> None:
        if self.waiting:
            super().notify(n)
