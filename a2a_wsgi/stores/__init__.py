"""Where tasks, their event logs, push configs, the push outbox and work leases live.

Three implementations of one :class:`TaskStore` interface (see :mod:`.base`
for the rules every one keeps): :class:`MemoryTaskStore` (one process),
:class:`SQLiteTaskStore` (one host, many worker processes) and the PostgreSQL
store (many hosts; imported lazily by :func:`open_store`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from a2a_core._lazy import lazy_exports

if TYPE_CHECKING:
    from .base import LEGACY_FINGERPRINT as LEGACY_FINGERPRINT
    from .base import ConflictError as ConflictError
    from .base import Delivery as Delivery
    from .base import DuplicateMessageError as DuplicateMessageError
    from .base import EventLog as EventLog
    from .base import EventsExpiredError as EventsExpiredError
    from .base import Lease as Lease
    from .base import LeaseClaim as LeaseClaim
    from .base import LeaseStore as LeaseStore
    from .base import OutboxEntry as OutboxEntry
    from .base import PushStore as PushStore
    from .base import StoredTask as StoredTask
    from .base import StoreOpenError as StoreOpenError
    from .base import TaskCursor as TaskCursor
    from .base import TaskRecords as TaskRecords
    from .base import TaskStore as TaskStore
    from .base import sort_key as sort_key
    from .memory import MemoryTaskStore as MemoryTaskStore
    from .outage import is_outage as is_outage
    from .postgres import PostgresTaskStore as PostgresTaskStore
    from .sqlite import SQLiteTaskStore as SQLiteTaskStore
    from .sqlite import default_sqlite_path as default_sqlite_path

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
    "PostgresTaskStore",
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
        from .memory import MemoryTaskStore

        return MemoryTaskStore(**options)
    if not isinstance(spec, str):
        return spec
    scheme, sep, rest = spec.partition("://")
    if not sep:
        raise ValueError(f"unknown task store {spec!r}: expected memory, sqlite:///… or "
                         "postgresql://…")
    if scheme == "sqlite":
        from .sqlite import SQLiteTaskStore

        path = rest[1:] if rest.startswith("/") else rest
        return SQLiteTaskStore(path or None, **options)
    if scheme in ("postgresql", "postgres"):
        from . import postgres  # type: ignore[attr-defined,unused-ignore]

        store: TaskStore = postgres.PostgresTaskStore(spec, **options)
        return store
    raise ValueError(f"unknown task store scheme {scheme!r} in {spec!r}")

#: Where each name lives (imported on first use, :mod:`a2a_core._lazy`).
_WHERE = {
    "LEGACY_FINGERPRINT": "a2a_wsgi.stores.base",
    "ConflictError": "a2a_wsgi.stores.base",
    "Delivery": "a2a_wsgi.stores.base",
    "DuplicateMessageError": "a2a_wsgi.stores.base",
    "EventLog": "a2a_wsgi.stores.base",
    "EventsExpiredError": "a2a_wsgi.stores.base",
    "Lease": "a2a_wsgi.stores.base",
    "LeaseClaim": "a2a_wsgi.stores.base",
    "LeaseStore": "a2a_wsgi.stores.base",
    "OutboxEntry": "a2a_wsgi.stores.base",
    "PushStore": "a2a_wsgi.stores.base",
    "StoredTask": "a2a_wsgi.stores.base",
    "StoreOpenError": "a2a_wsgi.stores.base",
    "TaskCursor": "a2a_wsgi.stores.base",
    "TaskRecords": "a2a_wsgi.stores.base",
    "TaskStore": "a2a_wsgi.stores.base",
    "sort_key": "a2a_wsgi.stores.base",
    "MemoryTaskStore": "a2a_wsgi.stores.memory",
    "is_outage": "a2a_wsgi.stores.outage",
    "SQLiteTaskStore": "a2a_wsgi.stores.sqlite",
    "PostgresTaskStore": "a2a_wsgi.stores.postgres",  # psycopg only when it is used
    "default_sqlite_path": "a2a_wsgi.stores.sqlite",
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
