"""The runtime with real threads and the in-memory store; no mocks.

Agents here synchronise with the test through threading.Event gates, and every
wait has a short timeout so a bug fails fast instead of hanging.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.runtimes import runtime as build_runtime

from a2a_core._service import HEARTBEAT, CallContext, OutboundEvent
from a2a_core._tasks import TransitionEvent
from a2a_core.errors import (
    ExtendedAgentCardNotConfiguredError,
    InvalidAgentResponseError,
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_core.models import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    PushNotificationConfig,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_wsgi._agent import (
    Agent,
    AgentContext,
    auth_required,
    error,
    input_required,
    message,
    reject,
    reply,
    stream,
    working,
)
from a2a_wsgi._runtime import Runtime
from a2a_wsgi.stores import MemoryTaskStore

WAIT = 5.0  # upper bound for any wait; tests normally finish far sooner
S = TaskState


# -- helpers -------------------------------------------------------------------------------


class Clock:
    """A clock that moves one second per reading, so timestamps are predictable."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=timezone.utc)
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            self.now += timedelta(seconds=1)
            return self.now


def counting_ids() -> Callable[[str], str]:
    counter = itertools.count(1)
    return lambda prefix: f"{prefix}-{next(counter)}"


Handler = Callable[[Message, AgentContext], Any]


def make_runtime(handler: Handler, **kwargs: Any) -> Runtime:
    cancel = kwargs.pop("on_cancel", None)
    agent = Agent.from_function(handler, name="Test Agent", on_cancel=cancel)
    kwargs.setdefault("clock", Clock())
    kwargs.setdefault("id_factory", counting_ids())
    kwargs.setdefault("heartbeat_interval", 0.02)
    kwargs.setdefault("resubscribe_timeout", 0.3)
    return build_runtime(agent, **kwargs)


@pytest.fixture
def runtimes() -> Iterator[list[Runtime]]:
    made: list[Runtime] = []
    yield made
    for runtime in made:
        runtime.close(wait=True)


@pytest.fixture
def make(runtimes: list[Runtime]) -> Callable[..., Runtime]:
    def factory(handler: Handler, **kwargs: Any) -> Runtime:
        runtime = make_runtime(handler, **kwargs)
        runtimes.append(runtime)
        return runtime

    return factory


def ctx(identity: Any = None, **kwargs: Any) -> CallContext:
    return CallContext(version="1.0", identity=identity, **kwargs)


_msg_ids = itertools.count(1)


def user(text: str = "hello", *, task_id: str | None = None, context_id: str | None = None
         ) -> Message:
    return Message(message_id=f"user-{next(_msg_ids)}", role=Role.USER,
                   parts=[TextPart(text=text)], task_id=task_id, context_id=context_id)


def send(text: str = "hello", *, blocking: bool = True, **ids: Any) -> SendMessageRequest:
    return SendMessageRequest(message=user(text, **ids),
                              configuration=SendMessageConfiguration(blocking=blocking))


def send_task(runtime: Runtime, text: str = "hello", identity: Any = None, **kw: Any) -> Task:
    result = runtime.send_message(send(text, **kw), ctx(identity))
    assert isinstance(result, Task)
    return result


def events(items: Any) -> list[Any]:
    """Stream items without heartbeats, OutboundEvents unwrapped."""
    out = []
    for item in items:
        if item is HEARTBEAT:
            continue
        out.append(item.event if isinstance(item, OutboundEvent) else item)
    return out


def wait_for_state(runtime: Runtime, task_id: str, state: TaskState, identity: Any = None
                   ) -> Task:
    """Poll briefly until the task reaches ``state`` (non-blocking sends finish later)."""
    deadline = threading.Event()
    for _ in range(int(WAIT / 0.01)):
        task = runtime.get_task(task_id, ctx(identity))
        if task.status.state is state:
            return task
        deadline.wait(0.01)
    raise AssertionError(f"task {task_id} never reached {state}: {task.status.state}")


# -- outcomes -----------------------------------------------------------------------------


def test_reply_completes_with_one_artifact_and_the_agent_message(make: Any) -> None:
    runtime = make(lambda msg, ctx: reply("echo: " + msg.text))
    task = send_task(runtime, "hi")
    assert task.status.state is S.COMPLETED
    assert task.status.message is None
    assert [a.parts for a in task.artifacts] == [(TextPart(text="echo: hi"),)]
    assert [(m.role, m.text) for m in task.history] == [(Role.USER, "hi"), (Role.AGENT, "echo: hi")]
    assert all(m.task_id == task.id and m.context_id == task.context_id for m in task.history)
    assert task.id.startswith("tsk-") and task.context_id.startswith("ctx-")
    assert runtime.get_task(task.id, ctx()) == task


def test_a_returned_string_is_a_reply(make: Any) -> None:
    task = send_task(make(lambda msg, ctx: "plain"))
    assert task.status.state is S.COMPLETED
    assert task.artifacts[0].parts == (TextPart(text="plain"),)


@pytest.mark.parametrize(
    ("outcome", "state"),
    [
        (input_required("Which numbers?"), S.INPUT_REQUIRED),
        (auth_required("Please sign in"), S.AUTH_REQUIRED),
        (reject("Not my job"), S.REJECTED),
    ],
)
def test_prompt_outcomes_put_the_parts_in_status_and_history(
    make: Any, outcome: Any, state: TaskState
) -> None:
    task = send_task(make(lambda msg, ctx: outcome))
    assert task.status.state is state
    assert task.status.message is not None
    assert task.status.message.role is Role.AGENT
    assert task.status.message.parts == outcome.parts
    assert task.history[-1] == task.status.message
    assert task.artifacts == ()


