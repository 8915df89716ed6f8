"""The PostgreSQL service the tests use: find it, and give each test its own schema.

``A2A_TEST_POSTGRES`` may name the server (a ``postgresql://`` URL); otherwise
127.0.0.1:5432, database ``test``, as user ``postgres`` or else ``root`` (trust
auth). In CI (``CI=true``) a missing service fails the test; elsewhere it skips.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

import pytest

__all__ = [
    "postgres_url",
    "schema_url",
    "unique_schema",
    "drop_schema",
    "empty_schema",
    "temporary_schema",
]

_CANDIDATES = (
    "postgresql://postgres@127.0.0.1:5432/test",
    "postgresql://root@127.0.0.1:5432/test",
)

#: Every schema a test session creates starts with this, so leftovers are easy to spot.
PREFIX = "a2a_test_"


@cache
def _find() -> tuple[str | None, str]:
    """The first URL that answers (or None) and why the others did not."""
    try:
        import psycopg
    except ImportError as exc:  # the test extra installs it
        return None, f"psycopg is not installed: {exc}"
    configured = os.environ.get("A2A_TEST_POSTGRES")
    reasons = []
    for url in (configured,) if configured else _CANDIDATES:
        try:
            with psycopg.connect(url, connect_timeout=3) as conn:
                conn.execute("SELECT 1")
            return url, ""
        except psycopg.Error as exc:
            reasons.append(f"{url}: {str(exc).strip()}")
    return None, "; ".join(reasons)


def postgres_url() -> str:
    """A URL of the test database; fails in CI, skips elsewhere, when there is none."""
    url, why = _find()
    if url is None:
        message = f"PostgreSQL is not available ({why})"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return url


def schema_url(schema: str) -> str:
    """The test database URL with ``?schema=`` (what A2AApp(store=…) and the CLI accept)."""
    return f"{postgres_url()}?schema={schema}"


def unique_schema() -> str:
    return f"{PREFIX}{uuid.uuid4().hex[:12]}"


def drop_schema(schema: str) -> None:
    """Drop a test schema and everything in it (no error when it is not there)."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(postgres_url(), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@contextmanager
def temporary_schema() -> Iterator[str]:
    """A fresh schema name, dropped on exit (the store creates it on first use)."""
    schema = unique_schema()
    try:
        yield schema
    finally:
        drop_schema(schema)


#: Our tables, emptied between tests that share one schema.
TABLES = ("a2a_tasks", "a2a_events", "a2a_push_configs", "a2a_leases", "a2a_outbox",
          "a2a_task_messages", "a2a_parts")


def empty_schema(schema: str) -> None:
    """Delete every row of the store's tables (much faster than a fresh schema per test)."""
    import psycopg
    from psycopg import sql

    # DELETE, not TRUNCATE: the tables are small and TRUNCATE rewrites files (~200 ms).
    with psycopg.connect(postgres_url()) as conn:
        for table in TABLES:
            conn.execute(sql.SQL("DELETE FROM {}").format(sql.Identifier(schema, table)))
