"""Polling GetTask until there is something for the caller to act on.

Peers leave this loop to the caller; ours stops at a **terminal** state (done) or an
**interrupted** one (input-required, auth-required: the agent is waiting for the caller,
so waiting longer cannot help), and never runs past its overall budget. The interval
grows geometrically from ``poll_every`` (tens of milliseconds, so a quick task is seen
quickly) up to ``max_interval`` (bounded backoff, no jitter: one client polling one task
gains nothing from randomness), and never beyond ``lateness`` times the time waited so
far: a task that finishes after 2 s is seen within about 0.1 s, one that takes minutes
within seconds. The last sleep is cut short so the budget is honoured to within one
request. Polling is the last resort of :mod:`a2a_client._waiting`, which long-polls or
streams when the agent allows.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from a2a_core.models import Task

from ._errors import WaitTimeout

__all__ = [
    "DEFAULT_LATENESS",
    "DEFAULT_POLL_EVERY", "DEFAULT_WAIT_TIMEOUT", "is_settled", "wait_for_task"]

#: The first interval: short, so that an agent that answers in a moment costs no more.
DEFAULT_POLL_EVERY = 0.02
#: An interval is at most this fraction of the time already waited.
DEFAULT_LATENESS = 0.05
DEFAULT_WAIT_TIMEOUT = 300.0


def is_settled(task: Task) -> bool:
    """Terminal or interrupted: the caller has something to act on."""
    state = task.status.state
    return state.is_terminal or state.is_interrupted


def wait_for_task(
    get_task: Callable[[], Task],
    *,
    first: Task | None = None,
    poll_every: float = DEFAULT_POLL_EVERY,
    timeout: float = DEFAULT_WAIT_TIMEOUT,
    backoff: float = 1.5,
    max_interval: float = 10.0,
    lateness: float = DEFAULT_LATENESS,
    on_update: Callable[[Task, float], None] | None = None,
    cancel: threading.Event | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Task:
    """Poll ``get_task`` until the task settles; return that snapshot.

    :param first: a snapshot already in hand (e.g. the send result): no GetTask for it.
    :param on_update: called with each snapshot and the seconds elapsed (live status).
    :param cancel: set it from another thread to stop waiting; the last snapshot is
        returned as it is.
    :raises WaitTimeout: the budget ran out first (``.task`` is the last snapshot).
    """
    if poll_every <= 0 or timeout < 0 or backoff < 1 or max_interval <= 0 or lateness <= 0:
        raise ValueError(
            "poll_every, max_interval and lateness must be > 0, timeout >= 0, backoff >= 1"
        )
    stop = cancel if cancel is not None else threading.Event()
    start = clock()
    task = first if first is not None else get_task()
    interval = poll_every
    while True:
        elapsed = clock() - start
        if on_update is not None:
            on_update(task, elapsed)
        if is_settled(task):
            return task
        if elapsed >= timeout:
            raise WaitTimeout(task, elapsed)
        # Never later than `lateness` of the time waited so far (nor sooner than poll_every).
        sleep = min(interval, max(poll_every, lateness * elapsed))
        if stop.wait(min(sleep, timeout - elapsed)):
            return task
        interval = min(interval * backoff, max_interval)
        task = get_task()
