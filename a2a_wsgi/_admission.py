"""How many SSE streams one worker process keeps open at once.

Under gunicorn's gthread worker every open stream holds one of the worker's
threads; once all are held, every other request (a card, a GetTask) waits in
the queue behind streams that may last for hours, and the worker looks dead.
So streams get at most ``threads - reserve`` places, the reserve being kept
for short requests; a stream past that is refused at once with 503 and
``Retry-After``. Under the gevent worker a stream is a greenlet that costs
nothing while it sleeps, so the bound follows the worker's own connection
limit, gunicorn's ``worker_connections``, less a small reserve (a hundredth,
at least 16) for the short requests a worker full of streams still answers.
Elsewhere (werkzeug's threaded server, a thread per connection) nothing is
reserved unless the deployment asks.
"""

from __future__ import annotations

import threading

__all__ = ["StreamPlaces", "default_stream_limit", "reserve_for"]


def reserve_for(capacity: int) -> int:
    """Places kept for short requests: a quarter of the capacity, at least 2."""
    return max(2, capacity // 4)


def default_stream_limit(worker_class: str, *, threads: int, connections: int) -> int:
    """The stream limit for a gunicorn worker of ``worker_class`` (gunicorn's name for it)
    with ``threads`` threads (gthread) or ``connections`` connections (gevent); the
    settings are read by :func:`a2a_wsgi._gunicorn_internals.worker_settings`."""
    if "gevent" in worker_class:
        return max(1, connections - max(16, connections // 100))
    return max(1, threads - reserve_for(threads))


class StreamPlaces:
    """A counter of open streams with a limit (None: unlimited), safe across threads."""

    def __init__(self, limit: int | None, *, retry_after: int = 5) -> None:
        self.limit = limit
        self.retry_after = retry_after
        self._open = 0
        self._lock = threading.Lock()

    @property
    def open(self) -> int:
        """Streams open now."""
        return self._open

    def admit(self) -> bool:
        with self._lock:
            if self.limit is not None and self._open >= self.limit:
                return False
            self._open += 1
            return True

    def release(self) -> None:
        with self._lock:
            self._open = max(0, self._open - 1)
