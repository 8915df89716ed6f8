"""Which store errors mean "the database is unreachable for now", not "this write is wrong".

The runtime retries a save that failed this way (a PostgreSQL restart ends every
session with ``AdminShutdown``; a busy SQLite file says "database is locked")
and tells the client the truth when the store stays away. The check names the
drivers' error classes only here, so the runtime never imports a driver.
"""

from __future__ import annotations

import sqlite3
import sys

__all__ = ["is_outage"]


def is_outage(exc: BaseException) -> bool:
    """True for a connection, server-shutdown or lock error of a store's driver."""
    if isinstance(exc, (OSError, sqlite3.OperationalError)):
        return True
    psycopg = sys.modules.get("psycopg")  # loaded only when a PostgreSQL store is in use
    if psycopg is not None:
        return isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError))
    return False