def test_error_outcome_fails_with_error_text(make: Any) -> None:
    task = send_task(make(lambda msg, ctx: error("boom")))
    assert task.status.state is S.FAILED
    assert task.status.message is not None and task.status.message.text == "Error: boom"


def test_an_agent_exception_fails_the_task_without_leaking_a_traceback(
    make: Any, caplog: pytest.LogCaptureFixture
) -> None:
    def explode(msg: Message, ctx: AgentContext) -> Any:
        raise ValueError("division trouble")

    runtime = make(explode)
    with caplog.at_level(logging.ERROR, logger="a2a_wsgi.runtime"):
        task = send_task(runtime)
    assert task.status.state is S.FAILED
    assert task.status.message is not None
    assert task.status.message.text == "Error: division trouble"
    assert "Traceback" not in repr(task)
    assert any(r.exc_info and r.exc_info[0] is ValueError for r in caplog.records)
    # the runtime keeps working afterwards
    assert send_task(make(lambda m, c: reply("ok"))).status.state is S.COMPLETED


def test_an_exception_without_text_is_named_by_its_type(make: Any) -> None:
    def explode(msg: Message, ctx: AgentContext) -> Any:
        raise KeyError()

    task = send_task(make(explode))
    assert task.status.message is not None and task.status.message.text == "Error: KeyError"


def test_an_invalid_return_value_fails_the_task(make: Any) -> None:
    task = send_task(make(lambda msg, ctx: 42))
    assert task.status.state is S.FAILED
    assert task.status.message is not None and "returned int" in task.status.message.text


def test_message_outcome_returns_a_bare_message_and_stores_nothing(make: Any) -> None:
    seen: list[str] = []
    runtime = make(lambda msg, c: (seen.append(c.task_id), message("just saying"))[1])
    result = runtime.send_message(send(context_id="ctx-given"), ctx())
    assert isinstance(result, Message)
    assert (result.role, result.text, result.task_id) == (Role.AGENT, "just saying", None)
    assert result.context_id == "ctx-given"
    with pytest.raises(TaskNotFoundError):
        runtime.get_task(seen[0], ctx())
    assert runtime.list_tasks(ListTasksRequest(), ctx()).total_size == 0


def test_message_outcome_while_continuing_a_task_is_invalid(make: Any) -> None:
    replies = iter([input_required("more?"), message("oops")])
    runtime = make(lambda msg, ctx: next(replies))
    task = send_task(runtime)
    with pytest.raises(InvalidAgentResponseError):
        runtime.send_message(send(task_id=task.id), ctx())
    assert runtime.get_task(task.id, ctx()).status.state is S.FAILED


def test_message_outcome_of_a_non_blocking_send_completes_the_returned_task(make: Any) -> None:
    runtime = make(lambda msg, ctx: message("quick answer"))
    task = send_task(runtime, blocking=False)
    assert task.status.state is S.SUBMITTED
    done = wait_for_state(runtime, task.id, S.COMPLETED)
    assert done.history[-1].text == "quick answer"


def test_working_outcome_leaves_the_task_working_and_accepts_follow_ups(make: Any) -> None:
    calls: list[int] = []

    def stay(msg: Message, ctx: AgentContext) -> Any:
        calls.append(len(ctx.history))
        return working("still on it" if len(calls) > 1 else None)

    runtime = make(stay)
    task = send_task(runtime)
    assert task.status.state is S.WORKING
    again = send_task(runtime, task_id=task.id)
    assert again.id == task.id
    assert again.status.state is S.WORKING
    assert again.status.message is not None and again.status.message.text == "still on it"
    assert calls == [1, 2]


def test_none_completes_a_task_the_agent_drove_itself(make: Any) -> None:
    def drive(msg: Message, ctx: AgentContext) -> None:
        ctx.emit_status(S.WORKING, "thinking")
        first = ctx.emit_artifact("part one", name="doc")
        ctx.emit_artifact(["part two"], artifact_id=first, append=True, last_chunk=True)

    task = send_task(make(drive))
    assert task.status.state is S.COMPLETED
    assert len(task.artifacts) == 1
    assert task.artifacts[0].name == "doc"
    assert [p.text for p in task.artifacts[0].parts] == ["part one", "part two"]  # type: ignore[union-attr]
    assert task.history[-1].text == "thinking"


def test_none_keeps_an_interrupted_state_the_agent_set(make: Any) -> None:
    def ask(msg: Message, ctx: AgentContext) -> None:
        ctx.emit_status(S.INPUT_REQUIRED, "which one?")

    task = send_task(make(ask))
    assert task.status.state is S.INPUT_REQUIRED


# -- multi-turn ---------------------------------------------------------------------------


def test_continuing_a_task_appends_the_message_and_reruns_the_agent(make: Any) -> None:
    seen: list[list[str]] = []

    def calc(msg: Message, ctx: AgentContext) -> Any:
        seen.append([m.text for m in ctx.history])
        if "add" not in msg.text:
            return input_required("Which numbers?")
        return reply("The sum is 5.")

    runtime = make(calc)
    first = send_task(runtime, "hi")
    assert first.status.state is S.INPUT_REQUIRED
    done = send_task(runtime, "add 2 and 3", task_id=first.id, context_id=first.context_id)
    assert done.id == first.id and done.status.state is S.COMPLETED
    assert seen == [["hi"], ["hi", "Which numbers?", "add 2 and 3"]]
    assert [m.text for m in done.history] == ["hi", "Which numbers?", "add 2 and 3",
                                             "The sum is 5."]


