"""What only the PostgreSQL store has: schema management, LISTEN/NOTIFY, its pool, forks.

The shared behaviour is in test_contract.py (run against PostgreSQL through
conftest.STORE_FACTORIES). Every test here works in its own schema, dropped at
the end; without the service they skip (and fail in CI).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.postgres import empty_schema, postgres_url, schema_url, temporary_schema

from a2a_core.models import (
    Message,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_wsgi.stores import (
    LEGACY_FINGERPRINT,
    ConflictError,
    DuplicateMessageError,
    EventsExpiredError,
    MemoryTaskStore,
    OutboxEntry,
    open_store,
)

psycopg = pytest.importorskip("psycopg")

from a2a_wsgi import _db_cli as db_cli  # noqa: E402
from a2a_wsgi.stores import _codec as codec  # noqa: E402
from a2a_wsgi.stores._postgres import (  # noqa: E402
    SCHEMA_VERSION,
    PostgresTaskStore,
    SchemaVersionError,
    schema_version,
    split_schema,
    upgrade_schema,
)
from a2a_wsgi.stores._postgres import pool as pg_pool  # noqa: E402
from a2a_wsgi.stores._postgres.schema import TCP_OPTIONS  # noqa: E402

pytestmark = pytest.mark.postgres

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=timezone.utc)
#: A request fingerprint, as a2a_core._idempotency makes them.
FP = "f" * 64


@pytest.fixture
def schema() -> Iterator[str]:
    postgres_url()  # skip (or fail in CI) before making anything
    with temporary_schema() as name:
        yield name


@pytest.fixture
def url() -> str:
    return postgres_url()


@pytest.fixture
def stores(url: str, schema: str) -> Iterator[list[PostgresTaskStore]]:
    """Open handles here to have them closed (before the schema is dropped)."""
    made: list[PostgresTaskStore] = []
    yield made
    for store in made:
        store.close()


def task(task_id: str = "t1", state: TaskState = TaskState.WORKING, text: str = "hi",
         at: datetime = T0) -> Task:
    msg = Message(message_id=f"m-{task_id}", role=Role.USER, parts=(TextPart(text=text),))
    return Task(id=task_id, context_id="c1", status=TaskStatus(state=state, timestamp=at),
                history=(msg,))


def status(state: TaskState, task_id: str = "t1") -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(task_id=task_id, context_id="c1",
                                 status=TaskStatus(state=state, timestamp=T0),
                                 final=state.is_terminal)


def sql(url: str, query: str, params: Any = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(query, params)
        return cur.fetchall() if cur.description is not None else []


# -- schema management and the CLI ------------------------------------------------------------


def run_db(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = db_cli.db_main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_a2a_db_upgrade_creates_then_is_idempotent(url: str, schema: str) -> None:
    assert run_db("version", url, "--schema", schema) == (0, f"schema {schema}: version 0\n", "")
    assert run_db("upgrade", f"{url}?schema={schema}") == (
        0, f"schema {schema}: created at version {SCHEMA_VERSION}\n", "")
    tables = sql(url, "SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY 1",
                 (schema,))
    assert [t for (t,) in tables] == ["a2a_events", "a2a_leases", "a2a_outbox", "a2a_parts",
                                      "a2a_push_configs", "a2a_schema_version",
                                      "a2a_task_messages", "a2a_tasks"]
    store = PostgresTaskStore(url, schema=schema, upgrade=False)
    store.save(task(), expected_version=None, events=[status(TaskState.WORKING)])
    store.close()
    assert run_db("upgrade", url, "--schema", schema) == (
        0, f"schema {schema}: already at version {SCHEMA_VERSION}\n", "")
    assert sql(url, f'SELECT count(*) FROM "{schema}".a2a_schema_version') == [(1,)]
    assert sql(url, f'SELECT count(*) FROM "{schema}".a2a_events') == [(1,)]  # data kept


def test_the_a2a_command_delegates_db(url: str, schema: str) -> None:
    argv = [sys.executable, "-c", "import sys; from a2a_client.cli import main; sys.exit(main())",
            "db", "upgrade", schema_url(schema)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"schema {schema}: created at version {SCHEMA_VERSION}\n"
    assert schema_version(url, schema=schema) == SCHEMA_VERSION


def test_a2a_db_reports_failures_with_exit_codes(schema: str) -> None:
    code, out, err = run_db("upgrade", "postgresql://nobody@127.0.0.1:1/none")
    assert (code, out) == (1, "") and "a2a db:" in err
    assert run_db("upgrade", "mysql://x")[0] == 2
    assert run_db("upgrade", f"{postgres_url()}?schema=bad-name")[0] == 1
    assert run_db("frobnicate", postgres_url())[0] == 2


def test_concurrent_upgrades_from_many_hosts_all_succeed_once(url: str, schema: str) -> None:
    results: list[tuple[int, int]] = []
    errors: list[BaseException] = []

    def upgrade() -> None:
        try:
            results.append(upgrade_schema(url, schema=schema))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=upgrade) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert sorted(results) == [(0, SCHEMA_VERSION)] + [(SCHEMA_VERSION, SCHEMA_VERSION)] * 5


def test_a_version_1_schema_is_upgraded_to_record_creating_messages(
        url: str, schema: str, stores: list[Any]) -> None:
    upgrade_schema(url, schema=schema)
    sql(url, f'DROP TABLE "{schema}".a2a_task_messages')  # as version 1 left it
    sql(url, f'DROP TABLE "{schema}".a2a_parts')
    sql(url, f'UPDATE "{schema}".a2a_schema_version SET version = 1')
    stores.append(PostgresTaskStore(url, schema=schema))
    assert schema_version(url, schema=schema) == SCHEMA_VERSION == 5
    stores[0].save(task(), expected_version=None, message_id="m1", fingerprint=FP)
    assert stores[0].find_by_message("m1", fingerprint=FP) == task()
    assert upgrade_schema(url, schema=schema) == (5, 5)


#: The message table as schema version 2 made it, before fingerprints ({s}: the schema).
_V2_MESSAGES = (
    """CREATE TABLE {s}.a2a_task_messages (
        scope text COLLATE "C" NOT NULL,
        message_id text COLLATE "C" NOT NULL,
        task_id text COLLATE "C" NOT NULL,
        PRIMARY KEY (scope, message_id))""",
    "CREATE INDEX a2a_task_messages_task ON {s}.a2a_task_messages (task_id)",
)


def test_a_version_2_schema_is_upgraded_and_its_claims_never_match(
        url: str, schema: str, stores: list[Any]) -> None:
    """Claims made before fingerprints match no request: a retry after the upgrade is new."""
    upgrade_schema(url, schema=schema)
    old = PostgresTaskStore(url, schema=schema)
    old.save(task("old"), expected_version=None, owner="alice")
    old.close()
    quoted = f'"{schema}"'
    sql(url, f"DROP TABLE {quoted}.a2a_task_messages")  # back to version 2, with a claim
    sql(url, f"DROP TABLE {quoted}.a2a_parts")
    for statement in _V2_MESSAGES:
        sql(url, statement.replace("{s}", quoted))
    sql(url, f"INSERT INTO {quoted}.a2a_task_messages VALUES (%s, 'm1', 'old')",
        ('["alice", null]',))
    sql(url, f"UPDATE {quoted}.a2a_schema_version SET version = 2")
    assert run_db("upgrade", url, "--schema", schema) == (
        0, f"schema {schema}: upgraded from version 2 to 5\n", "")
    assert sql(url, f"SELECT scope, message_id, fingerprint, task_id "
                    f"FROM {quoted}.a2a_task_messages") == [
        ('["alice", null]', "m1", LEGACY_FINGERPRINT, "old")]
    stores.append(PostgresTaskStore(url, schema=schema, upgrade=False))
    store = stores[0]
    assert store.get("old", owner="alice") == task("old")
    assert store.find_by_message("m1", fingerprint=FP, owner="alice") is None
    store.save(task("new"), expected_version=None, owner="alice", message_id="m1",
               fingerprint=FP)
    assert store.find_by_message("m1", fingerprint=FP, owner="alice") == task("new")
    with pytest.raises(DuplicateMessageError) as raised:
        store.save(task("newer"), expected_version=None, owner="alice", message_id="m1",
                   fingerprint=FP)
    assert raised.value.task_id == "new"
    # The key is (scope, message id, fingerprint) and new rows must name a fingerprint.
    with pytest.raises(psycopg.errors.NotNullViolation):
        sql(url, f"INSERT INTO {quoted}.a2a_task_messages (scope, message_id, task_id) "
                 "VALUES ('x', 'y', 'z')")
    assert run_db("upgrade", url, "--schema", schema) == (
        0, f"schema {schema}: already at version 5\n", "")


def test_a_schema_at_another_version_is_a_clear_error(url: str, schema: str) -> None:
    with pytest.raises(SchemaVersionError, match="a2a db upgrade"):
        PostgresTaskStore(url, schema=schema, upgrade=False)
    upgrade_schema(url, schema=schema)
    sql(url, f'UPDATE "{schema}".a2a_schema_version SET version = %s', (SCHEMA_VERSION + 1,))
    with pytest.raises(SchemaVersionError, match="newer"):
        PostgresTaskStore(url, schema=schema)
    assert schema_version(url, schema=schema) == SCHEMA_VERSION + 1


def test_schema_comes_from_the_url_and_open_store_accepts_it(url: str, schema: str,
                                                             stores: list[Any]) -> None:
    assert split_schema(f"{url}?schema={schema}&sslmode=disable") == (
        f"{url}?sslmode=disable", schema)
    assert split_schema("host=/tmp dbname=x") == ("host=/tmp dbname=x", None)
    store = open_store(f"{url}?schema={schema}", max_events=5)
    stores.append(store)
    assert isinstance(store, PostgresTaskStore) and store.schema == schema
    store.save(task(), expected_version=None)
    assert sql(url, f'SELECT id FROM "{schema}".a2a_tasks') == [("t1",)]
    with pytest.raises(ValueError, match="schema name"):
        PostgresTaskStore(url, schema='x"; DROP TABLE y; --')


# -- values PostgreSQL treats differently from Python ------------------------------------------


_KEYS = st.text(st.sampled_from("a\\0\x00\u00e9_"), max_size=5)


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(task_id=_KEYS.map(lambda k: "t" + k), owner=st.none() | _KEYS, tenant=st.none() | _KEYS)
def test_keys_the_database_would_refuse_round_trip(outbox_schema: str, task_id: str,
                                                   owner: str | None,
                                                   tenant: str | None) -> None:
    """PostgreSQL text cannot hold NUL; callers' ids, owners and tenants still may."""
    url = postgres_url()
    empty_schema(outbox_schema)
    store = PostgresTaskStore(url, schema=outbox_schema)
    try:
        odd = replace(task(task_id, state=TaskState.FAILED, text="nul \x00 \\0 \U0001f600"),
                      context_id=task_id)
        store.save(odd, expected_version=None, owner=owner, tenant=tenant,
                   events=[status(TaskState.FAILED, task_id)],
                   outbox=[OutboxEntry(task_id=task_id, config_id=task_id, seq=1,
                                       url=f"https://h.example/{task_id}")])
        assert store.get(task_id, owner=owner, tenant=tenant) == odd
        assert store.list(owner=owner, tenant=tenant, context_id=task_id) == ([odd], 1)
        assert store.finished_among([task_id]) == {task_id: TaskState.FAILED}
        assert [seq for seq, _ in store.wait_for_events(task_id, 0, 1)] == [1]
        (claimed,) = store.claim_deliveries(T0, 5, task_id, 30)
        assert claimed.entry.task_id == claimed.entry.config_id == task_id
        store.retry_delivery(claimed.id, T0, f"error {task_id}")
        assert store.claim_deliveries(T0, 5, "w", 30)[0].last_error == f"error {task_id}"
        assert store.acquire_lease(task_id, task_id, T0, now=T0, owner=owner, tenant=tenant)
        (lease,) = store.expired_leases(T0)
        assert (lease.task_id, lease.worker_id, lease.owner, lease.tenant) == (
            task_id, task_id, owner, tenant)
        assert store.renew_leases(task_id, [task_id], T0) == {task_id}
        if owner is not None and "\x00" in owner:  # NUL escapes to \0: still distinct
            assert store.get(task_id, owner=owner.replace("\x00", "\\0"), tenant=tenant) is None
    finally:
        store.close()


