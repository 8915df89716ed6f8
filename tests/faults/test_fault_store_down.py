"""F10: the task store goes away and comes back.

SQLite: another connection holds ``BEGIN EXCLUSIVE``. PostgreSQL: the store talks
to the database through a TCP relay the test takes down (connections reset, new
ones refused) and brings back; and, separately, its sessions are ended with
``pg_terminate_backend`` (what a database restart or failover does to a pool).

While the store is down every call must answer within a bounded time: a
JSON-RPC -32603 whose text names no path, DSN or SQL. Once it is back the
server must serve again without a restart.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
import requests
from fault_support import build_app, proxy_to, rpc
from support.a2a_http import served
from support.postgres import drop_schema, postgres_url, unique_schema

from a2a_wsgi.stores import SQLiteTaskStore

BUSY = 1.0  # the SQLite store's busy_timeout in these tests
#: Words that would show a store's internals to a caller.
LEAKS = ("sqlite", "SELECT", "INSERT", "UPDATE", "BEGIN", "locked", "psycopg", "postgres",
         "Traceback", "a2a_tasks", "127.0.0.1:")


def _message(text: str) -> dict[str, Any]:
    return {"message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER",
                        "parts": [{"text": text}]}}


def _stream(url: str, params: Any) -> tuple[str, float]:
    """A SendStreamingMessage read to its end; the raw body and how long it took."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": params}
    started = time.monotonic()
    response = requests.post(url, json=body, timeout=10,
                             headers={"A2A-Version": "1.0", "Accept": "text/event-stream"})
    return response.text, time.monotonic() - started


def _assert_store_error(raw: str, elapsed: float, bound: float, *secrets: str) -> None:
    """-32603 within ``bound`` seconds, telling the caller nothing about the store."""
    assert elapsed <= bound, f"answered after {elapsed:.2f}s: {raw[:300]}"
    assert '"code": -32603' in raw or '"code":-32603' in raw, raw[:500]
    for word in (*LEAKS, *secrets):
        assert word not in raw, f"{word!r} leaked: {raw[:500]}"


def _recovers(url: str, within: float) -> float:
    """Seconds until a blocking send completes again (fails after ``within``)."""
    started = time.monotonic()
    while True:
        answer, _ = rpc(url, "SendMessage", _message("back"))
        if "result" in answer:
            assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            return time.monotonic() - started
        assert time.monotonic() - started < within, answer
        time.sleep(0.1)


# -- SQLite: another connection holds the write lock ------------------------------------


@pytest.fixture
def sqlite_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    path = tmp_path / "locked.sqlite3"
    with served(build_app(SQLiteTaskStore(path, busy_timeout=BUSY))) as handle:
        yield handle.url + "/", path


def test_sqlite_held_exclusive_answers_32603_in_time_and_recovers(
        sqlite_server: tuple[str, Path]) -> None:
    url, path = sqlite_server
    before, _ = rpc(url, "SendMessage", _message("before"))
    task_id = before["result"]["task"]["id"]
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        answer, took = rpc(url, "SendMessage", _message("during"))
        _assert_store_error(json.dumps(answer), took, BUSY + 1, str(path), path.name)
        raw, took = _stream(url, _message("during stream"))
        _assert_store_error(raw, took, BUSY + 1, str(path), path.name)
        answer, took = rpc(url, "CancelTask", {"id": task_id})  # a write on an existing task
        assert took <= BUSY + 1
        assert answer.get("error", {}).get("code") in (-32603, -32002), answer
        got, took = rpc(url, "GetTask", {"id": task_id})  # WAL: readers are not blocked
        assert took <= BUSY + 1 and got["result"]["id"] == task_id, got
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert _recovers(url, within=5) < 5
    listed, _ = rpc(url, "ListTasks", {})
    # Nothing half-written: the refused sends left no task behind.
    assert [t["id"] for t in listed["result"]["tasks"]][-1] == task_id
    assert len(listed["result"]["tasks"]) == 2


