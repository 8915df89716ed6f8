"""The database restarts while agents finish: their final saves die with AdminShutdown.

A PostgreSQL restart ends every session; ``pg_terminate_backend`` on this test's
own sessions does the same to them alone (other tests share the server). To be
sure the final saves are *in flight* when the sessions end, the test holds a
write lock on its schema's task table while the agents finish (reads go on), so their saves wait
on it; then it ends the sessions and lets go. The saves are retried and the
tasks complete; nothing stays WORKING and no message blames a lost worker.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fault_support import build_app, rpc
from support.a2a_http import served
from support.postgres import drop_schema, postgres_url, unique_schema

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

TASKS = 6


@pytest.fixture
def pg_app() -> Iterator[dict[str, Any]]:
    from a2a_wsgi.stores._postgres import PostgresTaskStore

    schema, name = unique_schema(), f"a2a-restart-{uuid.uuid4().hex[:8]}"
    store = PostgresTaskStore(postgres_url(), schema=schema, application_name=name)
    try:
        with served(build_app(store)) as handle:
            yield {"url": handle.url + "/", "schema": schema, "name": name}
    finally:
        store.close()
        drop_schema(schema)


def _waiting_on_lock(admin: Any, name: str) -> int:
    row = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s "
                        "AND wait_event_type = 'Lock'", (name,)).fetchone()
    return int(row[0])


def test_final_saves_cut_by_a_database_restart_are_retried_and_no_worker_is_blamed(
        pg_app: dict[str, Any]) -> None:
    import psycopg
    from psycopg import sql

    url, name = pg_app["url"], pg_app["name"]
    ids = []
    for n in range(TASKS):
        answer, _ = rpc(url, "SendMessage", {
            "message": {"messageId": f"m-{n}", "role": "ROLE_USER",
                        "parts": [{"text": "sleep:0.5"}]},
            "configuration": {"returnImmediately": True}})
        ids.append(answer["result"]["task"]["id"])
    holder = psycopg.connect(postgres_url())
    with psycopg.connect(postgres_url(), autocommit=True) as admin:
        try:
            holder.execute(sql.SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(
                sql.Identifier(pg_app["schema"], "a2a_tasks")))
            deadline = time.monotonic() + 10
            while _waiting_on_lock(admin, name) < 2:  # agents done, their saves blocked
                assert time.monotonic() < deadline, "no save ever waited on the lock"
                time.sleep(0.05)
            time.sleep(1.0)  # every agent (0.5 s) has finished and is saving by now
            ended = admin.execute(
                "SELECT count(*) FROM (SELECT pg_terminate_backend(pid, 5000) "
                "FROM pg_stat_activity WHERE application_name = %s) t", (name,)).fetchone()
            assert ended is not None and ended[0] >= 2, ended
        finally:
            holder.rollback()
            holder.close()
    deadline = time.monotonic() + 30
    while True:
        tasks = [rpc(url, "GetTask", {"id": task_id})[0]["result"] for task_id in ids]
        states = [task["status"]["state"] for task in tasks]
        if all(state in ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED") for state in states):
            break
        assert time.monotonic() < deadline, states
        time.sleep(0.2)
    for task in tasks:
        message = task["status"].get("message") or {}
        text = " ".join(part.get("text", "") for part in message.get("parts", []))
        assert "worker" not in text and "lease" not in text, text
    # The agents' results were in memory: retrying the saves kept every one of them.
    assert states == ["TASK_STATE_COMPLETED"] * TASKS, [t["status"] for t in tasks]
