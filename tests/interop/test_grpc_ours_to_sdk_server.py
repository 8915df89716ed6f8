"""Our gRPC client binding calls every operation on the official SDK's gRPC server."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from interop_support import require_sdk
from support.processes import stop

from a2a_client._cards import Endpoint
from a2a_client.grpc_binding import GrpcChannel
from a2a_core.errors import TaskNotCancelableError, TaskNotFoundError
from a2a_core.models import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
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
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_core.optable import Operation

require_sdk()
pytestmark = pytest.mark.slow
SERVER = Path(__file__).resolve().parent / "sdk_grpc_server.py"
TIMEOUT = (5.0, 10.0)


@pytest.fixture(scope="module")
def sdk() -> Iterator[GrpcChannel]:
    proc = subprocess.Popen([sys.executable, str(SERVER)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("LISTENING "), line + proc.stdout.read()
        endpoint = Endpoint(url=f"127.0.0.1:{line.split()[1]}", version="1.0", binding="GRPC")
        channel = GrpcChannel(lambda: endpoint)
        yield channel
        channel.close()
    finally:
        stop(proc)


def _send(text: str, *, blocking: bool = True) -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(role=Role.USER, parts=[TextPart(text=text)],
                        message_id=f"m-{uuid.uuid4()}"),
        configuration=SendMessageConfiguration(blocking=blocking))


def test_send_get_and_list(sdk: GrpcChannel) -> None:
    task = sdk.call(Operation.SEND_MESSAGE, _send("hello"), TIMEOUT)
    assert isinstance(task, Task) and task.status.state == TaskState.COMPLETED
    assert [p.text for a in task.artifacts or [] for p in a.parts] == ["echo: hello"]
    got = sdk.call(Operation.GET_TASK, GetTaskRequest(id=task.id, history_length=1), TIMEOUT)
    assert got.id == task.id
    listed = sdk.call(Operation.LIST_TASKS, ListTasksRequest(context_id=task.context_id),
                      TIMEOUT)
    assert [t.id for t in listed.tasks] == [task.id]
    assert sdk.server_version is None  # the SDK echoes no a2a-version metadata


def test_a_bare_message_answer(sdk: GrpcChannel) -> None:
    answer = sdk.call(Operation.SEND_MESSAGE, _send("direct x"), TIMEOUT)
    assert isinstance(answer, Message) and answer.text == "direct: direct x"


def test_streaming_send(sdk: GrpcChannel) -> None:
    with sdk.stream(Operation.SEND_STREAMING_MESSAGE, _send("stream")) as events:
        seen = list(events)
    chunks = [e.artifact.parts[0].text for e in seen if isinstance(e, TaskArtifactUpdateEvent)]
    assert chunks == ["one ", "two ", "three"]
    assert isinstance(seen[-1], TaskStatusUpdateEvent)
    assert seen[-1].status.state == TaskState.COMPLETED


def test_subscribe_and_cancel(sdk: GrpcChannel) -> None:
    held = sdk.call(Operation.SEND_MESSAGE, _send("hold", blocking=False), TIMEOUT)
    assert isinstance(held, Task)
    deadline = time.monotonic() + 5
    while sdk.call(Operation.GET_TASK, GetTaskRequest(id=held.id), TIMEOUT).status.state \
            != TaskState.WORKING and time.monotonic() < deadline:
        time.sleep(0.05)
    with sdk.stream(Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=held.id)) as events:
        first = next(events)
        assert isinstance(first, Task) and first.id == held.id
        canceler = threading.Timer(0.2, lambda: sdk.call(
            Operation.CANCEL_TASK, CancelTaskRequest(id=held.id), TIMEOUT))
        canceler.start()
        states = [e.status.state for e in events if isinstance(e, TaskStatusUpdateEvent)]
        canceler.join()
    assert states[-1] == TaskState.CANCELED


def test_push_configs(sdk: GrpcChannel) -> None:
    task = sdk.call(Operation.SEND_MESSAGE, _send("hello"), TIMEOUT)
    assert isinstance(task, Task)
    config = TaskPushNotificationConfig(task_id=task.id, push_notification_config=(
        PushNotificationConfig(url="https://example.com/hook", id="c1")))
    created = sdk.call(Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG, config, TIMEOUT)
    assert created.push_notification_config.url == "https://example.com/hook"
    got = sdk.call(Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
                   GetTaskPushNotificationConfigRequest(task_id=task.id, config_id="c1"), TIMEOUT)
    assert got.push_notification_config.id == "c1"
    listed = sdk.call(Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
                      ListTaskPushNotificationConfigsRequest(task_id=task.id), TIMEOUT)
    assert [c.push_notification_config.id for c in listed.configs] == ["c1"]
    assert sdk.call(Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
                    DeleteTaskPushNotificationConfigRequest(task_id=task.id, config_id="c1"),
                    TIMEOUT) is None


def test_extended_card(sdk: GrpcChannel) -> None:
    card = sdk.call(Operation.GET_EXTENDED_AGENT_CARD, GetExtendedAgentCardRequest(), TIMEOUT)
    assert isinstance(card, AgentCard) and card.name == "SDK Echo (extended)"


def test_the_sdks_errors_are_our_error_classes(sdk: GrpcChannel) -> None:
    with pytest.raises(TaskNotFoundError):
        sdk.call(Operation.GET_TASK, GetTaskRequest(id="no-such-task"), TIMEOUT)
    done = sdk.call(Operation.SEND_MESSAGE, _send("x"), TIMEOUT)
    assert isinstance(done, Task)
    with pytest.raises(TaskNotCancelableError):
        sdk.call(Operation.CANCEL_TASK, CancelTaskRequest(id=done.id), TIMEOUT)
