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
    from ._base import LEGACY_FINGERPRINT as LEGACY_FINGERPRINT
    from ._base import ConflictError as ConflictError
    from ._base import Delivery as Delivery
    from ._base import DuplicateMessageError as DuplicateMessageError
    from ._base import EventLog as EventLog
    from ._base import EventsExpiredError as EventsExpiredError
    from ._base import Lease as Lease
    from ._base import LeaseClaim as LeaseClaim
    from ._base import LeaseStore as LeaseStore
    from ._base import OutboxEntry as OutboxEntry
    from ._base import PushStore as PushStore
    from ._base import StoredTask as StoredTask
    from ._base import StoreOpenError as StoreOpenError
    from ._base import TaskCursor as TaskCursor
    from ._base import TaskRecords as TaskRecords
    from ._base import TaskStore as TaskStore
    from ._base import sort_key as sort_key
    from ._memory import MemoryTaskStore as MemoryTaskStore
    from ._outage import is_outage as is_outage
    from ._postgres import PostgresTaskStore as PostgresTaskStore
    from ._sqlite import SQLiteTaskStore as SQLiteTaskStore
    from ._sqlite import default_sqlite_path as default_sqlite_path

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
        from ._memory import MemoryTaskStore

        return MemoryTaskStore(**options)
    if not isinstance(spec, str):
        return spec
    scheme, sep, rest = spec.partition("://")
    if not sep:
        raise ValueError(f"unknown task store {spec!r}: expected memory, sqlite:///… or "
                         "postgresql://…")
    if scheme == "sqlite":
        from ._sqlite import SQLiteTaskStore

        path = rest[1:] if rest.startswith("/") else rest
        return SQLiteTaskStore(path or None, **options)
    if scheme in ("postgresql", "postgres"):
        from . import _postgres as postgres  # type: ignore[attr-defined,unused-ignore]

        store: TaskStore = postgres.PostgresTaskStore(spec, **options)
        return store
    raise ValueError(f"unknown task store scheme {scheme!r} in {spec!r}")

#: Where each name lives (imported on first use, :mod:`a2a_core._lazy`).
_WHERE = {
    "LEGACY_FINGERPRINT": "a2a_wsgi.stores._base",
    "ConflictError": "a2a_wsgi.stores._base",
    "Delivery": "a2a_wsgi.stores._base",
    "DuplicateMessageError": "a2a_wsgi.stores._base",
    "EventLog": "a2a_wsgi.stores._base",
    "EventsExpiredError": "a2a_wsgi.stores._base",
    "Lease": "a2a_wsgi.stores._base",
    "LeaseClaim": "a2a_wsgi.stores._base",
    "LeaseStore": "a2a_wsgi.stores._base",
    "OutboxEntry": "a2a_wsgi.stores._base",
    "PushStore": "a2a_wsgi.stores._base",
    "StoredTask": "a2a_wsgi.stores._base",
    "StoreOpenError": "a2a_wsgi.stores._base",
    "TaskCursor": "a2a_wsgi.stores._base",
    "TaskRecords": "a2a_wsgi.stores._base",
    "TaskStore": "a2a_wsgi.stores._base",
    "sort_key": "a2a_wsgi.stores._base",
    "MemoryTaskStore": "a2a_wsgi.stores._memory",
    "is_outage": "a2a_wsgi.stores._outage",
    "SQLiteTaskStore": "a2a_wsgi.stores._sqlite",
    "PostgresTaskStore": "a2a_wsgi.stores._postgres",  # psycopg only when it is used
    "default_sqlite_path": "a2a_wsgi.stores._sqlite",
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