# -- PostgreSQL: the database goes away ---------------------------------------------------


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A served app whose PostgresTaskStore reaches the database through a TcpProxy."""
    from a2a_wsgi.stores._postgres import PostgresTaskStore

    real = urlsplit(postgres_url())
    schema, name = unique_schema(), f"a2a-fault-{uuid.uuid4().hex[:8]}"
    with proxy_to(real.hostname or "127.0.0.1", real.port or 5432) as proxy:
        netloc = f"{real.username}@127.0.0.1:{proxy.port}"
        dsn = urlunsplit((real.scheme, netloc, real.path, "", ""))
        # A short statement_timeout: with the default (30 s) a silent database is only
        # given up on after 32 s, since a statement may legitimately run that long.
        store = PostgresTaskStore(dsn, schema=schema, connect_timeout=2, statement_timeout=1,
                                  application_name=name)
        try:
            with served(build_app(store)) as handle:
                yield {"url": handle.url + "/", "proxy": proxy, "dsn": dsn, "schema": schema,
                       "name": name}
        finally:
            store.close()
            drop_schema(schema)


def _warm_pool(url: str, calls: int = 6) -> None:
    """Several concurrent sends, so the pool keeps several idle connections."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(calls) as pool:
        answers = list(pool.map(lambda _: rpc(url, "SendMessage", _message("warm"))[0],
                                range(calls)))
    assert all("result" in a for a in answers), answers


@pytest.mark.postgres
def test_postgres_unreachable_answers_32603_in_time_and_recovers(pg: dict[str, Any]) -> None:
    url, proxy = pg["url"], pg["proxy"]
    _warm_pool(url)
    proxy.down()
    secrets = (pg["dsn"], str(proxy.port), pg["schema"])
    answer, took = rpc(url, "SendMessage", _message("during"))
    _assert_store_error(json.dumps(answer), took, 3, *secrets)
    answer, took = rpc(url, "GetTask", {"id": "tsk-anything"})
    _assert_store_error(json.dumps(answer), took, 3, *secrets)
    raw, took = _stream(url, _message("during stream"))
    _assert_store_error(raw, took, 3, *secrets)
    proxy.up()
    assert _recovers(url, within=5) < 5


@pytest.mark.postgres
def test_postgres_back_up_serves_the_very_next_call(pg: dict[str, Any]) -> None:
    url, proxy = pg["url"], pg["proxy"]
    _warm_pool(url)
    proxy.down()
    proxy.up()  # a blip: the database is back before the next call
    answers = [rpc(url, "SendMessage", _message("after"))[0] for _ in range(4)]
    assert all("result" in a for a in answers), [a.get("error") for a in answers]


@pytest.mark.postgres
def test_postgres_sessions_terminated_the_next_calls_still_succeed(pg: dict[str, Any]) -> None:
    import psycopg

    url = pg["url"]
    _warm_pool(url)
    # pg_terminate_backend(pid, 5000) returns once each session has ended (PostgreSQL 14+),
    # as a restart has before the database answers again. Without the wait a call can
    # race a termination still in flight: its statement and the server's goodbye cross,
    # and that write cannot be retried safely (it may have committed).
    with psycopg.connect(postgres_url(), autocommit=True) as admin:
        ended = admin.execute("SELECT count(*) FROM (SELECT pg_terminate_backend(pid, 5000) "
                              "FROM pg_stat_activity WHERE application_name = %s) t",
                              (pg["name"],)).fetchone()
    assert ended is not None and ended[0] >= 2, ended
    answers = [rpc(url, "SendMessage", _message("after"))[0] for _ in range(4)]
    assert all("result" in a for a in answers), [a.get("error") for a in answers]


@pytest.mark.postgres
def test_postgres_that_stops_answering_still_gets_an_answer_in_time(pg: dict[str, Any]) -> None:
    url, proxy = pg["url"], pg["proxy"]
    _warm_pool(url)
    proxy.blackhole()
    started = time.monotonic()
    answer, took = rpc(url, "GetTask", {"id": "tsk-anything"}, timeout=6)
    _assert_store_error(json.dumps(answer), took, 6, pg["dsn"])
    assert time.monotonic() - started < 6
