"""kill -9 of a whole gunicorn (master and every worker) with acknowledged tasks, most still
queued in the agent pool; a restart with no new request settles every one of them.

Each task was leased in the save that acknowledged it, so a task that never
started is recovered like one that was running; and each restarted worker
starts reaping expired leases when it boots, not at its first run.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fault_support import LEASE_SECONDS, rpc, start_server
from support.gunicorn import WORKER_CLASSES
from support.postgres import drop_schema, schema_url, unique_schema

from a2a_core.models import TaskState
from a2a_wsgi._runtime import LOST_WORKER_REASON, UNSTARTED_REASON
from a2a_wsgi.stores import TaskStore, open_store

pytestmark = pytest.mark.slow

#: Acknowledged tasks at the kill; each takes AGENT_SECONDS, 16 agent threads in all run.
TASKS = 40
AGENT_SECONDS = 3
#: Every task is terminal this long after the restart began (the issue's bound).
SETTLE_WITHIN = LEASE_SECONDS + 20


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'tasks.sqlite3'}"
        return
    schema = unique_schema()
    try:
        yield schema_url(schema)
    finally:
        drop_schema(schema)


def _send(url: str, n: int) -> str:
    answer, _ = rpc(url, "SendMessage", {
        "message": {"messageId": f"m-{n}", "role": "ROLE_USER",
                    "parts": [{"text": f"sleep:{AGENT_SECONDS}"}]},
        "configuration": {"returnImmediately": True}})
    task = answer["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_SUBMITTED", answer
    return str(task["id"])


def _states(store: TaskStore, ids: list[str]) -> dict[str, Any]:
    tasks = {task_id: store.get(task_id) for task_id in ids}
    assert all(task is not None for task in tasks.values())
    return tasks


def _acknowledge_then_kill(store_spec: str, log: Path, worker_class: str, *,
                           rerun: bool = False) -> list[str]:
    """TASKS acknowledged sends, then SIGKILL to the master and every worker at once."""
    first = start_server(store_spec, log, workers=2, threads=16, worker_class=worker_class,
                         rerun=rerun)
    try:
        first.wait_ready()
        with ThreadPoolExecutor(8) as pool:
            ids = list(pool.map(lambda n: _send(first.url, n), range(TASKS)))
        time.sleep(0.5)  # some runs have started, the rest wait in the agent pools
        os.killpg(first.proc.pid, signal.SIGKILL)
        first.proc.wait(timeout=10)
    finally:
        first.stop()
    return ids


def _settled(store: TaskStore, ids: list[str], store_spec: str, tmp_path: Path,
             worker_class: str, *, rerun: bool = False) -> dict[str, Any]:
    """Restart (no request at all: its workers reap when they boot); every task, once all
    are terminal, which must happen within SETTLE_WITHIN."""
    restarted = time.monotonic()
    second = start_server(store_spec, tmp_path / "second.log", workers=2,
                          worker_class=worker_class, rerun=rerun)
    try:
        while True:
            now = _states(store, ids)
            left = [i for i, t in now.items() if not t.status.state.is_terminal]
            if not left:
                return now
            assert time.monotonic() - restarted < SETTLE_WITHIN, (
                f"{len(left)} tasks still not terminal, e.g. "
                f"{now[left[0]].status.state}\n{second.log()}")
            assert second.proc.poll() is None, second.log()
            time.sleep(0.2)
    finally:
        second.stop()


@pytest.mark.parametrize("worker_class", WORKER_CLASSES)
def test_every_acknowledged_task_settles_after_kill_9_of_every_process(
        worker_class: str, store_spec: str, tmp_path: Path) -> None:
    ids = _acknowledge_then_kill(store_spec, tmp_path / "first.log", worker_class)
    store = open_store(store_spec)
    try:
        at_kill = _states(store, ids)
        queued = {i for i, task in at_kill.items() if task.status.state is TaskState.SUBMITTED}
        working = {i for i, task in at_kill.items() if task.status.state is TaskState.WORKING}
        assert queued | working == set(ids), {t.status.state for t in at_kill.values()}
        if worker_class == "gthread":
            assert len(queued) >= TASKS // 2, f"only {len(queued)} tasks were queued"
        for task_id in ids:  # each was leased when it was acknowledged, queued or not
            assert store.get_lease(task_id) is not None, task_id

        now = _settled(store, ids, store_spec, tmp_path, worker_class)
        for task_id, task in now.items():
            assert task.status.state is TaskState.FAILED, task.status.state
            text = task.status.message.parts[0].text  # type: ignore[union-attr]
            expected = UNSTARTED_REASON if task_id in queued else LOST_WORKER_REASON
            assert text == f"Error: {expected}", (task_id in queued, text)
    finally:
        store.close()


def test_an_agent_safe_to_rerun_completes_every_task_after_kill_9(tmp_path: Path) -> None:
    """rerun_on_worker_loss: queued and running tasks alike are run again, from their message."""
    spec = f"sqlite:///{tmp_path / 'tasks.sqlite3'}"
    ids = _acknowledge_then_kill(spec, tmp_path / "first.log", "gthread", rerun=True)
    store = open_store(spec)
    try:
        now = _settled(store, ids, spec, tmp_path, "gthread", rerun=True)
    finally:
        store.close()
    assert {task.status.state for task in now.values()} == {TaskState.COMPLETED}
    for task in now.values():
        assert task.artifacts[0].parts[0].text == "slept"  # type: ignore[union-attr]
