"""HTTP+JSON interop with the official SDK (``a2a-sdk`` 1.3.0), both directions.

* The SDK's client, restricted to ``supported_protocol_bindings=["HTTP+JSON"]``, reads
  our card, picks our ``/rest`` interface by itself and calls every operation; each
  request is recorded from its httpx client, so every test also checks that HTTP+JSON
  paths (not JSON-RPC) were on the wire.
* Our ``A2AClient(binding="HTTP+JSON")`` calls the SDK's own REST server (the
  ``create_rest_routes`` app of tests/client/test_rest_client.py, run as a script).
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
from interop_support import require_sdk

from a2a_client import A2AClient
from a2a_core.errors import TaskNotCancelableError as OurTaskNotCancelable
from a2a_core.errors import TaskNotFoundError as OurTaskNotFound
from a2a_core.models import AgentSkill, Message, PushNotificationConfig, Task, TaskState
from a2a_core.models import TaskStatusUpdateEvent as OurStatusUpdate
from a2a_wsgi import Agent as OurAgent
from a2a_wsgi import AgentContext, ServerHandle, message, reply, stream
from a2a_wsgi.settings import CardSettings

require_sdk()

import httpx  # noqa: E402
from a2a.client import ClientConfig, create_client  # noqa: E402
from a2a.types import a2a_pb2 as pb  # noqa: E402
from a2a.utils.errors import (  # noqa: E402
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

pytestmark = pytest.mark.slow

T = TypeVar("T")
STATES = pb.TaskState
SDK_REST_SERVER = Path(__file__).resolve().parents[1] / "client" / "test_rest_client.py"


def run(coro: Awaitable[T]) -> T:
    async def main() -> T:
        return await asyncio.wait_for(coro, 20)
    return asyncio.run(main())


@dataclass
class Wire:
    """Requests the SDK sent: (method, path, A2A-Version header)."""

    calls: list[tuple[str, str, str | None]] = field(default_factory=list)

    async def on_request(self, request: httpx.Request) -> None:
        self.calls.append((request.method, request.url.path, request.headers.get("a2a-version")))

    def rest_calls(self) -> list[tuple[str, str]]:
        """(method, path below /rest) of every call but the card's."""
        return [(m, p.removeprefix("/rest")) for m, p, _ in self.calls
                if not p.endswith("agent-card.json")]


@asynccontextmanager
async def sdk_client(url: str, wire: Wire, *, streaming: bool) -> AsyncIterator[Any]:
    """The SDK's own path (card from the base URL, the factory chooses), HTTP+JSON only."""
    async with httpx.AsyncClient(event_hooks={"request": [wire.on_request]}, timeout=10) as http:
        config = ClientConfig(httpx_client=http, streaming=streaming,
                              supported_protocol_bindings=["HTTP+JSON"])
        client = await create_client(url, config)
        try:
            yield client
        finally:
            await client.close()


def user_message(text: str, **fields: Any) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(message=pb.Message(
        message_id=f"m-{uuid.uuid4()}", role=pb.Role.ROLE_USER, parts=[pb.Part(text=text)],
        **fields))


def _agent(msg: Message, ctx: AgentContext) -> Any:
    text = msg.text
    if text == "hold":
        ctx.emit_status(TaskState.WORKING, "holding")
        deadline = time.monotonic() + 10
        while not ctx.is_cancelled() and time.monotonic() < deadline:
            time.sleep(0.01)
        return None if ctx.is_cancelled() else reply("released")
    if text == "count":
        return stream(iter(["one ", "two ", "three"]), artifact_name="counting")
    if text == "direct":
        return message("direct: direct")
    return reply(*msg.parts)


@pytest.fixture(scope="module")
def ours(serve_ours: Callable[..., ServerHandle]) -> ServerHandle:
    agent = OurAgent.from_function(_agent, name="Ours over REST",
                                   skills=[AgentSkill(id="echo", name="Echo")])
    return serve_ours(
        agent,
        card=CardSettings(overrides={"capabilities": {"push_notifications": True}}),
    )


# -- the SDK's client against our server ----------------------------------------------------


