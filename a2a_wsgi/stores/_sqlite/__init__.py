"""The SQLite store: tasks and events (:mod:`.store`), push (:mod:`.push`), leases
(:mod:`.leases`), the schema (:mod:`.schema`) and connections (:mod:`.connections`)."""

from __future__ import annotations

from .schema import SCHEMA_VERSION
from .store import SQLiteTaskStore, default_sqlite_path

__all__ = ["SQLiteTaskStore", "default_sqlite_path", "SCHEMA_VERSION"]
