"""The official SDK's client (``a2a-sdk``) drives our A2AApp, in A2A 1.0 and 0.3.

Each version gets servers whose card offers only that version, so the SDK's own
card parsing and transport choice pick the dialect (1.0: ``JsonRpcTransport``;
0.3: ``CompatJsonRpcTransport``, which reads ``url``/``protocolVersion``). Every
JSON-RPC request is recorded from the SDK's httpx client, so each test also
checks that the dialect it meant to exercise is the one on the wire.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest
from interop_support import load_example, require_sdk

from a2a_core.models import AgentSkill, Message, TaskState
from a2a_wsgi import Agent as OurAgent
from a2a_wsgi import AgentContext, ServerHandle, message, reply, stream
from a2a_wsgi.settings import ProtocolSettings

require_sdk()

import httpx  # noqa: E402
from a2a.client import ClientConfig, create_client  # noqa: E402
from a2a.client.card_resolver import A2ACardResolver  # noqa: E402
from a2a.types import a2a_pb2 as pb  # noqa: E402
from a2a.utils.errors import (  # noqa: E402
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from google.protobuf.struct_pb2 import Struct, Value  # noqa: E402

T = TypeVar("T")
VERSIONS = ["1.0", "0.3"]
#: The JSON-RPC method the SDK must put on the wire, per version and operation.
METHODS = {
    "1.0": {"send": "SendMessage", "stream": "SendStreamingMessage", "get": "GetTask",
            "cancel": "CancelTask", "subscribe": "SubscribeToTask", "list": "ListTasks"},
    "0.3": {"send": "message/send", "stream": "message/stream", "get": "tasks/get",
            "cancel": "tasks/cancel", "subscribe": "tasks/resubscribe"},
}
STATES = pb.TaskState


def run(coro: Awaitable[T]) -> T:
    """Each test drives the async SDK in a fresh event loop of its own."""
    async def main() -> T:
        return await asyncio.wait_for(coro, 20)
    return asyncio.run(main())


@dataclass
class Wire:
    """JSON-RPC requests the SDK sent: (A2A-Version header, method) per POST."""

    calls: list[tuple[str | None, str]] = field(default_factory=list)

    async def on_request(self, request: httpx.Request) -> None:
        if request.method == "POST":
            body = json.loads(await request.aread())
            self.calls.append((request.headers.get("a2a-version"), body["method"]))

    def methods(self) -> list[str]:
        return [method for _, method in self.calls]


@asynccontextmanager
async def sdk_client(url: str, wire: Wire, *, streaming: bool,
                     polling: bool = False) -> AsyncIterator[Any]:
    """The SDK's own path: resolve our card from the base URL, let the factory choose."""
    async with httpx.AsyncClient(event_hooks={"request": [wire.on_request]},
                                 timeout=10) as http:
        config = ClientConfig(httpx_client=http, streaming=streaming, polling=polling)
        client = await create_client(url, config)
        try:
            yield client
        finally:
            await client.close()


def user_message(text: str) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(
        message=pb.Message(message_id=f"m-{time.monotonic_ns()}", role=pb.Role.ROLE_USER,
                           parts=[pb.Part(text=text)])
    )


def artifact_texts(task: pb.Task) -> list[str]:
    return [part.text for artifact in task.artifacts for part in artifact.parts]


def hold(message: Message, ctx: AgentContext) -> Any:
    """WORKING until canceled (at most 10 s): the task cancel and subscribe need."""
    ctx.emit_status(TaskState.WORKING, "holding")
    deadline = time.monotonic() + 10
    while not ctx.is_cancelled() and time.monotonic() < deadline:
        time.sleep(0.01)
    return None if ctx.is_cancelled() else reply("released")


def count(message: Message, ctx: AgentContext) -> Any:
    """Three chunks of one artifact."""
    return stream(iter(["one ", "two ", "three"]), artifact_name="counting")


def direct(msg: Message, ctx: AgentContext) -> Any:
    """A bare Message answer: no task is kept."""
    return message(f"direct: {msg.text}")


@dataclass
class Ours:
    version: str
    echo: ServerHandle
    calc: ServerHandle
    hold: ServerHandle
    count: ServerHandle
    direct: ServerHandle