def test_sdk_picks_our_http_json_interface_and_sends(ours: ServerHandle) -> None:
    wire = Wire()

    async def send() -> tuple[list[pb.StreamResponse], list[pb.StreamResponse]]:
        async with sdk_client(ours.url, wire, streaming=False) as client:
            sent = [e async for e in client.send_message(user_message("hello REST"))]
            direct = [e async for e in client.send_message(user_message("direct"))]
            return sent, direct

    sent, direct = run(send())
    task = sent[0].task
    assert task.status.state == STATES.TASK_STATE_COMPLETED
    assert [p.text for a in task.artifacts for p in a.parts] == ["hello REST"]
    assert direct[0].WhichOneof("payload") == "message"
    assert [p.text for p in direct[0].message.parts] == ["direct: direct"]
    assert wire.rest_calls() == [("POST", "/message:send")] * 2
    assert {version for _, path, version in wire.calls if "/rest/" in path} == {"1.0"}


def test_sdk_streams_over_http_json(ours: ServerHandle) -> None:
    wire = Wire()

    async def consume() -> list[pb.StreamResponse]:
        async with sdk_client(ours.url, wire, streaming=True) as client:
            return [e async for e in client.send_message(user_message("count"))]

    events = run(consume())
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds[0] == "task" and kinds[-1] == "status_update"
    assert events[-1].status_update.status.state == STATES.TASK_STATE_COMPLETED
    chunks = [e.artifact_update.artifact.parts[0].text for e in events
              if e.HasField("artifact_update")]
    assert "".join(chunks) == "one two three"
    assert wire.rest_calls() == [("POST", "/message:stream")]


def test_sdk_get_and_list_with_filters(ours: ServerHandle) -> None:
    wire = Wire()
    context = f"ctx-{uuid.uuid4()}"

    async def scenario() -> tuple[pb.Task, pb.Task, pb.ListTasksResponse, pb.ListTasksResponse]:
        async with sdk_client(ours.url, wire, streaming=False) as client:
            sent = [e async for e in client.send_message(
                user_message("listed", context_id=context))][0].task
            got = await client.get_task(pb.GetTaskRequest(id=sent.id, history_length=1))
            listed = await client.list_tasks(pb.ListTasksRequest(
                context_id=context, status=STATES.TASK_STATE_COMPLETED, page_size=5,
                include_artifacts=True))
            none = await client.list_tasks(pb.ListTasksRequest(
                context_id=context, status=STATES.TASK_STATE_WORKING))
            return sent, got, listed, none

    sent, got, listed, none = run(scenario())
    assert got.id == sent.id and len(got.history) == 1
    assert [t.id for t in listed.tasks] == [sent.id]
    assert listed.tasks[0].artifacts[0].parts[0].text == "listed"
    assert list(none.tasks) == []
    paths = wire.rest_calls()
    assert paths[:2] == [("POST", "/message:send"), ("GET", f"/tasks/{sent.id}")]
    assert paths[2:] == [("GET", "/tasks")] * 2


def test_sdk_cancel_while_subscribed(ours: ServerHandle) -> None:
    wire = Wire()

    async def scenario() -> tuple[pb.Task, list[pb.StreamResponse]]:
        async with sdk_client(ours.url, wire, streaming=False) as client, \
                sdk_client(ours.url, wire, streaming=True) as streaming:
            request = user_message("hold")
            request.configuration.return_immediately = True
            sent = [e async for e in client.send_message(request)][0].task
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
            return canceled, events

    canceled, events = run(scenario())
    assert canceled.status.state == STATES.TASK_STATE_CANCELED
    assert events[0].WhichOneof("payload") == "task"
    assert events[-1].status_update.status.state == STATES.TASK_STATE_CANCELED
    assert ("POST", f"/tasks/{canceled.id}:subscribe") in wire.rest_calls()
    assert ("POST", f"/tasks/{canceled.id}:cancel") in wire.rest_calls()


