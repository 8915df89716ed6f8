"""Shared shapes and defaults of the runtime: the clock, ids, worker names and scopes.

Everything that reads the time or makes an id lives here, so the rest of the
runtime only calls what it was given (tests pass a clock and an id factory).
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any

from a2a_core.models import StreamEvent, Task, TaskPushNotificationConfig

from ..stores import OutboxEntry

__all__ = [
    "CAS_RETRIES",
    "Change",
    "DEFAULT_HEARTBEAT_INTERVAL",
    "DEFAULT_LEASE_SECONDS",
    "DEFAULT_RESUBSCRIBE_TIMEOUT",
    "LOST_WORKER_REASON",
    "PURGE_EVERY",
    "UNSTARTED_REASON",
    "PushPlanner",
    "Scope",
    "default_owner",
    "describe",
    "log",
    "random_id",
    "utc_now",
    "worker_name",
]

#: One logger for the whole runtime package (its name predates the package split).
log = logging.getLogger("a2a_wsgi.runtime")

CAS_RETRIES = 100
DEFAULT_LEASE_SECONDS = 30.0
#: Seconds between SSE comments on an idle stream (keeps proxies from cutting it).
DEFAULT_HEARTBEAT_INTERVAL = 15.0
#: Seconds a subscription may stay idle before it ends.
DEFAULT_RESUBSCRIBE_TIMEOUT = 60.0
PURGE_EVERY = 60.0
#: What a reaped task's FAILED status says: all the reaper knows is that the lease
#: expired (its process stopped, or could not reach the store to renew it).
LOST_WORKER_REASON = ("the server stopped before this task finished (its lease expired: "
                      "the process stopped or lost the task store)")
#: The same, for a task whose run had not started (it was queued when the lease expired).
UNSTARTED_REASON = ("the server stopped before this task started (its lease expired: "
                    "the process stopped or lost the task store)")

#: (owner, tenant): every task query is scoped by both.
Scope = tuple["str | None", "str | None"]

#: A change function: the task as read -> the new task and the events it produced.
Change = Callable[[Task], "tuple[Task, tuple[StreamEvent, ...]]"]

#: push_planner(task after the save, [(seq, event), ...], the task's push configs) -> entries.
PushPlanner = Callable[
    [Task, "Sequence[tuple[int, StreamEvent]]", "Sequence[TaskPushNotificationConfig]"],
    "Sequence[OutboxEntry]",
]


def utc_now() -> datetime:
    """The default clock: aware UTC, as the stores and the wire expect."""
    return datetime.now(timezone.utc)


def random_id(prefix: str) -> str:
    """The default id factory: unguessable, and the prefix says what it names."""
    return f"{prefix}-{os.urandom(16).hex()}"  # 128 random bits, as unguessable as uuid4


def worker_name() -> str:
    """Unique per process (and per fork): host, pid and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def default_owner(identity: Any) -> str | None:
    """The store owner for an identity: None stays anonymous, anything else its str()."""
    return None if identity is None else str(identity)


def describe(exc: BaseException) -> str:
    """The text a peer may see for an agent's exception: its message, never a traceback."""
    return str(exc) or type(exc).__name__