def test_listing_orders_ids_by_code_point_like_python(url: str, schema: str,
                                                      stores: list[Any]) -> None:
    store = PostgresTaskStore(url, schema=schema)
    stores.append(store)
    ids = ["a", "B", "b", "_x", "Z", "a-1", "a1", "é", "A"]
    for task_id in ids:
        store.save(task(task_id), expected_version=None)
    listed, total = store.list()
    assert [t.id for t in listed] == sorted(ids, reverse=True) and total == len(ids)
    page, _ = store.list(after=(T0, "a"), limit=3)
    assert [t.id for t in page] == [i for i in sorted(ids, reverse=True) if i < "a"][:3]


# -- LISTEN/NOTIFY -----------------------------------------------------------------------------


def test_notify_wakes_a_waiter_on_another_handle_long_before_the_poll(
        url: str, schema: str, stores: list[Any]) -> None:
    reader = PostgresTaskStore(url, schema=schema, poll_interval=30)
    writer = PostgresTaskStore(url, schema=schema)
    stores += [reader, writer]
    writer.save(task(), expected_version=None)
    assert reader.wait_for_events("t1", 0, 0.05) == []  # the listener is up now
    for version in range(1, 4):
        timer = threading.Timer(0.05, writer.save, args=(task(),),
                                kwargs={"expected_version": version,
                                        "events": [status(TaskState.WORKING)]})
        started = time.monotonic()
        timer.start()
        got = reader.wait_for_events("t1", version - 1, 10)
        timer.join()
        assert [seq for seq, _ in got] == [version]
        assert time.monotonic() - started < 2, "woken by the poll, not by NOTIFY"


