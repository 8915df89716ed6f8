"""Tasks waiting for an agent thread are leased from the write that acknowledged them.

Two runtimes on one SQLite file stand for two workers. The first one's agent
pool is busy, so what it acknowledges waits in the queue: the lease is there at
once, renewed while the task waits (the second worker does not take it), and
when the first one stops without running it, the second fails it saying the task
never started.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from a2a_core._service import CallContext
from a2a_core.models import (
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskState,
    TextPart,
)
from a2a_wsgi import Agent, AgentContext, input_required, reply
from a2a_wsgi._runtime import UNSTARTED_REASON, Runtime
from a2a_wsgi.settings import RuntimeSettings
from a2a_wsgi.stores import SQLiteTaskStore

LEASE = 0.6
_ids = itertools.count()
CALL = CallContext(version="1.0")


class GatedAgent(Agent):
    """"block" holds its (only) agent thread until released; "ask" needs input;
    anything else replies."""

    name = "Gated"

    def __init__(self) -> None:
        self.release = threading.Event()

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        if message.text == "block":
            self.release.wait(30)
            return reply("released")
        if message.text == "ask":
            return input_required("more?")
        return reply("done")


@pytest.fixture
def two_workers(tmp_path: Path) -> Iterator[tuple[Runtime, Runtime, GatedAgent]]:
    agent = GatedAgent()
    made = [Runtime(agent, RuntimeSettings(max_workers=1, lease_seconds=LEASE, poll_interval=0.02),
                    store=SQLiteTaskStore(tmp_path / "tasks.db")) for _ in range(2)]
    try:
        yield made[0], made[1], agent
    finally:
        agent.release.set()
        for runtime in made:
            runtime.close(wait=True)
            runtime.store.close()


def _send(runtime: Runtime, text: str, *, task_id: str | None = None,
          blocking: bool = False) -> Task:
    message = Message(message_id=f"m-{next(_ids)}", role=Role.USER,
                      parts=(TextPart(text=text),), task_id=task_id)
    result = runtime.send_message(SendMessageRequest(
        message=message, configuration=SendMessageConfiguration(blocking=blocking)), CALL)
    assert isinstance(result, Task)
    return result


def _wait_state(runtime: Runtime, task_id: str, state: TaskState, within: float) -> Task:
    deadline = time.monotonic() + within
    while (task := runtime.get_task(task_id, CALL)).status.state is not state:
        assert time.monotonic() < deadline, task.status
        time.sleep(0.02)
    return task


def test_a_queued_task_is_leased_renewed_and_not_taken_by_another_worker(
        two_workers: tuple[Runtime, Runtime, GatedAgent]) -> None:
    first, second, agent = two_workers
    blocker = _send(first, "block")
    _wait_state(first, blocker.id, TaskState.WORKING, 5)
    queued = _send(first, "hello")  # the only agent thread is busy: it waits
    lease = first.store.get_lease(queued.id)
    assert lease is not None and lease.worker_id == first.worker_id
    second.start_keeper()
    time.sleep(LEASE * 4)  # several lease lengths: renewed all along
    assert first.get_task(queued.id, CALL).status.state is TaskState.SUBMITTED
    renewed = first.store.get_lease(queued.id)
    assert renewed is not None and renewed.worker_id == first.worker_id
    assert renewed.expires_at > lease.expires_at
    agent.release.set()
    _wait_state(first, queued.id, TaskState.COMPLETED, 5)


def test_a_queued_continuation_is_leased_by_its_own_write(
        two_workers: tuple[Runtime, Runtime, GatedAgent]) -> None:
    first, _, agent = two_workers
    asked = _send(first, "ask", blocking=True)
    assert asked.status.state is TaskState.INPUT_REQUIRED
    assert first.store.get_lease(asked.id) is None  # the run that asked gave its lease back
    blocker = _send(first, "block")
    _wait_state(first, blocker.id, TaskState.WORKING, 5)
    continued = _send(first, "hello", task_id=asked.id)
    assert continued.status.state is TaskState.WORKING
    lease = first.store.get_lease(asked.id)
    assert lease is not None and lease.worker_id == first.worker_id
    agent.release.set()
    _wait_state(first, asked.id, TaskState.COMPLETED, 5)


def test_a_queued_task_of_a_stopped_worker_fails_saying_it_never_started(
        two_workers: tuple[Runtime, Runtime, GatedAgent]) -> None:
    first, second, _ = two_workers
    blocker = _send(first, "block")
    _wait_state(first, blocker.id, TaskState.WORKING, 5)
    queued = _send(first, "hello")
    first.close()  # stops renewing; the queued run is dropped without running
    second.start_keeper()
    task = _wait_state(second, queued.id, TaskState.FAILED, LEASE + 5)
    assert task.status.message is not None
    assert task.status.message.parts[0].text == f"Error: {UNSTARTED_REASON}"  # type: ignore[union-attr]