def test_sdk_push_config_crud(ours: ServerHandle) -> None:
    wire = Wire()

    async def scenario() -> tuple[Any, ...]:
        async with sdk_client(ours.url, wire, streaming=False) as client:
            task = [e async for e in client.send_message(user_message("hooked"))][0].task
            created = await client.create_task_push_notification_config(
                pb.TaskPushNotificationConfig(task_id=task.id, id="cfg-1",
                                              url="https://hooks.example/a2a", token="tok"))
            got = await client.get_task_push_notification_config(
                pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-1"))
            listed = await client.list_task_push_notification_configs(
                pb.ListTaskPushNotificationConfigsRequest(task_id=task.id))
            await client.delete_task_push_notification_config(
                pb.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-1"))
            after = await client.list_task_push_notification_configs(
                pb.ListTaskPushNotificationConfigsRequest(task_id=task.id))
            return task, created, got, listed, after

    task, created, got, listed, after = run(scenario())
    assert (created.task_id, created.id, created.url, created.token) == \
        (task.id, "cfg-1", "https://hooks.example/a2a", "tok")
    assert got == created and list(listed.configs) == [created]
    assert list(after.configs) == []
    hooks = f"/tasks/{task.id}/pushNotificationConfigs"
    assert wire.rest_calls()[1:] == [("POST", hooks), ("GET", f"{hooks}/cfg-1"), ("GET", hooks),
                                     ("DELETE", f"{hooks}/cfg-1"), ("GET", hooks)]


def test_sdk_typed_errors_over_http_json(ours: ServerHandle) -> None:
    async def scenario() -> None:
        async with sdk_client(ours.url, Wire(), streaming=False) as client, \
                sdk_client(ours.url, Wire(), streaming=True) as streaming:
            with pytest.raises(TaskNotFoundError):
                await client.get_task(pb.GetTaskRequest(id="no-such-task"))
            done = [e async for e in client.send_message(user_message("x"))][0].task
            with pytest.raises(TaskNotCancelableError):
                await client.cancel_task(pb.CancelTaskRequest(id=done.id))
            with pytest.raises(UnsupportedOperationError):
                [e async for e in streaming.subscribe(pb.SubscribeToTaskRequest(id=done.id))]
            follow_up = user_message("more", task_id="no-such-task")
            with pytest.raises(TaskNotFoundError):
                [e async for e in streaming.send_message(follow_up)]

    run(scenario())


# -- our client against the SDK's REST server ------------------------------------------------


@pytest.fixture(scope="module")
def sdk_rest_url() -> Iterator[str]:
    proc = subprocess.Popen([sys.executable, str(SDK_REST_SERVER)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            cwd=str(SDK_REST_SERVER.parent))
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 20)
        line = proc.stdout.readline() if ready else ""
        if not line.startswith("LISTENING "):
            raise RuntimeError(f"SDK REST server did not start: {line!r}")
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


def test_our_client_picks_the_sdk_rest_interface(sdk_rest_url: str) -> None:
    """The SDK card lists only HTTP+JSON: binding="auto" finds it without being told."""
    with A2AClient(sdk_rest_url) as client:
        assert client.binding == "HTTP+JSON"
        assert client.endpoint.url == sdk_rest_url + "/rest"
        done = client.send_message("hello SDK")
        assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
        assert done.artifacts[0].parts[0].text == "echo: hello SDK"  # type: ignore[union-attr]


def test_our_client_every_operation_against_the_sdk(sdk_rest_url: str) -> None:
    with A2AClient(sdk_rest_url, binding="HTTP+JSON") as client:
        context = str(uuid.uuid4())
        done = client.send_message("listed", context_id=context)
        assert isinstance(done, Task)
        assert client.get_task(done.id, history_length=1).id == done.id
        listed = list(client.list_tasks(context_id=context, status=TaskState.COMPLETED))
        assert [t.id for t in listed] == [done.id]
        direct = client.send_message("direct hi")
        assert isinstance(direct, Message) and direct.text == "direct: direct hi"

        events = list(client.stream_message("stream please"))
        assert isinstance(events[0], Task)
        last = events[-1]
        assert isinstance(last, OurStatusUpdate) and last.status.state is TaskState.COMPLETED

        held = client.send_message("hold on", blocking=False)
        assert isinstance(held, Task)
        config = client.create_task_push_notification_config(
            held.id, PushNotificationConfig(url="https://hooks.example/a2a", id="cfg-1"))
        assert client.get_task_push_notification_config(held.id, "cfg-1") == config
        assert client.list_task_push_notification_configs(held.id) == [config]
        client.delete_task_push_notification_config(held.id, "cfg-1")
        deadline = time.monotonic() + 5
        while client.get_task(held.id).status.state is not TaskState.WORKING:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        with client.subscribe(held.id) as subscription:
            first = next(subscription)
            assert isinstance(first, Task) and first.id == held.id
            assert client.cancel_task(held.id).status.state is TaskState.CANCELED
            states = [e.status.state for e in subscription
                      if isinstance(e, (Task, OurStatusUpdate))]
        assert states[-1] is TaskState.CANCELED
        with pytest.raises(OurTaskNotCancelable):
            client.cancel_task(held.id)
        with pytest.raises(OurTaskNotFound):
            client.get_task("no-such-task")