def test_a_write_without_notify_is_found_by_the_poll(url: str, schema: str,
                                                     stores: list[Any]) -> None:
    store = PostgresTaskStore(url, schema=schema, poll_interval=0.2)
    stores.append(store)
    store.save(task(), expected_version=None)

    def sneak_in() -> None:  # what a lost notification looks like to a waiter
        time.sleep(0.3)
        with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
            conn.execute(f'UPDATE "{schema}".a2a_tasks SET event_seq = 1')
            conn.execute(f'INSERT INTO "{schema}".a2a_events VALUES (%s, 1, %s)',
                         ("t1", codec.dump_event(status(TaskState.COMPLETED))))

    thread = threading.Thread(target=sneak_in)
    thread.start()
    started = time.monotonic()
    got = store.wait_for_events("t1", 0, 10)
    thread.join()
    assert [seq for seq, _ in got] == [1] and time.monotonic() - started < 2


def test_streams_survive_the_listener_connection_being_killed(url: str, schema: str,
                                                              stores: list[Any]) -> None:
    reader = PostgresTaskStore(url, schema=schema, poll_interval=30)
    writer = PostgresTaskStore(url, schema=schema)
    stores += [reader, writer]
    writer.save(task(), expected_version=None)
    reader.wait_for_events("t1", 0, 0.05)
    killed = sql(url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                      "WHERE query = %s", (f'LISTEN "{reader.channel}"',))
    assert killed == [(True,)]
    deadline = time.monotonic() + 10  # the listener reconnects (backoff from 0.1 s)
    while not sql(url, "SELECT 1 FROM pg_stat_activity WHERE query = %s",
                  (f'LISTEN "{reader.channel}"',)):
        assert time.monotonic() < deadline, "the listener never came back"
        time.sleep(0.05)
    timer = threading.Timer(0.05, writer.save, args=(task(),),
                            kwargs={"expected_version": 1, "events": [status(TaskState.WORKING)]})
    started = time.monotonic()
    timer.start()
    got = reader.wait_for_events("t1", 0, 10)
    timer.join()
    assert [seq for seq, _ in got] == [1] and time.monotonic() - started < 2


