"""The official SDK's gRPC client (``a2a-sdk`` 1.3.0, ``GrpcTransport``) drives our server.

The SDK is handed a card whose only interface is our gRPC port, so its own factory
picks its gRPC transport; every operation goes through it (SendMessage with a
non-streaming client config, SendStreamingMessage with a streaming one), and our errors
arrive as the SDK's own exception classes (it reads the ErrorInfo reason of our Status
details). Our server is tests/grpc/grpc_support.py's app, served over HTTP and gRPC.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest
from interop_support import require_sdk

require_sdk()
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grpc"))

from a2a.client import ClientConfig, create_client  # noqa: E402
from a2a.types import a2a_pb2 as pb  # noqa: E402
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError  # noqa: E402
from grpc_support import Both, grpc_app, served_both  # noqa: E402

from a2a_wsgi._telemetry import ACCESS_LOGGER  # noqa: E402

T = TypeVar("T")


@pytest.fixture(scope="module")
def both() -> Iterator[Both]:
    """Our app served over HTTP and gRPC (push and the extended card declared)."""
    with served_both(grpc_app()) as served:
        yield served


def run(scenario: Callable[[Any], Awaitable[T]], both: Both, *, streaming: bool = True) -> T:
    """``scenario(client)`` with the SDK's gRPC client, in a fresh event loop."""
    card = pb.AgentCard(
        name="ours", description="our server", version="1",
        capabilities=pb.AgentCapabilities(streaming=True, push_notifications=True,
                                          extended_agent_card=True),
        supported_interfaces=[pb.AgentInterface(url=both.target, protocol_binding="GRPC",
                                                protocol_version="1.0")])

    async def main() -> T:
        config = ClientConfig(streaming=streaming, supported_protocol_bindings=["GRPC"],
                              grpc_channel_factory=grpc.aio.insecure_channel)
        client = await create_client(card, config)
        try:
            return await asyncio.wait_for(scenario(client), 20)
        finally:
            await client.close()

    return asyncio.run(main())


def user_message(text: str) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(message=pb.Message(
        message_id=f"m-{time.monotonic_ns()}", role=pb.Role.ROLE_USER,
        parts=[pb.Part(text=text)]))


def test_the_sdk_streams_a_send_then_reads_and_lists(both: Both) -> None:
    async def scenario(client: Any) -> None:
        events = [e async for e in client.send_message(user_message("words"))]
        assert events[0].HasField("task")
        task_id = events[0].task.id
        kinds = [e.WhichOneof("payload") for e in events]
        assert kinds.count("artifact_update") == 4
        got = await client.get_task(pb.GetTaskRequest(id=task_id, history_length=1))
        assert got.status.state == pb.TaskState.TASK_STATE_COMPLETED
        listed = await client.list_tasks(pb.ListTasksRequest(context_id=got.context_id))
        assert [t.id for t in listed.tasks] == [task_id]

    run(scenario, both)


def test_the_sdk_sends_a_blocking_message(both: Both, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, ACCESS_LOGGER)
    async def scenario(client: Any) -> None:
        answers = [e async for e in client.send_message(user_message("blocking"))]
        assert len(answers) == 1 and answers[0].HasField("task")  # SendMessage's one answer
        task = answers[0].task
        assert task.status.state == pb.TaskState.TASK_STATE_COMPLETED
        assert [p.text for a in task.artifacts for p in a.parts] == ["echo: blocking"]
        direct = [e async for e in client.send_message(user_message("direct"))]
        assert direct[0].HasField("message") and direct[0].message.parts[0].text == \
            "direct answer"

    run(scenario, both, streaming=False)
    operations = [getattr(r, "operation", None) for r in caplog.records
                  if r.name == ACCESS_LOGGER]
    assert operations == ["SendMessage", "SendMessage"]  # the unary rpc, not the streaming one


def test_the_sdk_subscribes_and_cancels(both: Both) -> None:
    async def scenario(client: Any) -> list[int]:
        request = user_message("wait")
        request.configuration.return_immediately = True
        stream = client.send_message(request)
        first = await stream.__anext__()
        await stream.aclose()
        task_id = first.task.id if first.HasField("task") else first.status_update.task_id
        states = []

        async def cancel_soon() -> None:
            await asyncio.sleep(0.3)
            await client.cancel_task(pb.CancelTaskRequest(id=task_id))

        canceler = asyncio.ensure_future(cancel_soon())
        async for event in client.subscribe(pb.SubscribeToTaskRequest(id=task_id)):
            if event.HasField("status_update"):
                states.append(event.status_update.status.state)
        await canceler
        return states

    assert run(scenario, both)[-1] == pb.TaskState.TASK_STATE_CANCELED


def test_the_sdk_manages_push_configs_and_reads_the_extended_card(both: Both) -> None:
    async def scenario(client: Any) -> None:
        sent = [e async for e in client.send_message(user_message("hi"))]
        task_id = sent[0].task.id
        config = pb.TaskPushNotificationConfig(task_id=task_id, id="c1",
                                               url="https://example.com/hook")
        created = await client.create_task_push_notification_config(config)
        assert created.url == "https://example.com/hook"
        got = await client.get_task_push_notification_config(
            pb.GetTaskPushNotificationConfigRequest(task_id=task_id, id="c1"))
        assert got.id == "c1"
        listed = await client.list_task_push_notification_configs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=task_id))
        assert [c.id for c in listed.configs] == ["c1"]
        await client.delete_task_push_notification_config(
            pb.DeleteTaskPushNotificationConfigRequest(task_id=task_id, id="c1"))
        card = await client.get_extended_agent_card(pb.GetExtendedAgentCardRequest())
        assert card.name == "gRPC Agent (extended)"

    run(scenario, both)


def test_our_errors_are_the_sdks_exception_classes(both: Both) -> None:
    async def scenario(client: Any) -> None:
        with pytest.raises(TaskNotFoundError):
            await client.get_task(pb.GetTaskRequest(id="no-such-task"))
        done = [e async for e in client.send_message(user_message("x"))][0].task
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(pb.CancelTaskRequest(id=done.id))

    run(scenario, both)
