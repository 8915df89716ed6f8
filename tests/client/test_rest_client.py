"""The HTTP+JSON client binding against the official SDK's REST server, over real sockets.

The peer is ``a2a-sdk``'s ``create_rest_routes`` under uvicorn, in a subprocess of
its own process group (this file, run as a script, is that server: the interop
suite's executor behind REST routes, with push configs enabled). A second, tiny
werkzeug peer answers the one case the SDK cannot show: a server that serves
SubscribeToTask only as GET, as the proto's annotation says.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from a2a_client._cards import Endpoint, fetch_card
from a2a_client._channel import Channel
from a2a_client._errors import HTTPStatusError
from a2a_client._rest import RestChannel, rest_stream_event, select_rest_endpoint
from a2a_client._rpc import RPCChannel
from a2a_client._streams import EventStream
from a2a_client._transport import Transport
from a2a_core._caching import CardCache
from a2a_core.errors import (
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_core.models import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    PushNotificationConfig,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_core.optable import Operation

pytestmark = pytest.mark.slow  # starts uvicorn in a subprocess (once per module, ~2 s)

HERE = Path(__file__).resolve().parent
INTEROP = HERE.parent / "interop"
START_TIMEOUT = 20.0
TIMEOUT = (5.0, 30.0)
#: Where the SDK app mounts its REST routes (so the interface URL has a path).
REST_PREFIX = "/rest"


# -- the SDK's REST server (this file as a script) ------------------------------------------


def _serve() -> None:
    """Bind first, print ``LISTENING <port>``, then serve the SDK's REST routes until killed."""
    import socket

    import uvicorn
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_rest_routes
    from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore
    from a2a.types.a2a_pb2 import AgentCapabilities, AgentInterface
    from starlette.applications import Starlette

    sys.path.insert(0, str(INTEROP))
    from sdk_server import InteropExecutor, build_card

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    card = build_card(f"http://127.0.0.1:{port}/")
    del card.supported_interfaces[:]
    card.supported_interfaces.append(
        AgentInterface(
            url=f"http://127.0.0.1:{port}{REST_PREFIX}",
            protocol_binding="HTTP+JSON",
            protocol_version="1.0",
        )
    )
    card.capabilities.CopyFrom(AgentCapabilities(streaming=True, push_notifications=True))
    handler = DefaultRequestHandler(
        agent_executor=InteropExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=InMemoryPushNotificationConfigStore(),
    )
    routes = [
        *create_agent_card_routes(card),
        *create_rest_routes(handler, path_prefix=REST_PREFIX),
    ]
    config = uvicorn.Config(Starlette(routes=routes), log_level="warning", lifespan="off")
    print(f"LISTENING {port}", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


@pytest.fixture(scope="module")
def sdk_base() -> Iterator[str]:
    """Base URL of the SDK agent (its card is at the well-known path there)."""
    for name in ("a2a", "uvicorn", "starlette", "sse_starlette"):
        pytest.importorskip(name)
    proc = subprocess.Popen(
        [sys.executable, __file__],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        cwd=str(HERE),
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], START_TIMEOUT)
        line = proc.stdout.readline() if ready else ""
        if not line.startswith("LISTENING "):
            raise RuntimeError(f"SDK REST server did not start: {line!r}")
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        _kill_group(proc)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGTERM our child's process group, SIGKILL it if it lingers, and reap the child."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=5)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


@pytest.fixture
def transport() -> Iterator[Transport]:
    transport = Transport()
    yield transport
    transport.close()


@pytest.fixture
def channel(sdk_base: str, transport: Transport) -> RestChannel:
    return RestChannel(transport, lambda: Endpoint(url=sdk_base + REST_PREFIX, version="1.0"), ())


def _message(text: str, *, context_id: str | None = None, task_id: str | None = None) -> Message:
    return Message(
        message_id=str(uuid.uuid4()),
        role=Role.USER,
        parts=(TextPart(text=text),),
        context_id=context_id,
        task_id=task_id,
    )


def _send(
    channel: RestChannel, text: str, *, blocking: bool = True, context_id: str | None = None
) -> Any:
    message = _message(text, context_id=context_id)
    request = SendMessageRequest(
        message=message, configuration=SendMessageConfiguration(blocking=blocking)
    )
    return channel.call(Operation.SEND_MESSAGE, request, TIMEOUT)


def _stream(channel: RestChannel, op: Operation, request: Any) -> EventStream:
    return EventStream(lambda: channel.open_stream(op, request, TIMEOUT), rest_stream_event)


