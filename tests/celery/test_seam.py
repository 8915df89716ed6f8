"""The execution seam without a broker: a second engine in a few lines (a thread that drains
a queue.Queue), a web runtime and a worker runtime on one SQLite file.

What it shows: the web runtime stores and queues, the worker runtime claims and runs; a
delivery of a run that is over is dropped; a queue that refuses a run leaves a FAILED
task and a "retry later" error, and the same request sent again makes a new task; the
call's metadata reaches the agent; a memory store is refused."""

from __future__ import annotations

import itertools
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

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
from a2a_wsgi._agent import Agent, AgentContext, Outcome, reply
from a2a_wsgi._runtime import Runtime
from a2a_wsgi.execution import QueueUnavailable, RunRef
from a2a_wsgi.settings import RuntimeSettings

_ids = itertools.count(1)


class MetadataEcho(Agent):
    """Echoes the message and the call's metadata key "who"."""

    name = "Metadata Echo"

    def handle_message(self, msg: Message, ctx: AgentContext) -> Outcome:
        first = msg.parts[0]
        text = first.text if isinstance(first, TextPart) else ""
        return reply(f"{text} for {(ctx.metadata or {}).get('who')}")


class ThreadQueue:
    """An Executor: runs go into a queue.Queue; a thread hands each to the worker runtime."""

    def __init__(self) -> None:
        self.jobs: queue.Queue[RunRef | None] = queue.Queue()
        self.worker: Runtime | None = None
        self.refuse = False
        #: Queue the run, then fail once the worker ran it (a publisher confirm lost).
        self.lose_confirm = False
        self.ran: list[bool] = []
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def submit(self, ref: RunRef) -> None:
        if self.refuse:
            raise ConnectionRefusedError("queue closed")
        before = len(self.ran)
        self.jobs.put(ref)
        if self.lose_confirm:
            deadline = time.monotonic() + 10
            while len(self.ran) == before and time.monotonic() < deadline:
                time.sleep(0.01)
            raise ConnectionResetError("the connection closed before the confirm")

    def _drain(self) -> None:
        while (ref := self.jobs.get()) is not None:
            assert self.worker is not None
            self.ran.append(self.worker.run_queued(ref))

    def close(self) -> None:
        self.jobs.put(None)
        self._thread.join(timeout=10)


@pytest.fixture()
def tiers(tmp_path: Path) -> Iterator[tuple[Runtime, ThreadQueue]]:
    engine = ThreadQueue()
    settings = RuntimeSettings(executor=engine, poll_interval=0.05)
    store = f"sqlite:///{tmp_path / 'tasks.sqlite3'}"
    web, worker = Runtime(MetadataEcho(), settings, store=store), None
    try:
        worker = Runtime(MetadataEcho(), settings, store=store)
        engine.worker = worker
        yield web, engine
    finally:
        engine.close()
        web.close(wait=True)
        if worker is not None:
            worker.close(wait=True)


def _send(text: str, *, blocking: bool, message_id: str | None = None) -> SendMessageRequest:
    message = Message(message_id=message_id or f"m-{next(_ids)}", role=Role.USER,
                      parts=(TextPart(text=text),))
    return SendMessageRequest(message=message,
                              configuration=SendMessageConfiguration(blocking=blocking))


def _soon(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _call() -> CallContext:
    return CallContext(version="1.0", metadata={"who": "ada"})


def test_a_blocking_send_is_run_by_the_worker_runtime(tiers: tuple[Runtime, ThreadQueue]
                                                      ) -> None:
    web, engine = tiers
    task = web.send_message(_send("hello", blocking=True), _call())
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    texts = [p.text for a in task.artifacts for p in a.parts if isinstance(p, TextPart)]
    assert texts == ["hello for ada"]
    # The worker's run returns (and gives its lease back) just after its last write,
    # which the web tier may already have answered.
    assert _soon(lambda: engine.ran == [True] and web.store.get_lease(task.id) is None)


def test_a_second_delivery_of_a_finished_run_is_dropped(tiers: tuple[Runtime, ThreadQueue]
                                                       ) -> None:
    web, engine = tiers
    task = web.send_message(_send("once", blocking=True), _call())
    assert isinstance(task, Task)
    assert engine.worker is not None
    assert engine.worker.run_queued(RunRef(task.id, None, None)) is False
    assert web.get_task(task.id, _call()) == task


def test_a_refused_run_fails_its_task_and_a_retry_makes_a_new_one(
        tiers: tuple[Runtime, ThreadQueue]) -> None:
    web, engine = tiers
    engine.refuse = True
    request = _send("hello", blocking=False, message_id="m-retried")
    with pytest.raises(QueueUnavailable) as refused:
        web.send_message(request, _call())
    assert refused.value.retry_after > 0 and "retry in" in refused.value.error().message
    [failed] = web.store.list()[0]
    assert failed.status.state is TaskState.FAILED  # not SUBMITTED without a run
    engine.refuse = False
    again = web.send_message(request, _call())
    assert isinstance(again, Task) and again.id != failed.id


@pytest.mark.parametrize("blocking", [True, False])
def test_a_run_delivered_though_its_publish_failed_is_not_failed(
        tiers: tuple[Runtime, ThreadQueue], blocking: bool) -> None:
    """The queue ran the job, then the publish reported an error (a lost confirm): the
    send answers the task, which completes, instead of "retry later" and FAILED."""
    web, engine = tiers
    engine.lose_confirm = True
    task = web.send_message(_send("hello", blocking=blocking), _call())
    assert isinstance(task, Task)
    assert _soon(lambda: web.get_task(task.id, _call()).status.state is TaskState.COMPLETED)
    assert engine.ran == [True]


def test_a_memory_store_is_refused() -> None:
    engine = ThreadQueue()
    try:
        with pytest.raises(ValueError, match="share"):
            Runtime(MetadataEcho(), RuntimeSettings(executor=engine), store="memory")
    finally:
        engine.close()