def test_continuing_a_terminal_task_is_unsupported(make: Any) -> None:
    runtime = make(lambda msg, ctx: reply("done"))
    task = send_task(runtime)
    with pytest.raises(UnsupportedOperationError):
        runtime.send_message(send(task_id=task.id), ctx())
    assert runtime.get_task(task.id, ctx()) == task


def test_continuing_an_unknown_task_is_not_found(make: Any) -> None:
    runtime = make(lambda msg, ctx: reply("x"))
    with pytest.raises(TaskNotFoundError):
        runtime.send_message(send(task_id="tsk-nope"), ctx())
    with pytest.raises(TaskNotFoundError):
        runtime.send_streaming_message(send(task_id="tsk-nope"), ctx())


def test_a_context_id_not_matching_the_task_is_invalid(make: Any) -> None:
    runtime = make(lambda msg, ctx: input_required("?"))
    task = send_task(runtime)
    with pytest.raises(InvalidParamsError):
        runtime.send_message(send(task_id=task.id, context_id="ctx-other"), ctx())
    assert runtime.get_task(task.id, ctx()) == task


def test_a_new_message_may_join_an_existing_context(make: Any) -> None:
    runtime = make(lambda msg, ctx: reply("x"))
    first = send_task(runtime)
    second = send_task(runtime, context_id=first.context_id)
    assert second.id != first.id and second.context_id == first.context_id


# -- blocking and non-blocking ------------------------------------------------------------


def test_non_blocking_send_returns_at_once_while_the_agent_runs(make: Any) -> None:
    gate, started = threading.Event(), threading.Event()

    def slow(msg: Message, ctx: AgentContext) -> Any:
        started.set()
        assert gate.wait(WAIT)
        return reply("finally")

    runtime = make(slow)
    task = send_task(runtime, blocking=False)
    assert task.status.state is S.SUBMITTED
    assert started.wait(WAIT)
    assert runtime.get_task(task.id, ctx()).status.state is S.WORKING
    gate.set()
    done = wait_for_state(runtime, task.id, S.COMPLETED)
    assert done.artifacts[0].parts == (TextPart(text="finally"),)


def test_the_agent_context_carries_the_call(make: Any) -> None:
    seen: list[AgentContext] = []
    runtime = make(lambda msg, c: (seen.append(c), reply("x"))[1])
    call = ctx("alice", metadata={"k": "v"}, extensions={"urn:ext": {"on": True}})
    runtime.send_message(send(), call)
    (context,) = seen
    assert context.identity == "alice"
    assert context.metadata == {"k": "v"}
    assert context.extensions == {"urn:ext": {"on": True}}
    assert context.message is not None and context.message.task_id == context.task_id


# -- cancel -------------------------------------------------------------------------------


def test_cancel_rules(make: Any) -> None:
    hooked: list[str] = []
    runtime = make(lambda msg, c: input_required("?"), on_cancel=lambda c: hooked.append(c.task_id))
    with pytest.raises(TaskNotFoundError):
        runtime.cancel_task(CancelTaskRequest(id="tsk-missing"), ctx())

    task = send_task(runtime)
    canceled = runtime.cancel_task(CancelTaskRequest(id=task.id), ctx())
    assert canceled.status.state is S.CANCELED
    assert hooked == [task.id]
    with pytest.raises(TaskNotCancelableError):  # terminal: a re-cancel is refused (A2A 1.0)
        runtime.cancel_task(CancelTaskRequest(id=task.id), ctx())
    assert hooked == [task.id]  # no second hook call
    assert runtime.get_task(task.id, ctx()) == canceled  # the first cancel's timestamp stays


@pytest.mark.parametrize("outcome", [reply("x"), error("y"), reject("z")])
def test_finished_tasks_are_not_cancelable(make: Any, outcome: Any) -> None:
    runtime = make(lambda msg, c: outcome)
    task = send_task(runtime)
    with pytest.raises(TaskNotCancelableError):
        runtime.cancel_task(CancelTaskRequest(id=task.id), ctx())
    assert runtime.get_task(task.id, ctx()) == task


def test_a_raising_cancel_hook_aborts_the_cancel(make: Any) -> None:
    def refuse(c: AgentContext) -> None:
        raise RuntimeError("too late to stop")

    runtime = make(lambda msg, c: input_required("?"), on_cancel=refuse)
    task = send_task(runtime)
    with pytest.raises(TaskNotCancelableError, match="too late to stop"):
        runtime.cancel_task(CancelTaskRequest(id=task.id), ctx())
    assert runtime.get_task(task.id, ctx()) == task


def test_cancel_of_a_running_agent_wins_over_its_late_reply(make: Any) -> None:
    started, observed = threading.Event(), threading.Event()
    noticed: list[bool] = []

    def long_job(msg: Message, c: AgentContext) -> Any:
        started.set()
        noticed.append(c.cancelled.wait(WAIT))
        c.emit_artifact("too late")
        observed.set()
        return reply("finished anyway")

    runtime = make(long_job)
    task = send_task(runtime, blocking=False)
    assert started.wait(WAIT)
    canceled = runtime.cancel_task(CancelTaskRequest(id=task.id), ctx())
    assert canceled.status.state is S.CANCELED
    assert observed.wait(WAIT)
    runtime.close(wait=True)
    final = runtime.get_task(task.id, ctx())
    assert noticed == [True]
    assert final.status == canceled.status
    assert final.artifacts == ()


# -- streaming ----------------------------------------------------------------------------


