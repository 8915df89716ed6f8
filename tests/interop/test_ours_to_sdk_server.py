"""Our blocking client (``a2a_client``) drives an agent built and served by the official SDK.

The SDK agent (``sdk_server.py``) runs under uvicorn in a subprocess and serves
1.0 and 0.3 on one JSON-RPC endpoint. Our client runs with ``version="auto"``
(it must choose 1.0 from the SDK's card), ``"1.0"`` and ``"0.3"``. A session hook
records every JSON-RPC request, so each test also checks the dialect on the wire.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from interop_support import require_sdk

from a2a_client import A2AClient, agent, agent_tools
from a2a_core.errors import (
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_core.models import (
    DataPart,
    FilePart,
    Message,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)

require_sdk()

pytestmark = pytest.mark.slow  # starts uvicorn in a subprocess (once per session, ~2 s)

#: requested version -> the version the client must end up speaking.
SPOKEN = {"auto": "1.0", "1.0": "1.0", "0.3": "0.3"}
METHODS = {
    "1.0": {"send": "SendMessage", "stream": "SendStreamingMessage", "get": "GetTask",
            "cancel": "CancelTask", "subscribe": "SubscribeToTask", "list": "ListTasks"},
    "0.3": {"send": "message/send", "stream": "message/stream", "get": "tasks/get",
            "cancel": "tasks/cancel", "subscribe": "tasks/resubscribe"},
}
SDK_STREAM = ("one ", "two ", "three")  # sdk_server.STREAM_CHUNKS
SDK_ASK_PROMPT = "Which numbers?"  # sdk_server.ASK_PROMPT


class Recorded:
    """A requests.Session whose JSON-RPC POSTs are logged as (A2A-Version, method)."""

    def __init__(self) -> None:
        self.session = requests.Session()
        self.calls: list[tuple[str | None, str]] = []
        self.card_statuses: list[int] = []
        self.session.hooks["response"].append(self._record)

    def _record(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        request = response.request
        if request.method == "GET":
            self.card_statuses.append(response.status_code)
        if request.method == "POST" and request.body:
            body = json.loads(request.body)
            self.calls.append((request.headers.get("A2A-Version"), body["method"]))

    def methods(self) -> list[str]:
        return [method for _, method in self.calls]


@pytest.fixture(params=list(SPOKEN))
def version(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def recorded() -> Iterator[Recorded]:
    rec = Recorded()
    yield rec
    rec.session.close()


@pytest.fixture
def client(sdk_url: str, version: str, recorded: Recorded) -> Iterator[A2AClient]:
    with A2AClient(sdk_url, version=version, session=recorded.session, timeout=(5, 10),
                   stream_idle_timeout=10) as c:
        yield c


def spoken(client: A2AClient, recorded: Recorded, *operations: str) -> None:
    """The calls used the negotiated version's method names and A2A-Version header."""
    version = client.version
    assert recorded.methods() == [METHODS[version][op] for op in operations]
    assert {header for header, _ in recorded.calls} == {version}


def artifact_text(task: Task) -> str:
    return "".join(p.text for a in task.artifacts for p in a.parts if isinstance(p, TextPart))


def test_card_and_version_choice(client: A2AClient, version: str, recorded: Recorded) -> None:
    card = client.get_card()
    assert client.get_card(refresh=True) == card  # the SDK's weak ETag revalidates
    assert recorded.card_statuses == [200, 304]
    assert card.name == "SDK Echo"
    assert [skill.id for skill in card.skills] == ["echo", "stream"]
    assert card.capabilities.streaming is True
    assert client.version == SPOKEN[version]
    assert client.endpoint.url.rstrip("/") == client.get_card().supported_interfaces[0].url \
        .rstrip("/")


def test_send_blocking(client: A2AClient, recorded: Recorded) -> None:
    task = client.send_message("hello SDK")
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert artifact_text(task) == "echo: hello SDK"
    assert task.artifacts[0].name == "echo"
    assert task.history and task.history[0].text == "hello SDK"
    spoken(client, recorded, "send")


def test_parts_round_trip(client: A2AClient, recorded: Recorded) -> None:
    """Text, data, file-by-URL and inline bytes survive the SDK's parsing and re-encoding."""
    parts = (
        TextPart(text="parts please"),
        DataPart(data={"a": 1, "nested": {"b": [True, None, "x"]}}),
        FilePart(url="https://example.com/f.png", filename="f.png", media_type="image/png"),
        FilePart(raw=b"\x00\x01 bytes", filename="b.bin", media_type="application/octet-stream"),
    )
    sent = Message(message_id="parts-1", role=Role.USER, parts=parts)
    task = client.send_message(sent)
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    (artifact,) = task.artifacts
    assert artifact.parts == parts
    spoken(client, recorded, "send")


def test_direct_message_reply(client: A2AClient, recorded: Recorded) -> None:
    """An SDK executor that answers with a bare Message: no task, in both dialects."""
    answer = client.send_message("direct hi")
    assert isinstance(answer, Message)
    assert answer.role is Role.AGENT and answer.text == "direct: direct hi"
    with client.stream_message("direct streamed") as events:
        streamed = list(events)
    assert len(streamed) == 1 and isinstance(streamed[0], Message)
    assert streamed[0].text == "direct: direct streamed"
    spoken(client, recorded, "send", "stream")


def test_send_and_wait(client: A2AClient, recorded: Recorded) -> None:
    task = client.send_and_wait("polled", poll_every=0.05, timeout=10)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert artifact_text(task) == "echo: polled"
    assert recorded.methods()[0] == METHODS[client.version]["send"]
    # The SDK's card streams: the wait follows SubscribeToTask, then one GetTask
    # (or polls GetTask when the task finished before the subscription).
    names = METHODS[client.version]
    assert set(recorded.methods()[1:]) <= {names["get"], names["subscribe"]}
    assert len(recorded.methods()) <= 3


