"""A client-side bound on how long a borrowed connection may wait for the database.

``statement_timeout`` is enforced by the server, so it does nothing when the
server cannot be heard (a partition, a frozen host, a relay that swallows
traffic), and TCP keepalives and ``tcp_user_timeout`` do nothing either when a
live kernel on the way still acknowledges the packets. So each borrow is
armed with a deadline; one thread per process shuts down the socket of a
borrow that outlives it. The thread blocked on that socket then fails at once
with an ``OperationalError`` and the broken connection is never pooled again.

The socket is cut through a duplicate of its descriptor taken when the borrow
is armed: even if libpq has closed (and the process reused) the original
number meanwhile, the cut can only reach the connection it was meant for.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass, field

__all__ = ["Watchdog", "WATCHDOG"]

#: How long the thread stays up with nothing armed (a steady load keeps one thread).
_LINGER = 2.0


@dataclass(slots=True)
class _Armed:
    deadline: float
    sock: socket.socket
    fired: bool = field(default=False)


class Watchdog:
    """Deadlines for borrowed connections, enforced by one lazily started thread."""

    def __init__(self) -> None:
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        """Fresh state (also in a forked child: the parent's borrows are not ours to cut)."""
        self._cond = threading.Condition()
        self._armed: dict[int, _Armed] = {}
        self._tokens = 0
        self._thread: threading.Thread | None = None

    def arm(self, fd: int, seconds: float) -> int:
        """Cut the socket ``fd`` after ``seconds`` unless :meth:`disarm` comes first."""
        sock = socket.socket(fileno=os.dup(fd))
        with self._cond:
            self._tokens += 1
            token = self._tokens
            self._armed[token] = _Armed(time.monotonic() + seconds, sock)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="a2a-pg-watchdog",
                                                daemon=True)
                self._thread.start()
            self._cond.notify()
        return token

    def disarm(self, token: int) -> bool:
        """Forget a borrow; True if its deadline had passed and its socket was cut."""
        with self._cond:
            armed = self._armed.pop(token)
        armed.sock.close()  # the duplicate only: the connection keeps its own descriptor
        return armed.fired

    def _run(self) -> None:
        """Sleep until the earliest deadline, cut what is overdue; exit once idle a while."""
        with self._cond:
            idle_since = time.monotonic()
            while True:
                now = time.monotonic()
                pending = [a for a in self._armed.values() if not a.fired]
                for armed in pending:
                    if armed.deadline <= now:
                        _cut(armed)
                waiting = [a.deadline for a in pending if not a.fired]
                if waiting:
                    idle_since = now
                    self._cond.wait(min(waiting) - now)
                elif now - idle_since >= _LINGER:
                    self._thread = None
                    return
                else:
                    self._cond.wait(_LINGER - (now - idle_since))


def _cut(armed: _Armed) -> None:
    """Shut the socket down both ways: a blocked reader sees end-of-file at once."""
    armed.fired = True
    try:
        armed.sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already gone: nothing is waiting on it


#: The process's watchdog, shared by every pool.
WATCHDOG = Watchdog()