def test_stream_order_and_shared_artifact_id(make: Any) -> None:
    runtime = make(lambda msg, c: stream(iter(["a", "b", TextPart(text="c")])))
    items = events(runtime.send_streaming_message(send(), ctx()))
    first, *updates = items
    assert isinstance(first, Task) and first.status.state is S.SUBMITTED
    kinds = [type(u).__name__ for u in updates]
    assert kinds == ["TaskStatusUpdateEvent"] + ["TaskArtifactUpdateEvent"] * 3 + [
        "TaskStatusUpdateEvent"]
    assert updates[0].status.state is S.WORKING
    chunks = updates[1:4]
    assert len({c.artifact.artifact_id for c in chunks}) == 1
    assert [c.append for c in chunks] == [False, True, True]
    assert [c.last_chunk for c in chunks] == [False, False, True]
    assert [c.artifact.parts[0].text for c in chunks] == ["a", "b", "c"]
    assert updates[-1].status.state is S.COMPLETED and updates[-1].final
    task = runtime.get_task(first.id, ctx())
    assert [p.text for p in task.artifacts[0].parts] == ["a", "b", "c"]  # type: ignore[union-attr]
    assert task.history[-1].role is Role.AGENT


def test_stream_items_carry_increasing_event_ids(make: Any) -> None:
    runtime = make(lambda msg, c: reply("x"))
    items = [i for i in runtime.send_streaming_message(send(), ctx())
             if isinstance(i, OutboundEvent)]
    ids = [int(i.event_id) for i in items]  # type: ignore[arg-type]
    assert ids == [0, 1, 2, 3]  # the task snapshot (no events yet), WORKING, artifact, COMPLETED
    assert isinstance(items[0].event, Task)


def test_an_exception_mid_stream_fails_with_the_parts_so_far(make: Any) -> None:
    def parts() -> Iterator[str]:
        yield "one"
        yield "two"
        raise RuntimeError("source dried up")

    runtime = make(lambda msg, c: stream(parts()))
    items = events(runtime.send_streaming_message(send(), ctx()))
    last = items[-1]
    assert isinstance(last, TaskStatusUpdateEvent) and last.status.state is S.FAILED
    assert last.status.message is not None
    assert last.status.message.text == "Error: source dried up"
    task = runtime.get_task(items[0].id, ctx())
    assert [p.text for p in task.artifacts[0].parts] == ["one", "two"]  # type: ignore[union-attr]


def test_a_streamed_message_outcome_is_one_message_event(make: Any) -> None:
    runtime = make(lambda msg, c: message("hi there"))
    items = events(runtime.send_streaming_message(send(), ctx()))
    assert len(items) == 1 and isinstance(items[0], Message)
    assert items[0].text == "hi there"


def test_heartbeats_while_the_agent_is_quiet(make: Any) -> None:
    gate = threading.Event()

    def slow(msg: Message, c: AgentContext) -> Any:
        assert gate.wait(WAIT)
        return reply("x")

    runtime = make(slow, heartbeat_interval=0.01)
    items = runtime.send_streaming_message(send(), ctx())
    assert next(items) is HEARTBEAT
    gate.set()
    rest = list(items)
    assert isinstance(rest[-1], OutboundEvent)


def test_closing_the_stream_stops_consuming_the_agent_iterator(make: Any) -> None:
    produced: list[int] = []
    closed, gate = threading.Event(), threading.Event()

    def parts() -> Iterator[str]:
        try:
            for n in itertools.count():
                produced.append(n)
                yield f"chunk {n}"
                gate.wait(0.02)
        finally:
            closed.set()

    runtime = make(lambda msg, c: stream(parts()))
    items = runtime.send_streaming_message(send(), ctx())
    seen = []
    for item in items:
        if isinstance(item, OutboundEvent) and isinstance(item.event, TaskArtifactUpdateEvent):
            seen.append(item)
            if len(seen) == 2:
                break
    items.close()
    assert closed.wait(WAIT)
    count = len(produced)
    gate.wait(0.1)
    assert len(produced) == count  # nothing pulled after the close
    task = wait_for_state(runtime, seen[0].event.task_id, S.FAILED)
    assert task.status.message is not None and "disconnected" in task.status.message.text


def test_streaming_a_continuation_starts_with_the_working_task(make: Any) -> None:
    replies = iter([input_required("more?"), reply("done")])
    runtime = make(lambda msg, c: next(replies))
    task = send_task(runtime)
    items = events(runtime.send_streaming_message(send(task_id=task.id), ctx()))
    assert isinstance(items[0], Task) and items[0].status.state is S.WORKING
    assert len(items[0].history) == 3
    assert items[-1].status.state is S.COMPLETED


# -- subscribe ----------------------------------------------------------------------------


def test_subscribe_sends_the_task_then_each_change_until_terminal(make: Any) -> None:
    turns = iter([working(), reply("done")])
    runtime = make(lambda msg, c: next(turns), resubscribe_timeout=WAIT)
    task = send_task(runtime)
    subscription = runtime.subscribe_to_task(SubscribeToTaskRequest(id=task.id), ctx())
    first = next(subscription)
    assert isinstance(first, OutboundEvent) and first.event == task
    send_task(runtime, "finish", task_id=task.id)
    rest = events(subscription)
    states = [e.status.state for e in rest if isinstance(e, TaskStatusUpdateEvent)]
    assert states == [S.WORKING, S.COMPLETED]
    assert isinstance(rest[1], TaskArtifactUpdateEvent)