@pytest.fixture(scope="module", params=VERSIONS)
def ours(request: pytest.FixtureRequest, serve_ours: Callable[..., ServerHandle]) -> Ours:
    """Our example agents (and two helpers), each serving only ``version`` on its card."""
    version: str = request.param
    only = {"protocol": ProtocolSettings(versions=(version,))}
    skills = [AgentSkill(id="work", name="Work")]
    return Ours(
        version=version,
        echo=serve_ours(load_example("echo").EchoAgent(), **only),
        calc=serve_ours(load_example("calc").CalcAgent(), **only),
        hold=serve_ours(OurAgent.from_function(hold, name="Hold", skills=skills), **only),
        count=serve_ours(OurAgent.from_function(count, name="Count", skills=skills), **only),
        direct=serve_ours(OurAgent.from_function(direct, name="Direct", skills=skills), **only),
    )


def assert_dialect(wire: Wire, version: str, *operations: str) -> None:
    """Every call carried ``A2A-Version: version`` and used that version's method names."""
    assert wire.methods() == [METHODS[version][op] for op in operations]
    assert {header for header, _ in wire.calls} == {version}


def test_sdk_resolves_our_card(ours: Ours) -> None:
    async def resolve() -> pb.AgentCard:
        async with httpx.AsyncClient() as http:
            return await A2ACardResolver(http, ours.calc.url).get_agent_card()

    card = run(resolve())
    assert card.name == "Calc Agent"
    assert [skill.id for skill in card.skills] == ["calc"]
    assert list(card.skills[0].examples) == ["add 2 and 3"]
    assert card.capabilities.streaming
    expected = [("JSONRPC", ours.version, ours.calc.url + "/")]
    if ours.version == "1.0":  # HTTP+JSON is a 1.0 binding
        expected.append(("HTTP+JSON", "1.0", ours.calc.url + "/rest"))
    assert [(i.protocol_binding, i.protocol_version, i.url)
            for i in card.supported_interfaces] == expected


def test_sdk_picks_1_0_from_our_dual_card(serve_ours: Callable[..., ServerHandle]) -> None:
    """Our default card offers both versions on one URL; the SDK must choose 1.0."""
    handle = serve_ours(load_example("echo").EchoAgent())
    wire = Wire()

    async def send() -> pb.StreamResponse:
        async with sdk_client(handle.url, wire, streaming=False) as client:
            return [event async for event in client.send_message(user_message("hi"))][0]

    assert artifact_texts(run(send()).task) == ["hi"]
    assert_dialect(wire, "1.0", "send")


def test_send_blocking_echo(ours: Ours) -> None:
    wire = Wire()

    async def send() -> list[pb.StreamResponse]:
        async with sdk_client(ours.echo.url, wire, streaming=False) as client:
            return [event async for event in client.send_message(user_message("hello SDK"))]

    (event,) = run(send())
    task = event.task
    assert task.status.state == STATES.TASK_STATE_COMPLETED
    assert artifact_texts(task) == ["hello SDK"]
    assert task.id and task.context_id
    assert [m.role for m in task.history][:1] == [pb.Role.ROLE_USER]
    assert task.history[0].parts[0].text == "hello SDK"
    assert_dialect(wire, ours.version, "send")


def test_parts_round_trip(ours: Ours) -> None:
    """Our echo agent returns the SDK's text, data, URL and raw parts unchanged."""
    data = Struct()
    data.update({"a": 1, "nested": {"b": [True, None, "x"]}})
    parts = [
        pb.Part(text="t"),
        pb.Part(data=Value(struct_value=data)),
        pb.Part(url="https://example.com/f.png", media_type="image/png", filename="f.png"),
        pb.Part(raw=b"\x00\x01 bytes", media_type="application/octet-stream",
                filename="b.bin"),
    ]
    wire = Wire()

    async def send() -> pb.Task:
        request = pb.SendMessageRequest(message=pb.Message(
            message_id="parts-1", role=pb.Role.ROLE_USER, parts=parts))
        async with sdk_client(ours.echo.url, wire, streaming=False) as client:
            return [event async for event in client.send_message(request)][0].task

    task = run(send())
    assert task.status.state == STATES.TASK_STATE_COMPLETED
    assert list(task.artifacts[0].parts) == parts
    assert_dialect(wire, ours.version, "send")


def test_direct_message_reply(ours: Ours) -> None:
    """An agent answering with a bare Message (no task), sent and streamed."""
    wire = Wire()

    async def both() -> tuple[list[pb.StreamResponse], list[pb.StreamResponse]]:
        async with sdk_client(ours.direct.url, wire, streaming=False) as client, \
                sdk_client(ours.direct.url, wire, streaming=True) as streaming:
            sent = [e async for e in client.send_message(user_message("hi"))]
            streamed = [e async for e in streaming.send_message(user_message("yo"))]
            return sent, streamed

    sent, streamed = run(both())
    for events, text in ((sent, "hi"), (streamed, "yo")):
        assert [e.WhichOneof("payload") for e in events] == ["message"]
        assert events[0].message.role == pb.Role.ROLE_AGENT
        assert [p.text for p in events[0].message.parts] == [f"direct: {text}"]
    assert_dialect(wire, ours.version, "send", "stream")


