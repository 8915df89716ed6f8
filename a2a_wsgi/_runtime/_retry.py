"""Riding out a store outage: an agent-side write is retried, briefly, with backoff.

A run that has its agent's result must not lose it to a database restart, nor
leave its task WORKING until the lease expires and a reaper blames a lost
worker. So a write that fails with a store outage (:func:`a2a_wsgi.stores.is_outage`)
is tried again while the run still holds the task's lease (the keeper renews
it); after :data:`STORE_RETRY_DELAYS` the error goes to the caller, which
records what happened.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from ..stores import is_outage
from ._defaults import log

__all__ = ["STORE_RETRY_DELAYS", "outage_reason", "retry_outage"]

#: Seconds slept before each retry: about 20 s in all, shorter than the default lease.
STORE_RETRY_DELAYS: tuple[float, ...] = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 4.0, 5.0, 7.0)

_T = TypeVar("_T")


def retry_outage(write: Callable[[], _T], *, task_id: str,
                 delays: tuple[float, ...] = STORE_RETRY_DELAYS,
                 sleep: Callable[[float], None] = time.sleep) -> _T:
    """``write()``, tried again after each delay while it fails with a store outage."""
    for delay in delays:
        try:
            return write()
        except Exception as exc:
            if not is_outage(exc):
                raise
            log.warning("task %s: the task store is unavailable (%s); retrying in %.2f s",
                        task_id, exc, delay)
        sleep(delay)
    return write()


def outage_reason(exc: BaseException) -> str:
    """The failure a client reads when the store stayed away: what happened, not a lost worker."""
    return f"the task store was unavailable, so this task's result could not be saved ({exc})"