def test_send_and_wait_stops_at_input_required(client: A2AClient) -> None:
    task = client.send_and_wait("ask me", poll_every=0.05, timeout=10)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.INPUT_REQUIRED
    assert task.status.message is not None and task.status.message.text == SDK_ASK_PROMPT


def test_stream(client: A2AClient, recorded: Recorded) -> None:
    with client.stream_message("stream please") as events:
        received = list(events)
    assert isinstance(received[0], Task)
    task_id = received[0].id
    chunks = [e for e in received if isinstance(e, TaskArtifactUpdateEvent)]
    assert "".join(c.artifact.parts[0].text for c in chunks) == "".join(SDK_STREAM)  # type: ignore[union-attr]
    assert [c.append for c in chunks] == [False, True, True]
    assert [c.last_chunk for c in chunks] == [False, False, True]
    assert {c.artifact.artifact_id for c in chunks} == {"counting"}
    statuses = [e for e in received if isinstance(e, TaskStatusUpdateEvent)]
    assert [s.status.state for s in statuses] == [TaskState.WORKING, TaskState.COMPLETED]
    assert all(e.task_id == task_id for e in [*chunks, *statuses])
    if client.version == "0.3":
        assert [s.final for s in statuses] == [False, True]
    spoken(client, recorded, "stream")


def test_get_task(client: A2AClient, recorded: Recorded) -> None:
    sent = client.send_message("remember me")
    assert isinstance(sent, Task)
    got = client.get_task(sent.id, history_length=1)
    assert got.id == sent.id and got.context_id == sent.context_id
    assert got.status.state is TaskState.COMPLETED
    assert artifact_text(got) == "echo: remember me"
    assert len(got.history) == 1
    spoken(client, recorded, "send", "get")


def test_cancel(client: A2AClient, recorded: Recorded) -> None:
    sent = client.send_message("hold it", blocking=False)
    assert isinstance(sent, Task)
    assert not sent.status.state.is_terminal
    canceled = client.cancel_task(sent.id)
    assert canceled.id == sent.id
    assert canceled.status.state is TaskState.CANCELED
    assert client.get_task(sent.id).status.state is TaskState.CANCELED
    spoken(client, recorded, "send", "cancel", "get")


def test_subscribe_sees_cancel(client: A2AClient, recorded: Recorded) -> None:
    sent = client.send_message("hold on", blocking=False)
    assert isinstance(sent, Task)
    received: list[object] = []
    attached = threading.Event()

    def watch() -> None:
        with client.subscribe(sent.id) as events:
            for event in events:
                received.append(event)
                attached.set()

    watcher = threading.Thread(target=watch)
    watcher.start()
    assert attached.wait(10), "no event from SubscribeToTask"
    client.cancel_task(sent.id)
    watcher.join(10)
    assert not watcher.is_alive()
    assert isinstance(received[0], Task) and received[0].id == sent.id
    last = received[-1]
    state = last.status.state if isinstance(last, Task | TaskStatusUpdateEvent) else None
    assert state is TaskState.CANCELED
    assert sorted(recorded.methods()) == sorted(
        METHODS[client.version][op] for op in ("send", "subscribe", "cancel"))


def test_typed_errors(client: A2AClient) -> None:
    """The SDK's error codes arrive as the core's own exception classes."""
    with pytest.raises(TaskNotFoundError):
        client.get_task("no-such-task")
    done = client.send_message("finished")
    assert isinstance(done, Task)
    with pytest.raises(TaskNotCancelableError):
        client.cancel_task(done.id)
    with pytest.raises(UnsupportedOperationError):  # subscribing to a terminal task
        list(client.subscribe(done.id))
    with pytest.raises(PushNotificationNotSupportedError):  # the SDK card declares none
        client.create_task_push_notification_config(
            done.id, PushNotificationConfig(url="http://127.0.0.1:9/hook"))


def test_list_tasks_1_0(sdk_url: str, recorded: Recorded) -> None:
    with A2AClient(sdk_url, version="1.0", session=recorded.session, timeout=(5, 10)) as client:
        first = client.send_message("list one")
        assert isinstance(first, Task)
        second = client.send_message("list two", context_id=first.context_id)
        assert isinstance(second, Task)
        in_context = list(client.list_tasks(context_id=first.context_id))
        assert sorted(t.id for t in in_context) == sorted([first.id, second.id])
        paged = list(client.list_tasks(context_id=first.context_id, page_size=1))
        assert sorted(t.id for t in paged) == sorted([first.id, second.id])
    # one call unpaged, then two pages of one (the second page ends the listing)
    assert recorded.methods()[2:] == ["ListTasks"] * 3


@pytest.mark.parametrize(("text", "output", "is_error", "state"), [
    ("hello tools", "echo: hello tools", False, "completed"),
    ("ask about sums", f"{SDK_ASK_PROMPT}", True, "input-required"),
])
def test_agent_tools(sdk_url: str, text: str, output: str, is_error: bool, state: str) -> None:
    """The seed's tools path: descriptor -> one tool per skill -> the executor's output."""
    descriptor = agent(f"{sdk_url}/.well-known/agent-card.json", timeout=10_000, poll_every=50)
    tools = agent_tools(descriptor)
    assert [tool.name for tool in tools] == ["SDK_Echo_echo", "SDK_Echo_stream"]
    assert [tool.description for tool in tools] == ["Echoes the task text",
                                                    "Streams three chunks"]
    result = tools[0].execute({"task": text})
    assert result.is_error is is_error
    assert result.output.endswith(output)
    assert result.metadata["state"] == state
    assert result.metadata["agent"] == "SDK Echo"
    assert result.metadata["taskId"]