@pytest.mark.parametrize(("text", "state", "answer"), [
    ("add 2 and 3", "TASK_STATE_COMPLETED", "The sum is 5."),
    ("hello", "TASK_STATE_INPUT_REQUIRED", "Which numbers should I add?"),
])
def test_send_calc(ours: Ours, text: str, state: str, answer: str) -> None:
    """The seed's Calc agent through the SDK: an artifact, or an input-required prompt."""
    wire = Wire()

    async def send() -> pb.Task:
        async with sdk_client(ours.calc.url, wire, streaming=False) as client:
            return [event async for event in client.send_message(user_message(text))][0].task

    task = run(send())
    assert pb.TaskState.Name(task.status.state) == state
    if task.status.state == STATES.TASK_STATE_COMPLETED:
        assert artifact_texts(task) == [answer]
    else:
        assert [p.text for p in task.status.message.parts] == [answer]
        assert task.status.message.role == pb.Role.ROLE_AGENT


def test_stream_echo(ours: Ours) -> None:
    wire = Wire()

    async def consume() -> list[pb.StreamResponse]:
        async with sdk_client(ours.echo.url, wire, streaming=True) as client:
            return [event async for event in client.send_message(user_message("streamed"))]

    events = run(consume())
    kinds = [event.WhichOneof("payload") for event in events]
    assert kinds[0] == "task"  # 1.0: a stream MUST begin with the Task
    assert kinds[-1] == "status_update"
    assert events[-1].status_update.status.state == STATES.TASK_STATE_COMPLETED
    ids = {events[0].task.id} | {
        getattr(event, kind).task_id for event, kind in zip(events[1:], kinds[1:], strict=True)
    }
    assert len(ids) == 1
    artifacts = [event.artifact_update.artifact for event in events
                 if event.HasField("artifact_update")]
    assert [part.text for artifact in artifacts for part in artifact.parts] == ["streamed"]
    assert_dialect(wire, ours.version, "stream")


def test_stream_chunks_append(ours: Ours) -> None:
    """Chunks of one artifact keep their id, ``append`` and ``lastChunk`` through the SDK."""
    wire = Wire()

    async def consume() -> list[pb.TaskArtifactUpdateEvent]:
        async with sdk_client(ours.count.url, wire, streaming=True) as client:
            return [event.artifact_update
                    async for event in client.send_message(user_message("count"))
                    if event.HasField("artifact_update")]

    updates = run(consume())
    assert "".join(u.artifact.parts[0].text for u in updates) == "one two three"
    assert len({u.artifact.artifact_id for u in updates}) == 1
    assert [u.append for u in updates][1:] == [True] * (len(updates) - 1)
    assert updates[-1].last_chunk


def test_get_task(ours: Ours) -> None:
    wire = Wire()

    async def send_then_get() -> tuple[pb.Task, pb.Task]:
        async with sdk_client(ours.echo.url, wire, streaming=False) as client:
            sent = [e async for e in client.send_message(user_message("keep me"))][0].task
            got = await client.get_task(pb.GetTaskRequest(id=sent.id, history_length=1))
            return sent, got

    sent, got = run(send_then_get())
    assert got.id == sent.id and got.context_id == sent.context_id
    assert got.status.state == STATES.TASK_STATE_COMPLETED
    assert artifact_texts(got) == ["keep me"]
    assert len(got.history) == 1  # historyLength honoured
    assert_dialect(wire, ours.version, "send", "get")


