"""How the dispatcher answers errors of a service's own streams.

A service's stream may fail lazily, when it is first iterated. For
SubscribeToTask the first item is the task as it is now, so the dispatcher
takes it before answering and such an error is plain JSON; a send stream (and a
resumed subscription) is never iterated before the answer, since its first item
may wait for the agent, and its error is an SSE event. An error after the first
event is always an SSE event.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import Any, cast

import pytest

from a2a_core._http import Headers, HttpRequest, HttpResponse
from a2a_core._server import Dispatcher, DispatcherConfig
from a2a_core._service import HEARTBEAT, A2AService, CallContext, StreamItem
from a2a_core.errors import InvalidParamsError, TaskNotFoundError, UnsupportedOperationError
from a2a_core.models import (
    AgentCapabilities,
    AgentCard,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

TASK = Task(id="tsk-1", context_id="c", status=TaskStatus(state=TaskState.WORKING))
DONE = TaskStatusUpdateEvent(task_id="tsk-1", context_id="c",
                             status=TaskStatus(state=TaskState.COMPLETED))
VERSIONS = ["0.3", "1.0"]
METHODS = {"subscribe": {"0.3": "tasks/resubscribe", "1.0": "SubscribeToTask"},
           "stream": {"0.3": "message/stream", "1.0": "SendStreamingMessage"}}


class LazyStreams:
    """A service whose streams are generators running ``script`` when first iterated."""

    def __init__(self, script: Callable[[], Iterator[StreamItem]]) -> None:
        self.script = script
        self.streams: list[Iterator[StreamItem]] = []
        self.closed = 0

    def agent_card(self) -> AgentCard:
        return AgentCard(name="t", description="t", version="1",
                         capabilities=AgentCapabilities(streaming=True))

    def get_task(self, task_id: str, ctx: CallContext) -> Task:
        return TASK

    def _stream(self) -> Iterator[StreamItem]:
        def run() -> Iterator[StreamItem]:
            try:
                yield from self.script()
            finally:
                self.closed += 1

        stream = run()
        self.streams.append(stream)
        return stream

    def subscribe_to_task(self, request: SubscribeToTaskRequest,
                          ctx: CallContext) -> Iterator[StreamItem]:
        return self._stream()

    def send_streaming_message(self, request: SendMessageRequest,
                               ctx: CallContext) -> Iterator[StreamItem]:
        return self._stream()


def call(service: LazyStreams, op: str, version: str,
         last_event_id: str | None = None) -> HttpResponse:
    dispatcher = Dispatcher(cast(A2AService, service), DispatcherConfig(
        base_url="http://agent/", last_modified=datetime(2026, 1, 1, tzinfo=timezone.utc)))
    headers = {"Content-Type": "application/json"}
    if version == "1.0":
        headers["A2A-Version"] = "1.0"
    if last_event_id is not None:
        headers["Last-Event-ID"] = last_event_id
    if op == "subscribe":
        params: dict[str, Any] = {"id": "tsk-1"}
    else:
        message: dict[str, Any] = {"messageId": "m", "parts": [{"text": "hi"}]}
        message.update({"kind": "message", "role": "user"} if version == "0.3"
                       else {"role": "ROLE_USER"})
        params = {"message": message}
    body = {"jsonrpc": "2.0", "id": 5, "method": METHODS[op][version], "params": params}
    request = HttpRequest(method="POST", headers=Headers(headers), body=json.dumps(body).encode())
    return dispatcher.handle(request)


def content_type(response: HttpResponse) -> str:
    return dict(response.headers)["Content-Type"]


def sse_payloads(response: HttpResponse) -> list[dict[str, Any]]:
    assert content_type(response) == "text/event-stream"
    assert not isinstance(response.body, bytes)
    raw = b"".join(response.body).decode()
    return [json.loads(line[5:]) for line in raw.splitlines() if line.startswith("data:")]


def raises_at_once(error: Exception) -> Callable[[], Iterator[StreamItem]]:
    def script() -> Iterator[StreamItem]:
        raise error
        yield TASK  # a generator: nothing runs until it is iterated

    return script


def task_then(error: Exception) -> Callable[[], Iterator[StreamItem]]:
    def script() -> Iterator[StreamItem]:
        yield TASK
        raise error

    return script


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(("error", "code"), [
    (TaskNotFoundError("Task tsk-1 not found"), -32001),
    (UnsupportedOperationError("gone"), -32004),
    (InvalidParamsError("params.id: bad"), -32602),
    (KeyError("a bug in the service"), -32603),
])
def test_a_subscription_failing_before_its_first_item_is_plain_json(
        version: str, error: Exception, code: int) -> None:
    service = LazyStreams(raises_at_once(error))
    response = call(service, "subscribe", version)
    assert response.status == 200 and content_type(response) == "application/json"
    assert isinstance(response.body, bytes)
    answer = json.loads(response.body)
    assert answer["id"] == 5 and answer["error"]["code"] == code
    if code == -32603:
        assert "a bug" not in response.body.decode()  # no leak of the exception text
    assert service.closed == 1


@pytest.mark.parametrize("version", VERSIONS)
def test_a_subscription_error_after_the_task_is_an_sse_event(version: str) -> None:
    service = LazyStreams(task_then(UnsupportedOperationError("lost the log")))
    events = sse_payloads(call(service, "subscribe", version))
    assert [("result" in e, "error" in e) for e in events] == [(True, False), (False, True)]
    assert events[1]["error"]["code"] == -32004 and events[1]["id"] == 5


@pytest.mark.parametrize("version", VERSIONS)
def test_the_first_item_taken_early_is_still_sent_first_and_closes_the_producer(
        version: str) -> None:
    def script() -> Iterator[StreamItem]:
        yield TASK
        yield HEARTBEAT
        yield DONE

    service = LazyStreams(script)
    response = call(service, "subscribe", version)
    (stream,) = service.streams
    assert inspect.getgeneratorstate(cast(Any, stream)) == inspect.GEN_SUSPENDED
    events = sse_payloads(response)
    assert len(events) == 2 and all("result" in e for e in events)
    first = events[0]["result"]
    assert (first.get("task") or first)["id"] == "tsk-1"

    unread = LazyStreams(script)
    response = call(unread, "subscribe", version)
    assert not isinstance(response.body, bytes)
    cast(Any, response.body).close()  # the client hung up before the first chunk
    assert unread.closed == 1


@pytest.mark.parametrize("version", VERSIONS)
def test_an_empty_subscription_is_an_empty_stream(version: str) -> None:
    service = LazyStreams(lambda: iter(()))
    assert sse_payloads(call(service, "subscribe", version)) == []


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(("op", "last_event_id"), [("stream", None), ("subscribe", "3")],
                         ids=["send-stream", "resumed-subscription"])
def test_streams_that_may_wait_for_the_agent_are_not_started_early(
        version: str, op: str, last_event_id: str | None) -> None:
    """Their first item may take as long as the agent: the answer does not wait for it."""
    service = LazyStreams(raises_at_once(TaskNotFoundError("Task tsk-1 not found")))
    response = call(service, op, version, last_event_id)
    (stream,) = service.streams
    assert inspect.getgeneratorstate(cast(Any, stream)) == inspect.GEN_CREATED
    (event,) = sse_payloads(response)
    assert event["id"] == 5 and event["error"]["code"] == -32001


@pytest.mark.parametrize("version", VERSIONS)
def test_a_send_stream_error_after_its_first_item_is_an_sse_event(version: str) -> None:
    service = LazyStreams(task_then(TaskNotFoundError("Task tsk-1 not found")))
    events = sse_payloads(call(service, "stream", version))
    assert [("result" in e, "error" in e) for e in events] == [(True, False), (False, True)]
    assert events[1]["error"]["code"] == -32001
