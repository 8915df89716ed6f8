"""Stopping ``a2a serve``: the first Ctrl-C (or SIGTERM) waits for the running tasks and says
so, a second Ctrl-C stops at once.

gunicorn alone treats Ctrl-C as a quick stop that still waits, silently, up to
``graceful_timeout`` for the agents' threads, and its gevent workers print a
traceback each. Under :func:`~a2a_wsgi._serve.run_gunicorn` (so ``a2a serve``):

- the workers ignore SIGINT (a terminal sends it to all of them; the master decides);
- on the first SIGINT or SIGTERM the master (:func:`stop_gracefully`, called by
  gunicorn's master from :func:`~a2a_wsgi._gunicorn_internals.run_master`) sends the
  workers SIGTERM, as for a graceful stop: open streams end cleanly and each
  worker exits once its running tasks are done, within ``graceful_timeout``;
  each worker tells the master how many tasks it runs (:func:`report_runs`, over
  a pipe opened before the fork) and the master prints one line, e.g.
  ``a2a serve: waiting up to 30 s for 3 running tasks; Ctrl-C again to stop now``;
- a second SIGINT kills the workers (their tasks' leases expire and are recovered
  as after a crash: docs/deployment.md, "Worker loss") and exits with 130.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time
from collections.abc import Iterable
from types import FrameType
from typing import TYPE_CHECKING

from ._serve_checks import EXIT_STOPPED

if TYPE_CHECKING:
    from ._gunicorn_internals import Master

__all__ = ["open_report_pipe", "report_runs", "runs_in_flight", "stop_gracefully"]

#: How long the master waits for the workers' counts before it says what it waits for.
REPORT_WAIT = 1.0

#: The pipe the workers report on: (read end: the master's, write end: the workers').
_pipe: tuple[int, int] | None = None


def open_report_pipe() -> None:
    """Open the pipe in the master, before gunicorn forks the workers that inherit it."""
    global _pipe
    if _pipe is None:
        read_end, write_end = os.pipe()
        # A worker writes from its signal handler: never block there (a report nobody
        # reads, after a reload say, is dropped once the pipe is full).
        os.set_blocking(write_end, False)
        _pipe = (read_end, write_end)


def runs_in_flight() -> int:
    """Agent runs of this process not finished yet, over every live runtime."""
    # The runtime has no public count yet: read each run registry's table.
    from ._runtime._service import _LIVE

    return sum(len(runs) for runtime in list(_LIVE)
               for runs in dict(runtime._runs._runs).values())


def report_runs() -> None:
    """In a worker told to stop: tell the master how many tasks this worker still runs."""
    if _pipe is None:
        return
    try:
        os.write(_pipe[1], f"{os.getpid()} {runs_in_flight()}\n".encode())
    except OSError:
        pass  # the pipe is full or gone: the master then says nothing about this worker


def _collect(read_end: int, pids: Iterable[int], within: float) -> int:
    """The tasks the workers ``pids`` report, waiting ``within`` seconds at most."""
    waiting, total, buffer = set(pids), 0, b""
    deadline = time.monotonic() + within
    while waiting:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([read_end], [], [], left)[0]:
            break
        chunk = os.read(read_end, 4096)
        if not chunk:
            break
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            pid_text, _, count_text = line.decode(errors="replace").partition(" ")
            if pid_text.isdigit() and int(pid_text) in waiting and count_text.isdigit():
                waiting.discard(int(pid_text))
                total += int(count_text)
    return total


def _drain(read_end: int) -> None:
    """Read away what the pipe holds now."""
    while select.select([read_end], [], [], 0)[0] and os.read(read_end, 65536):
        pass


def _tasks(count: int) -> str:
    return f"{count} running task" + ("" if count == 1 else "s")


def stop_gracefully(master: Master, signum: int) -> None:
    """The first Ctrl-C or SIGTERM: the workers are told to stop gracefully now (gunicorn's
    own Ctrl-C is a quick stop), the tasks they still run are counted and said, and a
    second Ctrl-C stops at once. gunicorn's master then stops the workers gracefully."""

    def stop_now(second: int, frame: FrameType | None) -> None:
        """A second Ctrl-C: kill the workers and exit, from the signal handler itself."""
        for pid in master.worker_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        print("a2a serve: stopped without waiting for the running tasks", file=sys.stderr,
              flush=True)
        os._exit(EXIT_STOPPED)

    signal.signal(signal.SIGINT, stop_now)
    workers = master.worker_pids()
    if _pipe is not None:
        _drain(_pipe[0])  # reports of workers stopped earlier (a reload, say)
    for pid in workers:  # now, so that they report while gunicorn's stop begins
        master.signal_worker(pid, signal.SIGTERM)
    running = _collect(_pipe[0], workers, REPORT_WAIT) if _pipe is not None else 0
    if running:
        again = "again" if signum == signal.SIGINT else "(SIGINT)"
        print(f"a2a serve: waiting up to {master.graceful_timeout:g} s for "
              f"{_tasks(running)}; Ctrl-C {again} to stop now", file=sys.stderr, flush=True)