# -- connections ------------------------------------------------------------------------------


def test_pooled_connections_killed_by_the_server_are_replaced(url: str, schema: str,
                                                              stores: list[Any]) -> None:
    store = PostgresTaskStore(url, schema=schema, application_name=schema)
    stores.append(store)
    store.save(task(), expected_version=None)
    mine = sql(url, "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (schema,))
    assert mine
    for (pid,) in mine:
        sql(url, "SELECT pg_terminate_backend(%s)", (pid,))
    assert store.get("t1") is not None  # a read retries once on a fresh connection
    assert store.save(task(), expected_version=1) == 2


def test_a_forked_child_opens_its_own_connections(url: str, schema: str,
                                                  stores: list[Any]) -> None:
    store = PostgresTaskStore(url, schema=schema, application_name=schema)
    stores.append(store)
    store.save(task(), expected_version=None)
    assert store.wait_for_events("t1", 0, 0.01) == []  # parent has a pool and a listener

    def backends() -> list[tuple[Any, ...]]:
        return sql(url, "SELECT pid FROM pg_stat_activity WHERE application_name = %s "
                        "ORDER BY pid", (schema,))

    before = backends()
    pid = os.fork()
    if pid == 0:  # the child: use the store, exit without running pytest's teardown
        code = 1
        try:
            stored = store.load("t1")
            if stored is not None:
                store.save(replace(stored.task, metadata={"by": "child"}),
                           expected_version=stored.version, events=[status(TaskState.WORKING)])
                code = 0
            for conn in pg_pool.INHERITED:  # what finalizers at a normal exit would do
                conn.close()
        finally:
            os._exit(code)
    _, exit_status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(exit_status) == 0
    # The parent's sessions (pool and listener) outlived the child, and the child's own
    # sessions end (their backends may take a moment to notice it has gone, under load);
    # a write, which is never retried, goes through on a pooled connection.
    deadline = time.monotonic() + 10
    while (now := backends()) != before and time.monotonic() < deadline:
        assert set(before) <= set(now)
        time.sleep(0.05)
    assert now == before
    assert store.save(task(), expected_version=2, events=[status(TaskState.COMPLETED)]) == 3
    assert [seq for seq, _ in store.events_after("t1", 0)] == [1, 2]
    stored = store.load("t1")
    assert stored is not None and stored.task == task()


# -- the outbox against the in-memory model ------------------------------------------------------

_OPS = st.lists(st.one_of(
    st.tuples(st.just("queue"), st.sampled_from(["t1", "t2"]), st.sampled_from(["a", "b"])),
    st.tuples(st.just("claim"), st.integers(1, 3), st.integers(0, 4)),
    st.tuples(st.sampled_from(["complete", "retry", "abandon"]), st.integers(0, 5),
              st.integers(0, 3)),
), min_size=1, max_size=14)


@pytest.fixture(scope="module")
def outbox_schema() -> Iterator[str]:
    postgres_url()
    with temporary_schema() as name:
        upgrade_schema(postgres_url(), schema=name)
        yield name


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_OPS)
def test_outbox_claims_match_the_in_memory_model(outbox_schema: str, ops: list[Any]) -> None:
    """Queue/claim/complete/retry/abandon in any order: PostgreSQL hands out what memory does."""
    url = postgres_url()
    empty_schema(outbox_schema)
    real = PostgresTaskStore(url, schema=outbox_schema)
    model = MemoryTaskStore()
    try:
        ids: dict[int, int] = {}  # model delivery id -> real delivery id
        claimed: list[int] = []
        versions: dict[str, int] = {}
        seqs = {("t1", "a"): 0, ("t1", "b"): 0, ("t2", "a"): 0, ("t2", "b"): 0}
        for op in ops:
            now = T0 + timedelta(seconds=10 * len(claimed))
            if op[0] == "queue":
                seqs[op[1], op[2]] += 1
                entry = OutboxEntry(task_id=op[1], config_id=op[2], seq=seqs[op[1], op[2]],
                                    url="https://h.example/", body=b"x")
                version = versions.get(op[1])
                for store in (real, model):
                    versions[op[1]] = store.save(task(op[1]), expected_version=version,
                                                 outbox=[entry])
            elif op[0] == "claim":
                later = now + timedelta(seconds=op[2])
                got_model = model.claim_deliveries(later, op[1], "w", 5)
                got_real = real.claim_deliveries(later, op[1], "w", 5)
                assert [(d.entry, d.attempts, d.last_error) for d in got_real] == \
                    [(d.entry, d.attempts, d.last_error) for d in got_model]
                for m, r in zip(got_model, got_real, strict=True):
                    ids[m.id] = r.id
                    claimed.append(m.id)
            elif claimed:
                target = claimed[op[1] % len(claimed)]
                for store, number in ((model, target), (real, ids[target])):
                    if op[0] == "complete":
                        store.complete_delivery(number)
                    elif op[0] == "retry":
                        store.retry_delivery(number, now + timedelta(seconds=op[2]), "503")
                    else:
                        store.abandon_delivery(number, "gone")
        for task_id in ("t1", "t2"):
            assert real.pending_deliveries(task_id) == model.pending_deliveries(task_id)
    finally:
        real.close()