def test_cancel_while_subscribed(ours: Ours) -> None:
    """Non-blocking send, subscribe, cancel: the subscriber sees CANCELED and the stream ends."""
    wire = Wire()

    async def scenario() -> tuple[pb.Task, pb.Task, list[pb.StreamResponse], pb.Task]:
        async with sdk_client(ours.hold.url, wire, streaming=False, polling=True) as client, \
                sdk_client(ours.hold.url, wire, streaming=True) as streaming:
            sent = [e async for e in client.send_message(user_message("hold on"))][0].task
            events: list[pb.StreamResponse] = []
            first = asyncio.Event()

            async def subscribe() -> None:
                async for event in streaming.subscribe(pb.SubscribeToTaskRequest(id=sent.id)):
                    events.append(event)
                    first.set()

            watcher = asyncio.create_task(subscribe())
            await asyncio.wait_for(first.wait(), 5)
            canceled = await client.cancel_task(pb.CancelTaskRequest(id=sent.id))
            await asyncio.wait_for(watcher, 5)
            after = await client.get_task(pb.GetTaskRequest(id=sent.id))
            return sent, canceled, events, after

    sent, canceled, events, after = run(scenario())
    assert sent.status.state in (STATES.TASK_STATE_SUBMITTED, STATES.TASK_STATE_WORKING)
    assert canceled.id == sent.id
    assert canceled.status.state == STATES.TASK_STATE_CANCELED
    assert after.status.state == STATES.TASK_STATE_CANCELED
    assert events[0].WhichOneof("payload") == "task"  # the snapshot first
    assert events[0].task.status.state == STATES.TASK_STATE_WORKING
    assert events[-1].status_update.status.state == STATES.TASK_STATE_CANCELED
    assert sorted(wire.methods()) == sorted(
        METHODS[ours.version][op] for op in ("send", "subscribe", "cancel", "get"))
    assert {header for header, _ in wire.calls} == {ours.version}


def test_typed_errors(ours: Ours) -> None:
    """Our error codes map onto the SDK's own exception classes."""
    wire = Wire()

    async def scenario() -> None:
        async with sdk_client(ours.echo.url, wire, streaming=False) as client:
            with pytest.raises(TaskNotFoundError):
                await client.get_task(pb.GetTaskRequest(id="no-such-task"))
            done = [e async for e in client.send_message(user_message("x"))][0].task
            with pytest.raises(TaskNotCancelableError):
                await client.cancel_task(pb.CancelTaskRequest(id=done.id))
            with pytest.raises(PushNotificationNotSupportedError):  # our card declares none
                await client.create_task_push_notification_config(
                    pb.TaskPushNotificationConfig(task_id=done.id, url="http://127.0.0.1:9/h"))

    run(scenario())
    assert wire.methods()[:3] == [METHODS[ours.version][op] for op in ("get", "send", "cancel")]


#: Errors known before a stream starts (task missing or terminal) reach the client as a
#: plain JSON-RPC error response (application/json), which the SDK reads as such.
@pytest.mark.parametrize("case", ["subscribe-terminal", "subscribe-missing", "stream-missing",
                                  "stream-terminal"])
def test_stream_errors_are_typed(ours: Ours, case: str, request: pytest.FixtureRequest) -> None:
    """Errors the server knows before streaming reach the SDK as its typed exceptions."""
    expected = TaskNotFoundError if case.endswith("missing") else UnsupportedOperationError

    async def scenario() -> None:
        async with sdk_client(ours.echo.url, Wire(), streaming=False) as client, \
                sdk_client(ours.echo.url, Wire(), streaming=True) as streaming:
            if case.startswith("stream"):
                follow_up = user_message("more")
                follow_up.message.task_id = "no-such-task"
                if case == "stream-terminal":
                    done = [e async for e in client.send_message(user_message("x"))][0].task
                    follow_up.message.task_id = done.id
                with pytest.raises(expected):
                    [e async for e in streaming.send_message(follow_up)]
                return
            task_id = "no-such-task"
            if case == "subscribe-terminal":
                task_id = [e async for e in client.send_message(user_message("x"))][0].task.id
            with pytest.raises(expected):
                [e async for e in streaming.subscribe(pb.SubscribeToTaskRequest(id=task_id))]

    run(scenario())


def test_list_tasks_1_0(serve_ours: Callable[..., ServerHandle]) -> None:
    """ListTasks exists only in 1.0 (the SDK's 0.3 transport raises NotImplementedError)."""
    handle = serve_ours(
        load_example("echo").EchoAgent(),
        protocol=ProtocolSettings(versions=("1.0",)),
    )
    wire = Wire()

    async def scenario() -> tuple[list[str], pb.ListTasksResponse, pb.ListTasksResponse]:
        async with sdk_client(handle.url, wire, streaming=False) as client:
            sent = []
            for i in range(3):
                events = [e async for e in client.send_message(user_message(f"n{i}"))]
                sent.append(events[0].task)
            listed = await client.list_tasks(pb.ListTasksRequest(
                context_id=sent[1].context_id))
            everything = await client.list_tasks(pb.ListTasksRequest(page_size=2))
            return [task.id for task in sent], listed, everything

    ids, listed, everything = run(scenario())
    assert [task.id for task in listed.tasks] == [ids[1]]
    assert len(everything.tasks) == 2 and everything.next_page_token
    assert {task.id for task in everything.tasks} <= set(ids)
    assert_dialect(wire, "1.0", "send", "send", "send", "list", "list")
