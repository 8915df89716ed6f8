"""Holding a stream: the core's StreamHolder seam as the runtime uses it, and where parking's
parts may live (docs/streaming.md).

The runtime's side of the seam runs here in-process, with a holder of the test's own (a
real implementation of the Protocol: its wakeup records what a server would resume the
stream on); gunicorn's side, a2a_wsgi._parking driving the stream, runs under ``a2a serve``
in tests/multiprocess/test_parked_streams.py.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from importlib.metadata import requires, version
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.version import Version
from support.runtimes import runtime as build_runtime

import a2a_client
import a2a_core
import a2a_wsgi
from a2a_core._service import HEARTBEAT, IDLE, CallContext, OutboundEvent, StreamItem
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
from a2a_wsgi._runtime import Runtime

#: The installed packages (the checkout's, or the wheel's under .ci/wheel-check).
PACKAGES = {name: Path(module.__file__ or "").parent
            for name, module in (("a2a_core", a2a_core), ("a2a_wsgi", a2a_wsgi),
                                 ("a2a_client", a2a_client))}
WAIT = 5.0


class Wakeup:
    """A held stream's wakeup as a server keeps it: set() means "resume the stream"."""

    def __init__(self) -> None:
        self.due = threading.Event()

    def set(self) -> None:
        self.due.set()

    def clear(self) -> None:
        self.due.clear()


class Holder:
    """The server's offer; ``gives``: False once the server writes the stream already."""

    def __init__(self, *, gives: bool = True) -> None:
        self.wakeup, self.gives, self.taken = Wakeup(), gives, 0

    def hold(self) -> Wakeup | None:
        self.taken += 1
        return self.wakeup if self.gives else None


@pytest.fixture
def make() -> Iterator[Callable[..., Runtime]]:
    made: list[Runtime] = []

    def factory(**kwargs: Any) -> Runtime:
        runtime = build_runtime(Agent.from_function(lambda msg, c: working(), name="Held"),
                                **kwargs)
        made.append(runtime)
        return runtime

    yield factory
    for runtime in made:
        runtime.close(wait=True)


def _send(runtime: Runtime, n: int, task_id: str | None = None) -> Task:
    message = Message(message_id=f"held-{n}", role=Role.USER, parts=(TextPart(text="hold"),),
                      task_id=task_id)
    result = runtime.send_message(
        SendMessageRequest(message=message, configuration=SendMessageConfiguration(blocking=True)),
        CallContext(version="1.0"))
    assert isinstance(result, Task)
    return result


def _subscribe(runtime: Runtime, task: Task, holder: Holder) -> Iterator[StreamItem]:
    return runtime.subscribe_to_task(SubscribeToTaskRequest(id=task.id),
                                     CallContext(version="1.0", stream_holder=holder))


def _next_within(stream: Iterator[StreamItem], seconds: float) -> StreamItem:
    began = time.monotonic()
    item = next(stream)
    assert time.monotonic() - began < seconds, "the held stream waited in next()"
    return item


def test_a_held_subscription_yields_idle_and_goes_on_once_woken_by_its_task(make: Any) -> None:
    runtime = make(heartbeat_interval=30, resubscribe_timeout=60)
    task = _send(runtime, 1)
    holder = Holder()
    stream = _subscribe(runtime, task, holder)
    try:
        assert holder.taken == 1  # taken when the stream was made, before its first item
        first = next(stream)
        assert isinstance(first, OutboundEvent) and first.event == task
        assert _next_within(stream, 1.0) is IDLE  # asleep: it did not wait for the task
        assert not holder.wakeup.due.is_set()
        _send(runtime, 2, task_id=task.id)  # the task moves: its waiter wakes the stream
        assert holder.wakeup.due.wait(WAIT)
        moved = []
        while (item := _next_within(stream, 1.0)) is not IDLE:
            moved.append(item)
        states = [i.event.status.state for i in moved if isinstance(i, OutboundEvent)
                  and isinstance(i.event, TaskStatusUpdateEvent)]
        assert TaskState.WORKING in states
    finally:
        stream.close()  # type: ignore[attr-defined]


def test_a_held_stream_is_woken_for_its_heartbeat(make: Any) -> None:
    runtime = make(heartbeat_interval=0.5, resubscribe_timeout=60)
    task = _send(runtime, 1)
    holder = Holder()
    stream = _subscribe(runtime, task, holder)
    try:
        next(stream)
        assert _next_within(stream, 0.4) is IDLE
        assert holder.wakeup.due.wait(WAIT)  # its deadline, with no timer of its own
        assert _next_within(stream, 1.0) is HEARTBEAT
    finally:
        stream.close()  # type: ignore[attr-defined]


def test_a_stream_the_server_no_longer_offers_to_hold_waits_itself(make: Any) -> None:
    runtime = make(heartbeat_interval=0.2, resubscribe_timeout=60)
    task = _send(runtime, 1)
    holder = Holder(gives=False)
    stream = _subscribe(runtime, task, holder)
    try:
        next(stream)
        began = time.monotonic()
        assert next(stream) is HEARTBEAT  # no IDLE: it slept in next() until its heartbeat
        assert time.monotonic() - began >= 0.15
        assert holder.taken == 1
    finally:
        stream.close()  # type: ignore[attr-defined]


def test_the_core_knows_no_server() -> None:
    """What `grep -rniE 'park|gunicorn|gevent' a2a_core` checks, comments included."""
    word = re.compile(r"park|gunicorn|gevent", re.IGNORECASE)
    found = []
    core = PACKAGES["a2a_core"]
    for path in sorted(core.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        text = path.read_bytes().decode("utf-8", "replace")
        found += [f"{path.relative_to(core)}: {m.group()}" for m in word.finditer(text)]
    assert not found


def test_gunicorn_internals_are_used_in_one_module() -> None:
    """Parking's reach into gunicorn (its worker class, its response's methods, ending its
    handler, the socket's file) lives in a2a_wsgi/_gunicorn_internals.py only."""
    internals = re.compile(r"force_close|send_headers|gunicorn\.workers|gunicorn\.http|"
                           r"GeventWorker|\.makefile\(|StopIteration\(")
    users = {f"{name}/{path.relative_to(root)}" for name, root in PACKAGES.items()
             for path in root.rglob("*.py") if internals.search(path.read_text(encoding="utf-8"))}
    assert users == {"a2a_wsgi/_gunicorn_internals.py"}


def test_gunicorn_is_bounded_above_and_installed_inside_the_bound() -> None:
    """pyproject's bound, as the installed distribution declares it."""
    (spec,) = [Requirement(d).specifier for d in requires("a2a-wsgi") or ()
               if Requirement(d).name == "gunicorn" and Requirement(d).marker is None]
    assert any(s.operator == "<" for s in spec), spec
    assert Version(version("gunicorn")) in spec
