"""How many store round trips a send costs, and that the cheaper path changes nothing visible.

The stores here are the real ones, subclassed only to record which TaskStore
methods the sending thread called (the keeper thread's polling is not counted).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.runtimes import runtime as build_runtime

from a2a_core._service import HEARTBEAT, CallContext
from a2a_core._tasks import TransitionEvent, apply_event, new_task
from a2a_core.models import (
    CancelTaskRequest,
    Message,
    PushNotificationConfig,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_wsgi._agent import (
    Agent,
    AgentContext,
    error,
    input_required,
    message,
    reply,
    stream,
    working,
)
from a2a_wsgi._runtime import Runtime
from a2a_wsgi.settings import RuntimeSettings
from a2a_wsgi.stores import MemoryTaskStore, OutboxEntry, SQLiteTaskStore

S = TaskState
_COUNTED = ("get", "load", "save", "list_push_configs", "put_push_config", "acquire_lease",
            "release_lease", "events_after")


def recording(base: type) -> type:
    """``base`` with every counted method logging its name when the creating thread calls it."""

    def wrap(name: str) -> Callable[..., Any]:
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            if self.thread in (None, threading.get_ident()):
                self.calls.append(name)
            return getattr(base, name)(self, *args, **kwargs)

        return method

    namespace: dict[str, Any] = {name: wrap(name) for name in _COUNTED}
    return type(f"Recording{base.__name__}", (base,), namespace)


RecordingMemory = recording(MemoryTaskStore)
RecordingSQLite = recording(SQLiteTaskStore)


def new_store(kind: type, *args: Any, every_thread: bool = False) -> Any:
    """A recording store; by default only this thread's calls count (not the keeper's)."""
    store = kind(*args)
    store.calls, store.thread = [], None if every_thread else threading.get_ident()
    return store


@pytest.fixture
def made() -> Iterator[list[Runtime]]:
    runtimes: list[Runtime] = []
    yield runtimes
    for runtime in runtimes:
        runtime.close(wait=True)


def make(made: list[Runtime], handler: Callable[[Message, AgentContext], Any],
         **kwargs: Any) -> Runtime:
    ids = itertools.count(1)
    kwargs.setdefault("id_factory", lambda prefix: f"{prefix}-{next(ids)}")
    runtime = build_runtime(Agent.from_function(handler, name="Counted"), **kwargs)
    made.append(runtime)
    return runtime


def send(text: str = "hi", *, task_id: str | None = None,
         push: PushNotificationConfig | None = None) -> SendMessageRequest:
    msg = Message(message_id=f"m-{text}-{task_id}", role=Role.USER, parts=[TextPart(text=text)],
                  task_id=task_id)
    return SendMessageRequest(message=msg, configuration=SendMessageConfiguration(
        blocking=True, push_notification_config=push))


def call() -> CallContext:
    return CallContext(version="1.0")


# -- round trips ---------------------------------------------------------------------------


def test_a_blocking_send_whose_agent_returns_at_once_stores_its_task_in_one_save(
        made: list[Runtime]) -> None:
    store = new_store(RecordingMemory)
    runtime = make(made, lambda msg, c: reply("echo"), store=store)
    result = runtime.send_message(send(), call())
    # one create, the task already WORKING and then COMPLETED: no read, no second save
    assert store.calls == ["save"]
    assert isinstance(result, Task) and result.status.state is S.COMPLETED
    assert result == store.get(result.id)
    logged = [event for _, event in store.events_after(result.id, 0)]
    assert [type(e).__name__ for e in logged] == [
        "TaskStatusUpdateEvent", "TaskArtifactUpdateEvent", "TaskStatusUpdateEvent"]
    assert [e.status.state for e in logged if isinstance(e, TaskStatusUpdateEvent)] == [
        S.WORKING, S.COMPLETED]


def test_a_durable_store_takes_no_lease_for_a_run_that_stored_nothing_before_it_ended(
        made: list[Runtime], tmp_path: Any) -> None:
    # Nothing was stored while the agent ran (no other worker could know the task), and
    # the task is stored as the run ends: there is nothing for a lease to recover.
    store = new_store(RecordingSQLite, tmp_path / "t.sqlite3")
    runtime = make(made, lambda msg, c: reply("echo"), store=store, lease_seconds=5.0,
                   poll_interval=0.05)
    result = runtime.send_message(send(), call())
    assert store.calls == ["save"]
    assert isinstance(result, Task) and result == store.get(result.id)
    assert store.get_lease(result.id) is None


def test_a_durable_store_leases_the_task_once_the_run_stores_it(
        made: list[Runtime], tmp_path: Any) -> None:
    store = new_store(RecordingSQLite, tmp_path / "t.sqlite3")
    seen: dict[str, Any] = {}

    def handler(msg: Message, ctx: AgentContext) -> Any:
        ctx.emit_status(S.WORKING, "on it")  # stores the task, leased: its run goes on
        seen["lease"] = store.get_lease(ctx.task_id)
        return reply("echo")

    runtime = make(made, handler, store=store, lease_seconds=5.0, poll_interval=0.05)
    result = runtime.send_message(send(), call())
    assert isinstance(result, Task) and result.status.state is S.COMPLETED
    assert seen["lease"] is not None and seen["lease"].worker_id == runtime.worker_id
    assert store.calls[0] == "save" and store.calls[-1] == "release_lease"
    assert "acquire_lease" not in store.calls
    assert store.get_lease(result.id) is None


def test_a_continuation_answers_from_its_own_write(made: list[Runtime]) -> None:
    store = new_store(RecordingMemory)
    replies = iter([input_required("which?"), reply("that one")])
    runtime = make(made, lambda msg, c: next(replies), store=store)
    first = runtime.send_message(send("a"), call())
    assert isinstance(first, Task) and first.status.state is S.INPUT_REQUIRED
    store.calls.clear()
    done = runtime.send_message(send("b", task_id=first.id), call())
    assert store.calls == ["load", "save", "save"]  # the run goes on from its own write
    assert isinstance(done, Task) and done.status.state is S.COMPLETED
    assert done == store.get(first.id)


def test_a_stream_writes_each_chunk_with_one_read_and_one_save(made: list[Runtime]) -> None:
    store = new_store(RecordingMemory, every_thread=True)
    runtime = make(made, lambda msg, c: stream(["a", "b", "c"]), store=store)
    items = [i for i in runtime.send_streaming_message(send(), call()) if i is not HEARTBEAT]
    assert [type(i.event).__name__ for i in items] == ["Task"] + [
        "TaskStatusUpdateEvent"] + ["TaskArtifactUpdateEvent"] * 3 + ["TaskStatusUpdateEvent"]
    assert [i.event_id for i in items] == ["0", "1", "2", "3", "4", "5"]
    assert items[0].event.status.state is S.SUBMITTED
    writes = [name for name in store.calls if name in ("load", "save", "get")]
    assert writes == ["save"] * 5  # created WORKING, 3 chunks, COMPLETED: each from the last


def test_a_push_config_on_send_is_stored_before_the_events_it_is_planned_for(
        made: list[Runtime]) -> None:
    planned: list[tuple[str, list[int]]] = []

    def planner(task: Task, new: Any, configs: Any) -> list[OutboxEntry]:
        planned.append((task.status.state.value, [seq for seq, _ in new]))
        return []

    store = new_store(RecordingMemory)
    runtime = make(made, lambda msg, c: reply("x"), store=store, push_planner=planner)
    hook = PushNotificationConfig(url="https://hooks.example/p", id="p1")
    runtime.send_message(send(push=hook), call())
    assert store.calls == ["put_push_config", "list_push_configs", "save"]
    # one save, planned once: WORKING, the artifact and COMPLETED, numbered as logged
    assert planned == [("completed", [1, 2, 3])]


def test_a_cancel_during_a_blocking_run_is_what_the_send_answers(made: list[Runtime]) -> None:
    runtimes: list[Runtime] = []

    def cancel_then_reply(msg: Message, c: AgentContext) -> Any:
        c.emit_artifact("partial")
        runtimes[0].cancel_task(CancelTaskRequest(id=c.task_id), call())
        return reply("too late")

    runtime = make(made, cancel_then_reply)
    runtimes.append(runtime)
    result = runtime.send_message(send(), call())
    assert isinstance(result, Task) and result.status.state is S.CANCELED
    assert result == runtime.get_task(result.id, call())
    assert [a.parts[0].text for a in result.artifacts] == ["partial"]  # type: ignore[union-attr]


# -- nothing visible changed ---------------------------------------------------------------

_STEPS = st.lists(st.sampled_from(["artifact", "working", "working-text"]), max_size=3)
_ENDINGS = st.sampled_from(["reply", "input", "error", "working", "none", "message"])


def _scripted(steps: list[str], ending: str) -> Callable[[Message, AgentContext], Any]:
    def handler(msg: Message, c: AgentContext) -> Any:
        for step in steps:
            if step == "artifact":
                c.emit_artifact(f"part {len(step)}")
            else:
                c.emit_status(S.WORKING, "busy" if step == "working-text" else None)
        endings = {"reply": lambda: reply("done"), "input": lambda: input_required("more?"),
                   "error": lambda: error("broke"), "working": lambda: working("later"),
                   "none": lambda: None, "message": lambda: message("just this")}
        return endings[ending]()

    return handler


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=_STEPS, ending=_ENDINGS, max_history=st.sampled_from([None, 1, 2]))
def test_the_answer_the_log_and_the_transitions_agree_with_the_store(
        steps: list[str], ending: str, max_history: int | None) -> None:
    seen: list[TransitionEvent] = []
    store = MemoryTaskStore()
    runtime = Runtime(Agent.from_function(_scripted(steps, ending), name="Scripted"),
                      RuntimeSettings(on_transition=seen.append, max_history=max_history),
                      store=store)
    try:
        result = runtime.send_message(send(), call())
    finally:
        runtime.close(wait=True)
    if isinstance(result, Message):  # a bare message with nothing emitted: nothing stored
        assert not steps and ending == "message" and seen == [] and store.list()[1] == 0
        return
    stored = store.get(result.id)
    assert stored is not None and result == stored
    # Replaying the log on the SUBMITTED task gives the stored status and artifacts.
    replayed = new_task(task_id=result.id, context_id=result.context_id,
                        message=send().message,
                        timestamp=datetime.now(timezone.utc))
    logged = [event for _, event in store.events_after(result.id, 0)]
    for event in logged:
        replayed = apply_event(replayed, event)
    assert replayed.status == stored.status and replayed.artifacts == stored.artifacts
    assert isinstance(logged[0], TaskStatusUpdateEvent) and logged[0].status.state is S.WORKING
    assert sum(isinstance(e, TaskArtifactUpdateEvent) for e in logged) >= steps.count("artifact")
    # Transitions form one chain from creation to the stored state, SUBMITTED then WORKING first.
    pairs = [(t.from_state, t.to_state) for t in seen]
    assert pairs[:2] == [(None, S.SUBMITTED), (S.SUBMITTED, S.WORKING)]
    assert all(a[1] is b[0] for a, b in itertools.pairwise(pairs))
    assert pairs[-1][1] is stored.status.state