def test_one_save_of_more_events_than_the_log_keeps_trims_like_memory(
        url: str, schema: str, stores: list[Any]) -> None:
    real = PostgresTaskStore(url, schema=schema, max_events=3)
    stores.append(real)
    model = MemoryTaskStore(max_events=3)
    burst = [status(TaskState.WORKING)] * 5
    for store in (real, model):
        store.save(task(), expected_version=None, events=burst[:2])
        store.save(task(), expected_version=1, events=burst)
    assert real.events_after("t1", 4) == model.events_after("t1", 4)
    assert [seq for seq, _ in real.events_after("t1", 4)] == [5, 6, 7]
    for store in (real, model):
        with pytest.raises(EventsExpiredError) as caught:
            store.events_after("t1", 3)
        assert caught.value.floor == 4
    assert sql(url, f'SELECT min(seq), count(*) FROM "{schema}".a2a_events') == [(5, 3)]


# -- what docs/deployment.md promises about connections and settings ---------------------------


def sessions(url: str, name: str) -> list[tuple[Any, ...]]:
    return sql(url, "SELECT state, query FROM pg_stat_activity WHERE application_name = %s",
               (name,))


def test_a_process_keeps_at_most_max_idle_connections_plus_one_listener(
        url: str, schema: str, stores: list[Any]) -> None:
    store = PostgresTaskStore(url, schema=schema, max_idle=2, application_name=schema)
    stores.append(store)
    store.save(task(), expected_version=None)
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def bump() -> None:  # 8 threads at once: 8 connections in use, 6 closed afterwards
        try:
            barrier.wait(timeout=10)
            for _ in range(5):
                while True:
                    stored = store.load("t1")
                    assert stored is not None
                    try:
                        store.save(task(), expected_version=stored.version)
                        break
                    except ConflictError:
                        continue
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=bump) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    stored = store.load("t1")
    assert stored is not None and stored.version == 1 + 8 * 5  # no lost write
    assert len(sessions(url, schema)) <= 2
    assert not [q for _, q in sessions(url, schema) if q.startswith("LISTEN")]
    store.wait_for_events("t1", 0, 0.01)  # the first waiting stream starts the listener
    listening = [q for _, q in sessions(url, schema) if q == f'LISTEN "{store.channel}"']
    assert listening and len(sessions(url, schema)) <= 3
    store.close()
    deadline = time.monotonic() + 5
    while sessions(url, schema):
        assert time.monotonic() < deadline, "close() left sessions open"
        time.sleep(0.02)


