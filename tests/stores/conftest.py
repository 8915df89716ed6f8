"""The store contract runs against every implementation listed in STORE_FACTORIES.

To add a store, add an entry: a context manager taking the test's tmp_path and
yielding ``make(**options) -> TaskStore``. Each ``make`` call must return a
*new handle on the same database* (as another worker process would open), so
two-writer and cross-handle tests mean something; the memory store, having no
second handle, returns its one instance. Options every store must accept:
``max_events``. Clean up everything the backend created when the context exits
(the fixture closes the handles itself). Example for PostgreSQL:

    @contextmanager
    def _postgres(tmp_path):
        schema = create_unique_schema()          # e.g. f"a2a_test_{uuid4().hex[:12]}"
        try:
            yield lambda **options: PostgresTaskStore(URL, schema=schema, **options)
        finally:
            drop_schema(schema)

    STORE_FACTORIES["postgres"] = _postgres
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from a2a_wsgi.stores import MemoryTaskStore, SQLiteTaskStore, TaskStore

StoreFactory = Callable[..., TaskStore]


@contextmanager
def _memory(tmp_path: Path) -> Iterator[StoreFactory]:
    made: list[TaskStore] = []

    def make(**options: Any) -> TaskStore:
        if not made:
            made.append(MemoryTaskStore(**options))
        return made[0]

    yield make


@contextmanager
def _sqlite(tmp_path: Path) -> Iterator[StoreFactory]:
    path = tmp_path / "tasks.sqlite3"
    yield lambda **options: SQLiteTaskStore(path, **options)


#: The one schema the PostgreSQL runs share (emptied before each test, dropped at the end).
_PG_SCHEMA: list[str] = []


@contextmanager
def _postgres(tmp_path: Path) -> Iterator[StoreFactory]:
    from support.postgres import empty_schema, postgres_url, unique_schema

    from a2a_wsgi.stores._postgres import PostgresTaskStore, upgrade_schema

    url = postgres_url()  # skips (fails in CI) without the service
    if not _PG_SCHEMA:
        _PG_SCHEMA.append(unique_schema())
        upgrade_schema(url, schema=_PG_SCHEMA[0])
    else:
        empty_schema(_PG_SCHEMA[0])
    yield lambda **options: PostgresTaskStore(url, schema=_PG_SCHEMA[0], **options)


@pytest.fixture(scope="session", autouse=True)
def _drop_postgres_schema() -> Iterator[None]:
    yield
    if _PG_SCHEMA:
        from support.postgres import drop_schema

        drop_schema(_PG_SCHEMA.pop())


STORE_FACTORIES: dict[str, Callable[[Path], AbstractContextManager[StoreFactory]]] = {
    "memory": _memory,
    "sqlite": _sqlite,
    "postgres": _postgres,
}


@pytest.fixture(params=sorted(STORE_FACTORIES))
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """``make(**options)``: a new handle on this test's (empty) database; closed afterwards."""
    handles: list[TaskStore] = []
    with STORE_FACTORIES[request.param](tmp_path) as make:

        def tracked(**options: Any) -> TaskStore:
            store = make(**options)
            handles.append(store)
            return store

        try:
            yield tracked
        finally:
            for store in handles:
                store.close()


@pytest.fixture
def store(store_factory: StoreFactory) -> TaskStore:
    return store_factory()