def _wait_state(channel: RestChannel, task_id: str, state: TaskState) -> Task:
    """GetTask until ``state`` (the SDK publishes WORKING a moment after the send returns)."""
    import time

    deadline = time.monotonic() + 10
    while True:
        task: Task = channel.call(Operation.GET_TASK, GetTaskRequest(id=task_id), TIMEOUT)
        if task.status.state is state or time.monotonic() > deadline:
            return task
        time.sleep(0.05)


# -- discovery ------------------------------------------------------------------------------


def test_both_channels_satisfy_the_channel_protocol(transport: Transport) -> None:
    endpoint = Endpoint(url="http://127.0.0.1:1/", version="1.0")
    channels: list[Channel] = [
        RestChannel(transport, lambda: endpoint, ()),
        RPCChannel(transport, lambda: endpoint, ()),
    ]
    assert all(channel.server_version is None for channel in channels)


def test_the_card_names_the_http_json_interface(sdk_base: str, transport: Transport) -> None:
    card, card_url = fetch_card(
        transport, sdk_base, CardCache(), timeout=TIMEOUT, now=lambda: datetime.now(timezone.utc)
    )
    assert select_rest_endpoint(card, card_url) == Endpoint(
        url=sdk_base + REST_PREFIX, version="1.0", tenant=None, binding="HTTP+JSON"
    )


# -- send, get, list, cancel ----------------------------------------------------------------


def test_send_answers_the_completed_task(channel: RestChannel) -> None:
    task = _send(channel, "hello")
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert task.artifacts[0].parts[0] == TextPart(text="echo: hello")


def test_send_answers_a_direct_message(channel: RestChannel) -> None:
    reply = _send(channel, "direct hi")
    assert isinstance(reply, Message) and reply.role is Role.AGENT
    assert reply.text == "direct: direct hi"


def test_get_task_with_history_length(channel: RestChannel) -> None:
    task = _send(channel, "remember me")
    got = channel.call(Operation.GET_TASK, GetTaskRequest(id=task.id, history_length=1), TIMEOUT)
    assert got.id == task.id and got.status.state is TaskState.COMPLETED
    assert len(got.history) == 1


def test_list_tasks_filters_by_context_and_state(channel: RestChannel) -> None:
    context_id = str(uuid.uuid4())
    done = _send(channel, "listed", context_id=context_id)
    _send(channel, "elsewhere")
    request = ListTasksRequest(
        context_id=context_id, status=TaskState.COMPLETED, page_size=10, include_artifacts=True
    )
    page = channel.call(Operation.LIST_TASKS, request, TIMEOUT)
    assert isinstance(page, ListTasksResponse)
    assert [t.id for t in page.tasks] == [done.id]
    assert page.tasks[0].artifacts[0].parts[0] == TextPart(text="echo: listed")
    working = ListTasksRequest(context_id=context_id, status=TaskState.WORKING)
    assert channel.call(Operation.LIST_TASKS, working, TIMEOUT).tasks == ()


def test_cancel_then_cancel_again(channel: RestChannel) -> None:
    task = _send(channel, "hold on", blocking=False)
    _wait_state(channel, task.id, TaskState.WORKING)
    request = CancelTaskRequest(id=task.id, metadata={"why": "test"})
    canceled = channel.call(Operation.CANCEL_TASK, request, TIMEOUT)
    assert canceled.id == task.id and canceled.status.state is TaskState.CANCELED
    with pytest.raises(TaskNotCancelableError):
        channel.call(Operation.CANCEL_TASK, request, TIMEOUT)


# -- streams --------------------------------------------------------------------------------


def test_stream_message(channel: RestChannel) -> None:
    request = SendMessageRequest(message=_message("stream please"))
    with _stream(channel, Operation.SEND_STREAMING_MESSAGE, request) as stream:
        events: list[StreamEvent] = list(stream)
    assert isinstance(events[0], Task)
    chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    texts = [p.text for e in chunks for p in e.artifact.parts if isinstance(p, TextPart)]
    assert "".join(texts) == "one two three"
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent) and last.status.state is TaskState.COMPLETED


def test_subscribe_sees_the_task_then_its_cancellation(channel: RestChannel) -> None:
    task = _send(channel, "hold still", blocking=False)
    _wait_state(channel, task.id, TaskState.WORKING)
    with _stream(channel, Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=task.id)) as s:
        first = next(s)
        assert isinstance(first, Task) and first.id == task.id
        channel.call(Operation.CANCEL_TASK, CancelTaskRequest(id=task.id), TIMEOUT)
        rest = list(s)
    states = [e.status.state for e in rest if isinstance(e, (Task, TaskStatusUpdateEvent))]
    assert states[-1] is TaskState.CANCELED


def test_subscribe_to_a_finished_task_raises_at_the_call(channel: RestChannel) -> None:
    task = _send(channel, "quick")
    with pytest.raises(UnsupportedOperationError, match="terminal"):
        _stream(channel, Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=task.id))