def test_url_options_reach_the_stores_connections(url: str, schema: str, stores: list[Any]) -> None:
    """``?options=-c synchronous_commit=off`` (percent-encoded) survives ``?schema=``."""
    assert split_schema("postgresql://h/db?options=-c%20a%3Db&schema=s&x=%2B") == (
        "postgresql://h/db?options=-c%20a%3Db&x=%2B", "s")
    store = PostgresTaskStore(
        f"{url}?options=-c%20synchronous_commit%3Doff&schema={schema}&application_name={schema}")
    stores.append(store)
    assert store.schema == schema
    store.save(task(), expected_version=None, events=[status(TaskState.WORKING)])
    assert store.wait_for_events("t1", 0, 1)  # the listener connected with them too
    assert len(sessions(url, schema)) == 2
    with store._pool.connection() as conn:
        row = conn.execute("SHOW synchronous_commit").fetchone()
    assert row == ("off",)


@pytest.mark.parametrize("threshold", [None, 0, 5])
def test_statements_are_prepared_on_the_server_as_configured(
        url: str, schema: str, stores: list[Any], threshold: int | None) -> None:
    store = PostgresTaskStore(url, schema=schema, prepare_threshold=threshold)
    stores.append(store)
    version = store.save(task(), expected_version=None)
    for _ in range(6):  # one thread: every statement runs on the one pooled connection
        version = store.save(task(), expected_version=version, events=[status(TaskState.WORKING)])
        assert store.load("t1") is not None
    with store._pool.connection() as conn:
        prepared = conn.execute("SELECT statement FROM pg_prepared_statements").fetchall()
    texts = " ".join(text for (text,) in prepared)
    if threshold is None:
        assert prepared == []
    else:
        assert "a2a_tasks" in texts and "a2a_events" in texts and f'"{schema}"' in texts


