"""Where tasks, their event logs, push configs, the push outbox and work leases live.

Three implementations of one :class:`TaskStore` interface (see :mod:`.base`
for the rules every one keeps): :class:`MemoryTaskStore` (one process),
:class:`SQLiteTaskStore` (one host, many worker processes) and the PostgreSQL
store (many hosts; imported lazily by :func:`open_store`).
"""

from __future__ import annotations

import os
from typing import Any

from .base import (
    LEGACY_FINGERPRINT,
    ConflictError,
    Delivery,
    DuplicateMessageError,
    EventLog,
    EventsExpiredError,
    Lease,
    LeaseClaim,
    LeaseStore,
    OutboxEntry,
    PushStore,
    StoredTask,
    StoreOpenError,
    TaskCursor,
    TaskRecords,
    TaskStore,
    sort_key,
)
from .memory import MemoryTaskStore
from .outage import is_outage
from .sqlite import SQLiteTaskStore, default_sqlite_path

__all__ = [
    "ConflictError",
    "Delivery",
    "DuplicateMessageError",
    "EventsExpiredError",
    "LEGACY_FINGERPRINT",
    "Lease",
    "LeaseClaim",
    "OutboxEntry",
    "StoredTask",
    "StoreOpenError",
    "TaskCursor",
    "TaskStore",
    "TaskRecords",
    "EventLog",
    "PushStore",
    "LeaseStore",
    "MemoryTaskStore",
    "SQLiteTaskStore",
    "default_sqlite_path",
    "is_outage",
    "open_store",
    "sort_key",
]


def open_store(spec: TaskStore | str | None = None, **options: Any) -> TaskStore:
    """A store from an instance (returned as is), "memory", or a URL; None reads ``$A2A_STORE``.

    ``"sqlite:///relative/path"``, ``"sqlite:////absolute/path"`` or just
    ``"sqlite://"`` (the default file, :func:`default_sqlite_path`);
    ``"postgresql://…"``/``"postgres://…"`` imports the PostgreSQL store.
    ``options`` go to the store's constructor.
    """
    if spec is None:
        spec = os.environ.get("A2A_STORE") or "memory"
    if spec == "memory" or spec == "memory://":
        return MemoryTaskStore(**options)
    if not isinstance(spec, str):
        return spec
    scheme, sep, rest = spec.partition("://")
    if not sep:
        raise ValueError(f"unknown task store {spec!r}: expected memory, sqlite:///… or "
                         "postgresql://…")
    if scheme == "sqlite":
        path = rest[1:] if rest.startswith("/") else rest
        return SQLiteTaskStore(path or None, **options)
    if scheme in ("postgresql", "postgres"):
        from . import postgres  # type: ignore[attr-defined,unused-ignore]

        store: TaskStore = postgres.PostgresTaskStore(spec, **options)
        return store
    raise ValueError(f"unknown task store scheme {scheme!r} in {spec!r}")