def test_stream_of_an_unknown_task_raises_task_not_found(channel: RestChannel) -> None:
    message = _message("more", task_id="no-such-task")
    with pytest.raises(TaskNotFoundError):
        _stream(channel, Operation.SEND_STREAMING_MESSAGE, SendMessageRequest(message=message))


# -- push-notification configs --------------------------------------------------------------


def test_push_config_create_get_list_delete(channel: RestChannel) -> None:
    task = _send(channel, "with push")
    config = PushNotificationConfig(url="https://hooks.example/a2a", id="cfg-1", token="tok")
    create = TaskPushNotificationConfig(task_id=task.id, push_notification_config=config)
    created = channel.call(Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG, create, TIMEOUT)
    assert created == create
    get = GetTaskPushNotificationConfigRequest(task_id=task.id, config_id="cfg-1")
    assert channel.call(Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG, get, TIMEOUT) == create
    listed = channel.call(
        Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
        ListTaskPushNotificationConfigsRequest(task_id=task.id),
        TIMEOUT,
    )
    assert isinstance(listed, ListTaskPushNotificationConfigsResponse)
    assert listed.configs == (create,)
    delete = DeleteTaskPushNotificationConfigRequest(task_id=task.id, config_id="cfg-1")
    assert channel.call(Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG, delete, TIMEOUT) is None
    with pytest.raises(TaskNotFoundError):
        channel.call(Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG, get, TIMEOUT)


def test_get_push_config_needs_its_id_over_rest(channel: RestChannel) -> None:
    request = GetTaskPushNotificationConfigRequest(task_id="t-1")
    with pytest.raises(ValueError, match="needs id"):
        channel.call(Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG, request, TIMEOUT)


# -- errors ---------------------------------------------------------------------------------


def test_unknown_task_raises_task_not_found(channel: RestChannel) -> None:
    with pytest.raises(TaskNotFoundError) as info:
        channel.call(Operation.GET_TASK, GetTaskRequest(id="no-such-task"), TIMEOUT)
    assert info.value.message


def test_push_config_of_an_unknown_task_raises_task_not_found(channel: RestChannel) -> None:
    request = ListTaskPushNotificationConfigsRequest(task_id="no-such-task")
    with pytest.raises(TaskNotFoundError):
        channel.call(Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS, request, TIMEOUT)


def test_extended_card_not_declared_raises_unsupported(channel: RestChannel) -> None:
    with pytest.raises(UnsupportedOperationError):
        channel.call(Operation.GET_EXTENDED_AGENT_CARD, GetExtendedAgentCardRequest(), TIMEOUT)


def test_invalid_params_raise_their_class(channel: RestChannel) -> None:
    request = SendMessageRequest(message=Message(message_id="m", role=Role.USER, parts=()))
    with pytest.raises(InvalidParamsError):
        channel.call(Operation.SEND_MESSAGE, request, TIMEOUT)


def test_an_answer_without_a_status_body_is_an_http_status_error(
    sdk_base: str, transport: Transport
) -> None:
    lost = RestChannel(transport, lambda: Endpoint(url=sdk_base + "/elsewhere", version="1.0"), ())
    with pytest.raises(HTTPStatusError) as info:
        lost.call(Operation.GET_TASK, GetTaskRequest(id="t-1"), TIMEOUT)
    assert info.value.status_code == 404


# -- a server that serves SubscribeToTask only as GET ---------------------------------------


def _get_only_subscribe(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
    """POST .../t-1:subscribe is 405 (Allow: GET); GET answers one finished-task event."""
    from a2a_core._rest import RestCall, error_response, route, sse_response

    routed = route(environ["REQUEST_METHOD"], environ["PATH_INFO"], {}, b"")
    if not isinstance(routed, RestCall) or environ["REQUEST_METHOD"] != "GET":
        from a2a_core.errors import MethodNotFoundError

        response = error_response(MethodNotFoundError(), status=405, headers=[("Allow", "GET")])
    else:
        done = Task(id="t-1", context_id="c", status=TaskStatus(state=TaskState.COMPLETED))
        response = sse_response(iter([done]))
    start_response(f"{response.status} X", response.headers)
    return [response.body] if isinstance(response.body, bytes) else response.body


def test_subscribe_falls_back_to_get(serve: Callable[..., Any], transport: Transport) -> None:
    url = serve(_get_only_subscribe).url
    channel = RestChannel(transport, lambda: Endpoint(url=url, version="1.0"), ())
    with _stream(channel, Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id="t-1")) as s:
        events = list(s)
    assert len(events) == 1 and isinstance(events[0], Task)
    assert events[0].status.state is TaskState.COMPLETED


if __name__ == "__main__":
    _serve()
