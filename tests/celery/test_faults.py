"""Faults of the real work tier: a web-tier deploy (SIGTERM + restart, SIGHUP reload) while
runs are in flight, and a Celery worker killed with SIGKILL mid-run.

The deploy test is the issue's trial at its numbers (20 runs of a 40-s agent for each
fault), so it is marked slow; the two faults share one stack and overlap in time (the
runs sent before the restart live through the reload as well), so it takes about a
minute, not two.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from celery_support import Stack, need_broker, until

from a2a_client import A2AClient
from a2a_core.models import Task, TaskState, TextPart
from a2a_wsgi._runtime import LOST_WORKER_REASON

pytestmark = pytest.mark.celery

#: How many runs are in flight when the web tier goes away, and how long each works.
RUNS, WORK_MS = 20, 40_000
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


@pytest.mark.slow
def test_a_web_tier_stop_restart_and_reload_lose_no_run(tmp_path: Path) -> None:
    """20 runs in flight through a SIGTERM of the whole web tier and its start on the same
    port and store (a deploy), then 20 more sent to the new release, and a SIGHUP
    (gunicorn replaces every web worker) with all 40 in flight: all 40 complete."""
    need_broker()
    # One worker process, a thread per run: 40 sleeping runs at once on 2 shared cores.
    stack = Stack(tmp_path, concurrency=2 * RUNS, pool="threads")
    try:
        restarted = _send_all(stack.url, f"slow {WORK_MS}", RUNS)
        assert until(lambda: _all_in(stack.url, restarted, TaskState.WORKING), 20), \
            stack.logs()
        assert stack.web is not None
        old_master = stack.web.server.proc.pid
        stack.web.stop()  # SIGTERM to the whole web tier, as systemd does on a deploy
        stack.start_web()  # the new release, on the same port and store
        assert stack.web.server.proc.pid != old_master
        assert _all_in(stack.url, restarted, TaskState.WORKING)  # no run was touched
        reloaded = _send_all(stack.url, f"slow {WORK_MS}", RUNS)
        assert until(lambda: _all_in(stack.url, reloaded, TaskState.WORKING), 20), \
            stack.logs()
        stack.web.signal(signal.SIGHUP)
        assert until(lambda: "Hang up" in stack.web.server.log(), 10), stack.logs()
        assert until(lambda: _all_in(stack.url, restarted + reloaded, TaskState.COMPLETED),
                     WORK_MS / 1000 + 30), (_states(stack.url, restarted + reloaded),
                                            stack.logs())
        with A2AClient(stack.url, version="1.0", binding="JSONRPC", timeout=30) as client:
            for task_id in restarted + reloaded:  # one run each: one answer
                assert len(client.get_task(task_id).artifacts) == 1
    finally:
        stack.stop()


@pytest.mark.slow  # ~20 s each: the lease must expire
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
