"""Faults of the real work tier: a web-tier deploy (SIGTERM + restart, SIGHUP reload) while
runs are in flight, and a Celery worker killed with SIGKILL mid-run.

The deploy test's agent works 8 s, not the 40 s of the issue's trial, to keep CI short:
what matters is that every run outlives the web tier's stop, which 8 s shows as well.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery_support import Stack, need_broker, until

from a2a_client import A2AClient
from a2a_core.models import Task, TaskState, TextPart
from a2a_wsgi.runtime import LOST_WORKER_REASON

pytestmark = pytest.mark.celery

#: How many runs are in flight when the web tier goes away, and how long each works.
RUNS, WORK_MS = 20, 8000
#: The kill -9 test's lease: a dead worker's runs are recovered after at most this long.
LEASE = 6.0


def _send_all(url: str, text: str, count: int) -> list[str]:
    with A2AClient(url, version="1.0", binding="JSONRPC", timeout=30) as client:
        ids = []
        for _ in range(count):
            task = client.send_message(text, blocking=False)
            assert isinstance(task, Task)
            ids.append(task.id)
        return ids


def _states(url: str, ids: list[str]) -> dict[str, TaskState]:
    with A2AClient(url, version="1.0", binding="JSONRPC", timeout=30) as client:
        return {task_id: client.get_task(task_id).status.state for task_id in ids}


def _all_in(url: str, ids: list[str], *states: TaskState) -> bool:
    try:
        return all(state in states for state in _states(url, ids).values())
    except Exception:
        return False  # the web tier is restarting


@pytest.fixture()
def deploy_stack(tmp_path: Path) -> Iterator[Stack]:
    need_broker()
    # One worker process, a thread per run: 20 runs at once on 2 shared cores.
    stack = Stack(tmp_path, concurrency=RUNS, pool="threads")
    try:
        yield stack
    finally:
        stack.stop()


def test_a_web_tier_stop_and_restart_loses_no_run(deploy_stack: Stack) -> None:
    ids = _send_all(deploy_stack.url, f"slow {WORK_MS}", RUNS)
    assert until(lambda: _all_in(deploy_stack.url, ids, TaskState.WORKING), 20), \
        deploy_stack.logs()
    assert deploy_stack.web is not None
    deploy_stack.web.stop()  # SIGTERM to the whole web tier, as systemd does on a deploy
    deploy_stack.start_web()  # the new release, on the same port and store
    assert until(lambda: _all_in(deploy_stack.url, ids, TaskState.COMPLETED), 40), \
        (_states(deploy_stack.url, ids), deploy_stack.logs())


def test_a_web_tier_reload_loses_no_run(deploy_stack: Stack) -> None:
    ids = _send_all(deploy_stack.url, f"slow {WORK_MS}", RUNS)
    assert until(lambda: _all_in(deploy_stack.url, ids, TaskState.WORKING), 20)
    assert deploy_stack.web is not None
    deploy_stack.web.signal(signal.SIGHUP)  # gunicorn replaces every web worker
    assert until(lambda: _all_in(deploy_stack.url, ids, TaskState.COMPLETED), 40), \
        (_states(deploy_stack.url, ids), deploy_stack.logs())


@pytest.mark.parametrize("app, ends", [("examples.celery_agent", TaskState.FAILED),
                                       ("tests.celery.rerun_app", TaskState.COMPLETED)],
                         ids=["not-rerunnable-fails", "rerunnable-reruns"])
def test_a_worker_killed_mid_run(tmp_path: Path, app: str, ends: TaskState) -> None:
    """kill -9 of the worker and its pool: each run ends as its agent declares, within the
    lease plus 20 s (a new worker takes the re-runs), and runs once at a time."""
    need_broker()
    stack = Stack(tmp_path, app=app, concurrency=2,
                  extra_env={"A2A_LEASE_SECONDS": str(LEASE)})
    try:
        ids = _send_all(stack.url, "slow 3000", 2)
        assert until(lambda: _all_in(stack.url, ids, TaskState.WORKING), 20), stack.logs()
        stack.workers[0].kill()
        stack.add_worker()
        assert until(lambda: _all_in(stack.url, ids, ends), LEASE + 20), \
            (_states(stack.url, ids), stack.logs())
        with A2AClient(stack.url, version="1.0", binding="JSONRPC", timeout=30) as client:
            for task_id in ids:
                task = client.get_task(task_id)
                if ends is TaskState.FAILED:
                    assert task.status.message is not None
                    text = task.status.message.parts[0]
                    assert isinstance(text, TextPart) and LOST_WORKER_REASON in text.text
                else:  # one run's answer: the re-run never overlapped another
                    assert len(task.artifacts) == 1
                    assert sum(m.role.value == "agent" for m in task.history) == 1, task.history
    finally:
        stack.stop()