def test_subscribe_ends_after_the_timeout_without_events(make: Any) -> None:
    runtime = make(lambda msg, c: working(), resubscribe_timeout=0.1, heartbeat_interval=0.02)
    task = send_task(runtime)
    items = list(runtime.subscribe_to_task(SubscribeToTaskRequest(id=task.id), ctx()))
    assert isinstance(items[0], OutboundEvent) and items[0].event == task
    assert set(items[1:]) == {HEARTBEAT}
    assert 2 <= len(items) <= 7


def test_subscribe_refuses_unknown_and_terminal_tasks(make: Any) -> None:
    runtime = make(lambda msg, c: reply("x"))
    with pytest.raises(TaskNotFoundError):
        runtime.subscribe_to_task(SubscribeToTaskRequest(id="tsk-none"), ctx())
    task = send_task(runtime)
    with pytest.raises(UnsupportedOperationError):
        runtime.subscribe_to_task(SubscribeToTaskRequest(id=task.id), ctx())


def test_subscribe_with_last_event_id_replays_the_rest_of_the_log(make: Any) -> None:
    runtime = make(lambda msg, c: reply("x"))
    task = send_task(runtime)
    replay = list(runtime.subscribe_to_task(SubscribeToTaskRequest(id=task.id),
                                            ctx(last_event_id="1")))
    assert [i.event_id for i in replay] == ["2", "3"]
    assert replay[-1].event.status.state is S.COMPLETED


def test_subscribe_never_reruns_the_agent(make: Any) -> None:
    calls: list[str] = []
    runtime = make(lambda msg, c: (calls.append(msg.text), working())[1],
                   resubscribe_timeout=0.05)
    task = send_task(runtime)
    list(runtime.subscribe_to_task(SubscribeToTaskRequest(id=task.id), ctx()))
    assert calls == ["hello"]


# -- list ---------------------------------------------------------------------------------


def _three_contexts(runtime: Runtime) -> list[Task]:
    tasks = []
    for i in range(5):
        outcome_text = "wait" if i % 2 else "done"
        tasks.append(send_task(runtime, outcome_text, context_id=f"ctx-{i % 3}"))
    return tasks


def test_list_filters_sorts_and_counts(make: Any) -> None:
    runtime = make(lambda msg, c: input_required("?") if msg.text == "wait" else reply("ok"))
    tasks = _three_contexts(runtime)
    everything = runtime.list_tasks(ListTasksRequest(), ctx())
    assert [t.id for t in everything.tasks] == [t.id for t in reversed(tasks)]
    assert (everything.total_size, everything.page_size, everything.next_page_token) == (5, 5, "")

    by_context = runtime.list_tasks(ListTasksRequest(context_id="ctx-1"), ctx())
    assert {t.id for t in by_context.tasks} == {tasks[1].id, tasks[4].id}

    waiting = runtime.list_tasks(ListTasksRequest(status=S.INPUT_REQUIRED), ctx())
    assert {t.id for t in waiting.tasks} == {tasks[1].id, tasks[3].id}

    since = tasks[2].status.timestamp
    recent = runtime.list_tasks(ListTasksRequest(status_timestamp_after=since), ctx())
    assert [t.id for t in recent.tasks] == [tasks[4].id, tasks[3].id, tasks[2].id]


def test_list_pages_with_an_opaque_token(make: Any) -> None:
    runtime = make(lambda msg, c: reply("ok"))
    tasks = _three_contexts(runtime)
    first = runtime.list_tasks(ListTasksRequest(page_size=2), ctx())
    assert (first.page_size, first.total_size) == (2, 5) and first.next_page_token
    second = runtime.list_tasks(ListTasksRequest(page_size=2, page_token=first.next_page_token),
                                ctx())
    third = runtime.list_tasks(ListTasksRequest(page_size=2, page_token=second.next_page_token),
                               ctx())
    assert (third.page_size, third.next_page_token) == (1, "")
    ids = [t.id for page in (first, second, third) for t in page.tasks]
    assert ids == [t.id for t in reversed(tasks)]


@pytest.mark.parametrize("token", ["invalid-token", "bm90IGpzb24", "WzEsMl0", "x" * 40])
def test_an_unknown_page_token_is_invalid_params(make: Any, token: str) -> None:
    runtime = make(lambda msg, c: reply("ok"))
    with pytest.raises(InvalidParamsError):
        runtime.list_tasks(ListTasksRequest(page_token=token), ctx())


@pytest.mark.parametrize("size", [0, -1, 101])
def test_page_size_must_be_1_to_100(make: Any, size: int) -> None:
    runtime = make(lambda msg, c: reply("ok"))
    with pytest.raises(InvalidParamsError):
        runtime.list_tasks(ListTasksRequest(page_size=size), ctx())


def test_default_page_is_fifty(make: Any) -> None:
    runtime = make(lambda msg, c: reply("ok"))
    for _ in range(51):
        send_task(runtime)
    page = runtime.list_tasks(ListTasksRequest(), ctx())
    assert (page.page_size, page.total_size) == (50, 51) and page.next_page_token


_stamps = st.lists(st.integers(min_value=0, max_value=5), min_size=0, max_size=25)