# -- dropped sessions and a silent database ----------------------------------------------------


def _warm(store: PostgresTaskStore, n: int) -> None:
    """Leave ``n`` idle connections in the pool (n borrows held at once)."""
    from contextlib import ExitStack

    with ExitStack() as held:
        for _ in range(n):
            held.enter_context(store._pool.connection())


def _terminate(url: str, name: str) -> int:
    """End every session named ``name``; returns once they are gone (PostgreSQL 14+)."""
    ended = sql(url, "SELECT count(*) FROM (SELECT pg_terminate_backend(pid, 5000) "
                     "FROM pg_stat_activity WHERE application_name = %s) t", (name,))
    return int(ended[0][0])


def test_every_write_after_sessions_end_succeeds_and_dead_idle_ones_are_all_dropped(
        url: str, schema: str, stores: list[Any]) -> None:
    store = PostgresTaskStore(url, schema=schema, application_name=schema, max_idle=4)
    stores.append(store)
    version = store.save(task(), expected_version=None)
    _warm(store, 4)
    idle = list(store._pool._idle)
    assert len(idle) == 4 and all(pg_pool.looks_alive(conn) for conn in idle)
    assert _terminate(url, schema) == 4
    assert not any(pg_pool.looks_alive(conn) for conn in idle)  # the goodbye is readable
    started = time.monotonic()
    for _ in range(4):  # writes are never retried: each must get a live connection
        version = store.save(task(), expected_version=version)
    assert time.monotonic() - started < 1
    assert all(conn.closed for conn in idle)  # the first dead one took its siblings along
    assert version == 5 and len(sessions(url, schema)) == 1


def test_an_idle_connection_that_is_alive_is_lent_again(url: str, schema: str,
                                                        stores: list[Any]) -> None:
    store = PostgresTaskStore(url, schema=schema, application_name=schema)
    stores.append(store)
    with store._pool.connection() as first:
        pid = first.info.backend_pid
    with store._pool.connection() as again:
        assert again is first and again.info.backend_pid == pid


