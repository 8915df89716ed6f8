"""Idle streams sleep: one store waiter per followed task, wakes on events, deadlines, stop()."""

from __future__ import annotations

import itertools
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.runtimes import runtime as build_runtime

from a2a_core._service import HEARTBEAT, CallContext, OutboundEvent
from a2a_core.models import (
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_wsgi._agent import Agent, working
from a2a_wsgi._disconnect import client_gone_probe, hangup_fd, watch_hangup
from a2a_wsgi._runtime import Runtime

WAIT = 5.0
_ids = itertools.count(1)


@pytest.fixture
def make() -> Iterator[Callable[..., Runtime]]:
    made: list[Runtime] = []

    def factory(**kwargs: Any) -> Runtime:
        agent = Agent.from_function(lambda msg, c: working(), name="Held")
        runtime = build_runtime(agent, **kwargs)
        made.append(runtime)
        return runtime

    yield factory
    for runtime in made:
        runtime.close(wait=True)


def ctx() -> CallContext:
    return CallContext(version="1.0")


def send_task(runtime: Runtime, task_id: str | None = None) -> Task:
    message = Message(message_id=f"m-{next(_ids)}", role=Role.USER,
                      parts=(TextPart(text="hold"),), task_id=task_id)
    result = runtime.send_message(
        SendMessageRequest(message=message,
                           configuration=SendMessageConfiguration(blocking=True)), ctx())
    assert isinstance(result, Task)
    return result


def _follow(runtime: Runtime, task_id: str, count: int) -> tuple[list[list[Any]],
                                                                  list[threading.Thread]]:
    """``count`` subscriptions of the task, each consumed by its own thread."""
    received: list[list[Any]] = [[] for _ in range(count)]

    def consume(index: int) -> None:
        for item in runtime.subscribe_to_task(SubscribeToTaskRequest(id=task_id), ctx()):
            received[index].append(item)

    threads = [threading.Thread(target=consume, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    return received, threads


def test_one_store_waiter_per_task_however_many_follow_it(make: Any) -> None:
    runtime = make(heartbeat_interval=0.2, resubscribe_timeout=WAIT)
    task = send_task(runtime)
    callers: set[int] = set()
    calls = [0]
    store = runtime.store
    real = store.wait_for_events

    def counted(task_id: str, after: int, timeout: float) -> Any:
        callers.add(threading.get_ident())
        calls[0] += 1
        return real(task_id, after, timeout)

    store.wait_for_events = counted  # type: ignore[method-assign]
    received, threads = _follow(runtime, task.id, 20)
    time.sleep(0.5)
    assert len(callers) == 1  # one waiter, not one per stream
    # Slices of a tenth of the heartbeat (~25 in 0.5 s) and the streams' heartbeat
    # deadlines; a waiter per stream would make 20 times the slices.
    assert calls[0] <= 150
    assert all(HEARTBEAT in items for items in received)  # every stream still beats
    send_task(runtime, task_id=task.id)  # a new WORKING status reaches all 20
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline and not all(
            sum(isinstance(i, OutboundEvent) and isinstance(i.event, TaskStatusUpdateEvent)
                for i in items) for items in received):
        time.sleep(0.02)
    for items in received:
        updates = [i.event for i in items if isinstance(i, OutboundEvent)
                   and isinstance(i.event, TaskStatusUpdateEvent)]
        assert updates and updates[0].status.state is TaskState.WORKING
    runtime.close(wait=True)
    for thread in threads:
        thread.join(WAIT)
        assert not thread.is_alive()  # stop() woke every sleeping stream


def test_heartbeats_keep_their_interval_while_asleep(make: Any) -> None:
    runtime = make(heartbeat_interval=0.1, resubscribe_timeout=0.55)
    task = send_task(runtime)
    began = time.monotonic()
    items = list(runtime.subscribe_to_task(SubscribeToTaskRequest(id=task.id), ctx()))
    took = time.monotonic() - began
    assert set(items[1:]) == {HEARTBEAT}
    assert 4 <= len(items) - 1 <= 5  # at 0.1 s steps up to the quiet timeout, no last one
    assert 0.5 <= took < 1.5


def test_a_sleeping_subscription_ends_when_its_client_hangs_up(make: Any) -> None:
    runtime = make(heartbeat_interval=30, resubscribe_timeout=60)
    task = send_task(runtime)
    server, client = socket.socketpair()
    try:
        gone = client_gone_probe({"gunicorn.socket": server})
        assert gone is not None and hangup_fd(gone) == server.fileno()
        stream = runtime.subscribe_to_task(SubscribeToTaskRequest(id=task.id),
                                           CallContext(version="1.0", client_gone=gone))
        first = next(stream)
        assert isinstance(first, OutboundEvent)
        ended = threading.Event()

        def rest() -> None:
            for _ in stream:
                pass
            ended.set()

        threading.Thread(target=rest, daemon=True).start()
        time.sleep(0.2)
        assert not ended.is_set()  # asleep: no heartbeat due for 30 s
        began = time.monotonic()
        client.close()
        assert ended.wait(WAIT)
        assert time.monotonic() - began < 0.5  # at once, not at a poll
    finally:
        server.close()


def test_a_hangup_watch_fires_once_when_readable_and_not_while_stopped() -> None:
    left, right = socket.socketpair()
    try:
        fired = threading.Event()
        watch = watch_hangup(left.fileno(), fired.set)
        assert watch is not None
        watch.stop()
        right.send(b"x")
        assert not fired.wait(0.2)  # stopped: not watched
        watch.start()
        assert fired.wait(WAIT) and watch.fired
        watch.cancel()
    finally:
        left.close()
        right.close()