@settings(max_examples=60, deadline=None)
@given(offsets=_stamps, size=st.integers(min_value=1, max_value=7))
def test_paging_visits_every_match_once_newest_first(offsets: list[int], size: int) -> None:
    """Tasks sharing a timestamp must still be paged without loss or repetition."""
    store = MemoryTaskStore()
    base = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for i, offset in enumerate(offsets):
        status = TaskStatus(state=S.COMPLETED, timestamp=base + timedelta(seconds=offset))
        store.save(Task(id=f"t{i:02d}", context_id="c", status=status), expected_version=None)
    runtime = make_runtime(lambda msg, c: reply("x"), store=store)
    try:
        seen, token = [], ""
        for _ in range(len(offsets) + 1):
            page = runtime.list_tasks(ListTasksRequest(page_size=size, page_token=token), ctx())
            assert page.total_size == len(offsets)
            seen += page.tasks
            token = page.next_page_token
            if not token:
                break
        assert sorted(t.id for t in seen) == sorted(f"t{i:02d}" for i in range(len(offsets)))
        keys = [(t.status.timestamp, t.id) for t in seen]
        assert keys == sorted(keys, reverse=True)
    finally:
        runtime.close()


# The store itself is covered by the contract suite in tests/stores/.


def test_runtime_scopes_tasks_to_the_caller(make: Any) -> None:
    runtime = make(lambda msg, c: input_required("?"))
    task = send_task(runtime, identity="alice")
    bob = ctx("bob")
    assert runtime.get_task(task.id, ctx("alice")) == task
    for attempt in (
        lambda: runtime.get_task(task.id, bob),
        lambda: runtime.cancel_task(CancelTaskRequest(id=task.id), bob),
        lambda: runtime.subscribe_to_task(SubscribeToTaskRequest(id=task.id), bob),
        lambda: runtime.send_message(send(task_id=task.id), bob),
        lambda: runtime.list_push_configs(ListTaskPushNotificationConfigsRequest(task_id=task.id),
                                          bob),
        lambda: runtime.get_task(task.id, ctx()),
    ):
        with pytest.raises(TaskNotFoundError):
            attempt()
    assert runtime.list_tasks(ListTasksRequest(), bob).total_size == 0
    assert runtime.list_tasks(ListTasksRequest(), ctx("alice")).total_size == 1


# -- transitions --------------------------------------------------------------------------


def test_every_transition_is_reported_with_its_timestamp(make: Any) -> None:
    seen: list[TransitionEvent] = []
    clock = Clock()
    replies = iter([input_required("?"), reply("done")])
    runtime = make(lambda msg, c: next(replies), clock=clock, on_transition=seen.append)
    task = send_task(runtime)
    done = send_task(runtime, task_id=task.id)
    assert [(e.from_state, e.to_state) for e in seen] == [
        (None, S.SUBMITTED),
        (S.SUBMITTED, S.WORKING),
        (S.WORKING, S.INPUT_REQUIRED),
        (S.INPUT_REQUIRED, S.WORKING),
        (S.WORKING, S.COMPLETED),
    ]
    stamps = [e.timestamp for e in seen]
    assert all(s is not None and s.tzinfo is not None for s in stamps)
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    assert stamps[-1] == done.status.timestamp
    assert {e.task_id for e in seen} == {task.id}


def test_a_failing_transition_hook_does_not_break_the_task(make: Any) -> None:
    def hook(event: TransitionEvent) -> None:
        raise RuntimeError("metrics down")

    task = send_task(make(lambda m, c: reply("ok"), on_transition=hook))
    assert task.status.state is S.COMPLETED


# -- push configs and cards ---------------------------------------------------------------


def test_push_config_crud(make: Any) -> None:
    runtime = make(lambda msg, c: input_required("?"))
    task = send_task(runtime)
    config = TaskPushNotificationConfig(
        task_id=task.id, push_notification_config=PushNotificationConfig(url="https://hook/a"))
    created = runtime.create_push_config(config, ctx())
    config_id = created.push_notification_config.id
    assert config_id is not None and config_id.startswith("pcfg-")
    named = replace(config, push_notification_config=PushNotificationConfig(
        url="https://hook/b", id="mine"))
    assert runtime.create_push_config(named, ctx()) == named
    get = GetTaskPushNotificationConfigRequest
    assert runtime.get_push_config(get(task_id=task.id, config_id=config_id), ctx()) == created
    assert runtime.get_push_config(get(task_id=task.id), ctx()) == created
    listed = runtime.list_push_configs(ListTaskPushNotificationConfigsRequest(task_id=task.id),
                                       ctx())
    assert listed.configs == (created, named)
    delete = DeleteTaskPushNotificationConfigRequest
    runtime.delete_push_config(delete(task_id=task.id, config_id="mine"), ctx())
    runtime.delete_push_config(delete(task_id=task.id, config_id="mine"), ctx())  # idempotent
    runtime.delete_push_config(delete(task_id=task.id, config_id="never-made"), ctx())
    with pytest.raises(TaskNotFoundError):
        runtime.delete_push_config(delete(task_id="tsk-none", config_id="mine"), ctx())
    with pytest.raises(TaskNotFoundError):
        runtime.get_push_config(get(task_id=task.id, config_id="mine"), ctx())
    assert runtime.list_push_configs(ListTaskPushNotificationConfigsRequest(task_id=task.id),
                                     ctx()).configs == (created,)
    with pytest.raises(TaskNotFoundError):
        runtime.create_push_config(replace(config, task_id="tsk-none"), ctx())


def test_a_push_config_given_on_send_is_stored_with_the_task(make: Any) -> None:
    runtime = make(lambda msg, c: reply("ok"))
    push = PushNotificationConfig(url="https://hook/inline", token="t")
    request = SendMessageRequest(message=user(), configuration=SendMessageConfiguration(
        push_notification_config=push))
    task = runtime.send_message(request, ctx())
    assert isinstance(task, Task)
    configs = runtime.list_push_configs(ListTaskPushNotificationConfigsRequest(task_id=task.id),
                                        ctx()).configs
    assert [c.push_notification_config.url for c in configs] == ["https://hook/inline"]