def test_connections_get_keepalives_and_the_statement_timeout(url: str, schema: str,
                                                              stores: list[Any]) -> None:
    store = PostgresTaskStore(f"{url}?keepalives_idle=7", schema=schema, statement_timeout=1.5)
    unbounded = PostgresTaskStore(url, schema=schema, statement_timeout=None)
    stores += [store, unbounded]
    with store._pool.connection() as conn:
        assert conn.execute("SHOW statement_timeout").fetchone() == ("1500ms",)
        params = conn.info.get_parameters()
    assert params["keepalives_idle"] == "7"  # the URL's own value wins
    expected = {k: str(v) for k, v in TCP_OPTIONS.items() if k != "keepalives_idle"}
    assert {k: params.get(k) for k in expected} == expected
    with unbounded._pool.connection() as conn:
        assert conn.execute("SHOW statement_timeout").fetchone() == ("0",)
    with pytest.raises(ValueError):
        PostgresTaskStore(url, schema=schema, statement_timeout=0)


def test_the_server_cancels_a_statement_past_statement_timeout(url: str, schema: str,
                                                               stores: list[Any]) -> None:
    store = PostgresTaskStore(url, schema=schema, statement_timeout=0.2)
    stores.append(store)
    started = time.monotonic()
    with pytest.raises(psycopg.errors.QueryCanceled), store._pool.connection() as conn:
        conn.execute("SELECT pg_sleep(3)")
    assert time.monotonic() - started < 1.5  # the server's answer, well before the cut
    assert store.save(task(), expected_version=None) == 1


def test_a_call_the_database_leaves_unanswered_is_cut_at_the_deadline(url: str,
                                                                      schema: str) -> None:
    """The server is made to say nothing (its own timeout off); the watchdog cuts the
    connection at the pool's deadline and a read is not retried after that."""
    name = f"{schema}_silent"
    pool = pg_pool.Pool(lambda: psycopg.connect(url, autocommit=True, application_name=name),
                        max_idle=2, deadline=0.4)
    try:
        started = time.monotonic()
        with pytest.raises(pg_pool.DatabaseTimeout):
            pool.read("SELECT pg_sleep(5)")
        took = time.monotonic() - started
        assert 0.35 < took < 1.2, took  # once, not twice: no retry after a timeout
        assert pool.read("SELECT 1") == [(1,)]  # a fresh connection serves the next call
        with pool.connection(statements=3) as conn:  # a bound per statement of the borrow
            conn.execute("SELECT pg_sleep(0.5)")
        with pool.connection(statements=None) as conn:  # unbounded (schema upgrades)
            conn.execute("SELECT pg_sleep(0.5)")
    finally:
        pool.close()
        _terminate(url, name)


def test_the_watchdog_cuts_only_overdue_borrows() -> None:
    import socket

    from a2a_wsgi.stores._postgres.watchdog import WATCHDOG

    ours, theirs = socket.socketpair()
    with ours, theirs:
        token = WATCHDOG.arm(ours.fileno(), 5)
        assert WATCHDOG.disarm(token) is False
        ours.sendall(b"x")  # untouched
        assert theirs.recv(1) == b"x"
        ours.settimeout(3)
        started = time.monotonic()
        token = WATCHDOG.arm(ours.fileno(), 0.1)
        assert ours.recv(1) == b""  # a blocked reader wakes at the deadline
        assert 0.05 < time.monotonic() - started < 1
        assert WATCHDOG.disarm(token) is True


def test_an_upgrade_waiting_on_another_host_is_not_cut_by_statement_timeout(
        url: str, schema: str, stores: list[Any]) -> None:
    lock = f"a2a_wsgi schema {schema}"
    with psycopg.connect(url, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(hashtext(%s))", (lock,))  # "another host"
        threading.Timer(0.8, other.execute, args=(
            "SELECT pg_advisory_unlock(hashtext(%s))", (lock,))).start()
        started = time.monotonic()
        store = PostgresTaskStore(url, schema=schema, statement_timeout=0.2)
        stores.append(store)
        assert time.monotonic() - started > 0.6
    assert store.save(task(), expected_version=None) == 1