def test_cards(make: Any) -> None:
    runtime = make(lambda msg, c: reply("ok"))
    caps = runtime.agent_card().capabilities
    assert (caps.streaming, caps.push_notifications, caps.extended_agent_card) == (
        True, False, False)
    with pytest.raises(ExtendedAgentCardNotConfiguredError):
        runtime.extended_agent_card(ctx())
    extended = AgentCard(name="Secret menu")
    seen: list[Any] = []
    rich = make(lambda msg, c: reply("ok"), push_enabled=True,
                extended_card=lambda call: (seen.append(call.identity), extended)[1])
    assert rich.agent_card().capabilities.push_notifications is True
    assert rich.agent_card().capabilities.extended_agent_card is True
    assert rich.extended_agent_card(ctx("alice")) is extended and seen == ["alice"]


# -- several workers on one durable store -------------------------------------------------
#
# Two Runtimes on two SQLiteTaskStore handles of one file behave like two gunicorn
# workers (tests/multiprocess/ does it with real processes); poll and lease times
# are short so each test takes well under a second.


@pytest.fixture
def workers(make: Any, tmp_path: Any) -> Callable[..., tuple[Runtime, Runtime]]:
    from a2a_wsgi.stores import SQLiteTaskStore

    def pair(handler: Handler, **kwargs: Any) -> tuple[Runtime, Runtime]:
        kwargs.setdefault("clock", Clock())
        kwargs.setdefault("poll_interval", 0.02)
        kwargs.setdefault("lease_seconds", 0.6)
        path = tmp_path / "tasks.sqlite3"
        return (make(handler, store=SQLiteTaskStore(path), **kwargs),
                make(handler, store=SQLiteTaskStore(path), **kwargs))

    return pair


def test_any_worker_reads_lists_and_cancels_a_task_another_runs(workers: Any) -> None:
    started, stopped = threading.Event(), threading.Event()

    def handler(msg: Message, c: AgentContext) -> Any:
        started.set()
        for _ in range(int(WAIT / 0.01)):
            if c.is_cancelled():
                stopped.set()
                return reply("too late")
            threading.Event().wait(0.01)
        return reply("finished")

    a, b = workers(handler)
    task = send_task(a, blocking=False)
    assert started.wait(WAIT)
    assert b.get_task(task.id, ctx()).status.state is S.WORKING
    assert [t.id for t in b.list_tasks(ListTasksRequest(), ctx()).tasks] == [task.id]
    canceled = b.cancel_task(CancelTaskRequest(id=task.id), ctx())
    assert canceled.status.state is S.CANCELED
    assert stopped.wait(WAIT), "the running worker never observed the stored cancel"
    wait_for_state(a, task.id, S.CANCELED)
    assert a.get_task(task.id, ctx()).artifacts == ()  # the late reply was dropped


def test_a_subscriber_on_another_worker_hears_every_event(workers: Any) -> None:
    gate = threading.Event()

    def handler(msg: Message, c: AgentContext) -> Any:
        c.emit_artifact("part one")
        assert gate.wait(WAIT)
        return reply("done")

    a, b = workers(handler)
    task = send_task(a, blocking=False)
    stream = b.subscribe_to_task(SubscribeToTaskRequest(id=task.id), ctx())
    first = next(i for i in stream if i is not HEARTBEAT)
    assert first.event.id == task.id
    gate.set()
    rest = [i for i in stream if i is not HEARTBEAT]
    ids = [int(first.event_id)] + [int(i.event_id) for i in rest]
    assert ids == sorted(set(ids))
    assert rest[-1].event.status.state is S.COMPLETED
    # A resumed stream on the other worker replays exactly what came after the cursor.
    replay = list(a.subscribe_to_task(SubscribeToTaskRequest(id=task.id),
                                      ctx(last_event_id=first.event_id)))
    assert [i.event_id for i in replay] == [i.event_id for i in rest]


def test_a_cursor_older_than_the_kept_log_is_a_clear_error(make: Any, tmp_path: Any) -> None:
    from a2a_wsgi.stores import SQLiteTaskStore

    runtime = make(lambda msg, c: stream(["a", "b", "c", "d"]),
                   store=SQLiteTaskStore(tmp_path / "t.sqlite3", max_events=2),
                   lease_seconds=0.6, poll_interval=0.02)
    task = send_task(runtime)
    replay = runtime.subscribe_to_task(SubscribeToTaskRequest(id=task.id),
                                       ctx(last_event_id="1"))
    with pytest.raises(UnsupportedOperationError, match="no longer available"):
        list(replay)


def _orphan(store: Any, task_id: str = "tsk-orphan") -> Task:
    """A WORKING task whose worker died: its lease expired a moment ago."""
    msg = user("hi", task_id=task_id, context_id="ctx-o")
    task = Task(id=task_id, context_id="ctx-o",
                status=TaskStatus(state=S.WORKING, timestamp=datetime.now(timezone.utc)),
                history=(msg,))
    store.save(task, expected_version=None)
    now = datetime.now(timezone.utc)
    assert store.acquire_lease(task_id, "dead-worker", now, now=now - timedelta(seconds=1))
    return task


def test_the_reaper_fails_a_dead_workers_task_and_subscribers_hear_it(workers: Any) -> None:
    a, b = workers(lambda msg, c: reply("never runs"))
    task = _orphan(b.store)
    listening = a.subscribe_to_task(SubscribeToTaskRequest(id=task.id), ctx())
    assert next(listening).event.status.state is S.WORKING
    b.start_keeper()  # reaps within lease/3 seconds
    final = next(i for i in listening if i is not HEARTBEAT).event
    assert final.status.state is S.FAILED
    assert "lease expired" in final.status.message.parts[0].text
    # The reaper releases the lease just after it publishes the final event.
    deadline = time.monotonic() + WAIT
    while b.store.expired_leases(datetime.now(timezone.utc) + timedelta(days=1)):
        assert time.monotonic() < deadline, "the reaper kept the lease of a failed task"
        time.sleep(0.01)
    assert a.reap() == 0  # nothing left to take over


def test_an_agent_that_allows_it_is_rerun_after_worker_loss(workers: Any) -> None:
    seen: list[int] = []

    def handler(msg: Message, c: AgentContext) -> Any:
        seen.append(len(c.history))
        return reply(f"rerun of {msg.parts[0].text}")

    a, b = workers(handler)
    b.agent.rerun_on_worker_loss = True  # type: ignore[attr-defined]
    task = _orphan(a.store)
    assert b.reap() == 1
    done = wait_for_state(a, task.id, S.COMPLETED)
    assert done.artifacts[0].parts[0].text == "rerun of hi" and seen == [1]


def test_a_rerun_waiting_for_an_agent_thread_keeps_its_lease(workers: Any) -> None:
    """The reaper's lease on a re-run is renewed while the run waits in the pool: no
    reaper (another worker's, or this one's) takes the task over again meanwhile."""
    gate, runs = threading.Event(), []

    def handler(msg: Message, c: AgentContext) -> Any:
        runs.append(c.task_id)
        assert gate.wait(WAIT)
        return reply("rerun")

    a, b = workers(handler, max_workers=1)
    b.agent.rerun_on_worker_loss = True  # type: ignore[attr-defined]
    first, second = _orphan(a.store, "tsk-orphan-1"), _orphan(a.store, "tsk-orphan-2")
    assert b.reap() == 2  # one runs (held at the gate), the other waits for the thread
    b.start_keeper()
    threading.Event().wait(0.6 * 3)  # three lease lengths
    assert a.reap() == 0, "another worker took over a re-run that was waiting"
    gate.set()
    for task in (first, second):
        assert wait_for_state(a, task.id, S.COMPLETED).artifacts[0].parts[0].text == "rerun"
    b.close(wait=True)
    assert sorted(runs) == [first.id, second.id], "a waiting re-run was reaped and run again"


def test_a_push_planner_queues_entries_with_their_events(make: Any, tmp_path: Any) -> None:
    from a2a_wsgi.stores import OutboxEntry, SQLiteTaskStore

    calls: list[list[int]] = []

    def planner(task: Task, new: Any, configs: Any) -> list[OutboxEntry]:
        calls.append([seq for seq, _ in new])
        return [OutboxEntry(task_id=task.id, config_id=c.push_notification_config.id,
                            seq=seq, url=c.push_notification_config.url,
                            body=task.status.state.value.encode())
                for seq, _ in new for c in configs]

    store = SQLiteTaskStore(tmp_path / "t.sqlite3")
    runtime = make(lambda msg, c: reply("x"), store=store, push_planner=planner,
                   lease_seconds=0.6)
    config = SendMessageConfiguration(blocking=True, push_notification_config=(
        PushNotificationConfig(id="p1", url="https://hooks.example/p1")))
    result = runtime.send_message(SendMessageRequest(message=user(), configuration=config),
                                  ctx())
    assert isinstance(result, Task)
    seqs: list[int] = []
    now = datetime.now(timezone.utc) + timedelta(seconds=1)
    while batch := store.claim_deliveries(now, 10, "pusher", 30):
        (delivery,) = batch
        seqs.append(delivery.entry.seq)
        store.complete_delivery(delivery.id)
    assert seqs == [s for call in calls for s in call] == [1, 2, 3]


def test_planner_is_not_consulted_without_configs_and_history_is_bounded(make: Any) -> None:
    calls: list[Any] = []
    runtime = make(lambda msg, c: input_required("more?"),
                   push_planner=lambda *a: calls.append(a) or [], max_history=2)
    task = send_task(runtime)
    for text in ("one", "two"):
        runtime.send_message(send(text, task_id=task.id), ctx())
    stored = runtime.get_task(task.id, ctx())
    assert len(stored.history) == 2 and stored.history[-1].role is Role.AGENT
    assert calls == []


def test_tasks_are_scoped_by_tenant_too(make: Any) -> None:
    runtime = make(lambda msg, c: input_required("?"))
    result = runtime.send_message(send(), ctx(tenant="acme"))
    assert isinstance(result, Task)
    assert runtime.get_task(result.id, ctx(tenant="acme")).id == result.id
    with pytest.raises(TaskNotFoundError):
        runtime.get_task(result.id, ctx())
    assert not runtime.list_tasks(ListTasksRequest(), ctx()).tasks


def test_a_store_may_be_named_by_url(tmp_path: Any) -> None:
    from a2a_wsgi.stores import SQLiteTaskStore

    runtime = make_runtime(lambda msg, c: "hi", store=f"sqlite:///{tmp_path}/by-url.sqlite3")
    try:
        assert isinstance(runtime.store, SQLiteTaskStore)
        assert runtime.store.path == f"{tmp_path}/by-url.sqlite3"
        send_task(runtime)
    finally:
        runtime.close(wait=True)
    assert isinstance(make_runtime(lambda m, c: "x", store="memory").store, MemoryTaskStore)
    with pytest.raises(ValueError):
        make_runtime(lambda m, c: "x", store="redis://nope")
