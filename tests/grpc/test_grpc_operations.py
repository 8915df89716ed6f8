"""Every A2A 1.0 operation over real gRPC, with our client binding, against a real A2AApp."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Mapping

import grpc
import pytest
from grpc_support import TIMEOUT, Both, grpc_app, served_both

from a2a_client import A2AClient
from a2a_client.grpc_binding import GrpcChannel, GrpcStatusError, status_error
from a2a_core._grpc import SERVICE_NAME, grpc_methods, request_message
from a2a_core.errors import (
    ExtensionSupportRequiredError,
    InternalError,
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    VersionNotSupportedError,
)
from a2a_core.extensions import Extension
from a2a_core.models import (
    CancelTaskRequest,
    DataPart,
    DeleteTaskPushNotificationConfigRequest,
    FilePart,
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
from a2a_wsgi.settings import LimitSettings, ProtocolSettings


def _send(text: str, **options: object) -> SendMessageRequest:
    msg = Message(role=Role.USER, parts=[TextPart(text=text)], message_id=f"m-{uuid.uuid4()}")
    return SendMessageRequest(message=msg, **options)  # type: ignore[arg-type]


def _task(channel: GrpcChannel, text: str = "hello") -> Task:
    result = channel.call(Operation.SEND_MESSAGE, _send(text), TIMEOUT)
    assert isinstance(result, Task)
    return result


def test_send_message_answers_the_completed_task(both: Both) -> None:
    channel = both.channel()
    task = _task(channel, "hello")
    assert task.status.state == TaskState.COMPLETED
    assert [p.text for a in task.artifacts or [] for p in a.parts] == ["echo: hello"]
    assert channel.server_version == "1.0"


def test_send_message_answers_a_bare_message(both: Both) -> None:
    result = both.channel().call(Operation.SEND_MESSAGE, _send("direct"), TIMEOUT)
    assert isinstance(result, Message) and result.text == "direct answer"


def test_every_kind_of_part_travels_unchanged(both: Both) -> None:
    """ProtoJSON of the proto's Part is the 1.0 JSON of our parts: raw bytes (base64), URLs,
    any JSON data, media types, file names and metadata come back as they went."""
    parts = (
        TextPart(text="parts", media_type="text/plain", metadata={"k": "v", "n": 1.5}),
        FilePart(raw=b"\x00\x01binary\xff", filename="b.bin", media_type="application/x"),
        FilePart(url="https://example.com/f.pdf", filename="f.pdf", media_type="application/pdf"),
        DataPart(data={"list": [1.0, "two", None, True], "nested": {"x": 2.5}}),
        DataPart(data=["a", 3.0]),
    )
    msg = Message(role=Role.USER, parts=parts, message_id=f"m-{uuid.uuid4()}")
    task = both.channel().call(Operation.SEND_MESSAGE, SendMessageRequest(message=msg), TIMEOUT)
    assert isinstance(task, Task)
    assert tuple(p for a in task.artifacts or [] for p in a.parts) == parts


def test_get_task_reads_what_was_sent_and_cuts_history(both: Both) -> None:
    channel = both.channel()
    task = _task(channel)
    got = channel.call(Operation.GET_TASK, GetTaskRequest(id=task.id, history_length=1), TIMEOUT)
    assert got.id == task.id and got.status.state == TaskState.COMPLETED
    assert len(got.history or []) == 1


def test_list_tasks_filters_by_context(both: Both) -> None:
    channel = both.channel()
    first = _task(channel)
    follow = Message(role=Role.USER, parts=[TextPart(text="again")], message_id=f"m-{uuid.uuid4()}",
                     context_id=first.context_id)
    second = channel.call(Operation.SEND_MESSAGE, SendMessageRequest(message=follow), TIMEOUT)
    assert isinstance(second, Task)
    page = channel.call(Operation.LIST_TASKS, ListTasksRequest(context_id=first.context_id),
                        TIMEOUT)
    assert {t.id for t in page.tasks} == {first.id, second.id}
    assert page.total_size == 2


def test_cancel_task_cancels_a_working_task(both: Both) -> None:
    channel = both.channel()
    sent = channel.call(Operation.SEND_MESSAGE,
                        _send("wait", configuration=SendMessageConfiguration(
                            blocking=False)), TIMEOUT)
    assert isinstance(sent, Task)
    canceled = channel.call(Operation.CANCEL_TASK, CancelTaskRequest(id=sent.id), TIMEOUT)
    assert canceled.status.state == TaskState.CANCELED


def test_push_configs_are_created_read_listed_and_deleted(both: Both) -> None:
    channel = both.channel()
    task = _task(channel)
    config = TaskPushNotificationConfig(
        task_id=task.id,
        push_notification_config=PushNotificationConfig(url="https://example.com/hook",
                                                        id="cfg-1", token="tok"))
    created = channel.call(Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG, config, TIMEOUT)
    assert created.push_notification_config.url == "https://example.com/hook"
    got = channel.call(Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
                       GetTaskPushNotificationConfigRequest(task_id=task.id, config_id="cfg-1"),
                       TIMEOUT)
    assert got.push_notification_config.token == "tok"
    listed = channel.call(Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
                          ListTaskPushNotificationConfigsRequest(task_id=task.id), TIMEOUT)
    assert [c.push_notification_config.id for c in listed.configs] == ["cfg-1"]
    deleted = channel.call(Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
                           DeleteTaskPushNotificationConfigRequest(task_id=task.id,
                                                                   config_id="cfg-1"), TIMEOUT)
    assert deleted is None
    listed = channel.call(Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
                          ListTaskPushNotificationConfigsRequest(task_id=task.id), TIMEOUT)
    assert list(listed.configs) == []


def test_extended_card_is_the_apps(both: Both) -> None:
    card = both.channel().call(Operation.GET_EXTENDED_AGENT_CARD, GetExtendedAgentCardRequest(),
                               TIMEOUT)
    assert card.name == "gRPC Agent (extended)"


def test_streaming_send_yields_each_event_until_completed(both: Both) -> None:
    with both.channel().stream(Operation.SEND_STREAMING_MESSAGE, _send("words")) as events:
        seen = list(events)
    assert isinstance(seen[0], Task)
    chunks = [e.artifact.parts[0].text for e in seen if isinstance(e, TaskArtifactUpdateEvent)]
    assert chunks == ["one", "two", "three", "done"]
    last = seen[-1]
    assert isinstance(last, TaskStatusUpdateEvent) and last.status.state == TaskState.COMPLETED


def test_subscribe_follows_a_working_task_to_its_end(both: Both) -> None:
    channel = both.channel()
    sent = channel.call(Operation.SEND_MESSAGE,
                        _send("wait", configuration=SendMessageConfiguration(
                            blocking=False)), TIMEOUT)
    assert isinstance(sent, Task)
    with channel.stream(Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=sent.id)) as events:
        first = next(events)
        assert isinstance(first, Task) and first.id == sent.id
        canceler = threading.Timer(0.2, lambda: channel.call(
            Operation.CANCEL_TASK, CancelTaskRequest(id=sent.id), TIMEOUT))
        canceler.start()
        rest = list(events)
        canceler.join()
    states = [e.status.state for e in rest if isinstance(e, TaskStatusUpdateEvent)]
    assert states[-1] == TaskState.CANCELED


def test_closing_a_stream_cancels_the_rpc_and_frees_its_place() -> None:
    with served_both(grpc_app()) as served:  # its own app: no other test's stream open
        channel = served.channel()
        events = channel.stream(Operation.SEND_STREAMING_MESSAGE, _send("wait"))
        first = next(events)
        assert isinstance(first, Task)
        assert served.app.streams.open == 1
        events.close()
        deadline = time.monotonic() + 5  # given back once the server sees the cancel
        while served.app.streams.open and time.monotonic() < deadline:
            time.sleep(0.02)
        assert served.app.streams.open == 0
        channel.call(Operation.CANCEL_TASK, CancelTaskRequest(id=first.id), TIMEOUT)


def test_a_stream_past_the_places_is_unavailable() -> None:
    with served_both(grpc_app(limits=LimitSettings(max_streams=1))) as served:
        channel = served.channel()
        with channel.stream(Operation.SEND_STREAMING_MESSAGE, _send("wait")) as held:
            first = next(held)
            assert isinstance(first, Task)
            with pytest.raises(InternalError, match="busy"):
                channel.stream(Operation.SEND_STREAMING_MESSAGE, _send("hi"))
            channel.call(Operation.CANCEL_TASK, CancelTaskRequest(id=first.id), TIMEOUT)


# -- errors ------------------------------------------------------------------------------


def test_an_unknown_task_is_task_not_found(both: Both) -> None:
    with pytest.raises(TaskNotFoundError) as raised:
        both.channel().call(Operation.GET_TASK, GetTaskRequest(id="no-such-task"), TIMEOUT)
    assert "no-such-task" in raised.value.message


def test_canceling_a_completed_task_is_not_cancelable(both: Both) -> None:
    channel = both.channel()
    task = _task(channel)
    with pytest.raises(TaskNotCancelableError):
        channel.call(Operation.CANCEL_TASK, CancelTaskRequest(id=task.id), TIMEOUT)


def test_subscribing_to_an_unknown_task_raises_at_the_call(both: Both) -> None:
    with pytest.raises(TaskNotFoundError):
        both.channel().stream(Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id="nope"))


def test_a_task_sent_over_grpc_is_read_over_json_rpc(both: Both) -> None:
    task = _task(both.channel(), "across")
    client = A2AClient(both.url, binding="JSONRPC")
    got = client.get_task(task.id)
    assert got.status.state == TaskState.COMPLETED
    assert [p.text for a in got.artifacts or [] for p in a.parts] == ["echo: across"]


def test_a_task_sent_over_json_rpc_is_read_over_grpc(both: Both) -> None:
    client = A2AClient(both.url, binding="JSONRPC")
    sent = client.send_message("from http")
    assert isinstance(sent, Task)
    got = both.channel().call(Operation.GET_TASK, GetTaskRequest(id=sent.id), TIMEOUT)
    assert got.id == sent.id and got.status.state == TaskState.COMPLETED


def test_a_bad_argument_is_invalid_params(both: Both) -> None:
    with pytest.raises(InvalidParamsError):
        both.channel().call(Operation.LIST_TASKS, ListTasksRequest(page_size=-1), TIMEOUT)


def test_a_version_other_than_1_0_is_refused_with_unimplemented(both: Both) -> None:
    method = next(m for m in grpc_methods() if m.operation.name == "GetTask")
    with grpc.insecure_channel(both.target) as channel:
        rpc = channel.unary_unary(method.path, request_serializer=lambda m: m.SerializeToString(),
                                  response_deserializer=method.response.FromString)
        with pytest.raises(grpc.RpcError) as raised:
            rpc(request_message(method, {"id": "t"}), metadata=[("a2a-version", "0.3")],
                timeout=10)
    assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED  # type: ignore[attr-defined]
    assert isinstance(status_error(raised.value), VersionNotSupportedError)


def test_the_health_service_says_serving(both: Both) -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(both.target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        for service in ("", SERVICE_NAME):
            answer = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
            assert answer.status == health_pb2.HealthCheckResponse.SERVING


def test_an_rpc_the_service_lacks_is_unimplemented(both: Both) -> None:
    with grpc.insecure_channel(both.target) as channel:
        rpc = channel.unary_unary(f"/{SERVICE_NAME}/NoSuchOperation")
        with pytest.raises(grpc.RpcError) as raised:
            rpc(b"", timeout=10)
    assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED  # type: ignore[attr-defined]
    assert isinstance(status_error(raised.value), GrpcStatusError)


class _Traced(Extension):
    uri = "https://example.com/ext/traced"


class _Needed(Extension):
    uri = "https://example.com/ext/needed"
    required = True


def test_extensions_are_negotiated_over_metadata() -> None:
    """``a2a-extensions`` asks, the initial metadata says what was activated; a required
    extension not asked for is FAILED_PRECONDITION (ExtensionSupportRequired)."""
    app = grpc_app(protocol=ProtocolSettings(extensions=(_Traced(),)))
    with served_both(app) as served:
        asking = served.channel(extensions=[_Traced.uri, "https://example.com/ext/unknown"])
        assert isinstance(asking.call(Operation.SEND_MESSAGE, _send("hi"), TIMEOUT), Task)
        assert asking.activated_extensions == (_Traced.uri,)
        plain = served.channel()
        plain.call(Operation.SEND_MESSAGE, _send("hi"), TIMEOUT)
        assert plain.activated_extensions == ()
    with served_both(grpc_app(protocol=ProtocolSettings(extensions=(_Needed(),)))) as served:
        with pytest.raises(ExtensionSupportRequiredError):
            served.channel().call(Operation.SEND_MESSAGE, _send("hi"), TIMEOUT)
        assert isinstance(served.channel(extensions=[_Needed.uri]).call(
            Operation.SEND_MESSAGE, _send("hi"), TIMEOUT), Task)


class _Broken(Extension):
    uri = "https://example.com/ext/broken"

    def activate(self, requested: tuple[str, ...], context: Mapping[str, object]) -> None:
        raise ValueError("secret detail of the deployment")


def test_an_unexpected_failure_is_internal_without_its_details() -> None:
    """What the server did not expect (here a deployment's extension hook that raises) is
    INTERNAL with a plain message: no exception text, no traceback reaches the peer."""
    with served_both(grpc_app(protocol=ProtocolSettings(extensions=(_Broken(),)))) as served:
        with grpc.insecure_channel(served.target) as channel:
            method = next(m for m in grpc_methods() if m.operation.name == "GetTask")
            rpc = channel.unary_unary(method.path,
                                      request_serializer=lambda m: m.SerializeToString(),
                                      response_deserializer=method.response.FromString)
            with pytest.raises(grpc.RpcError) as raised:
                rpc(request_message(method, {"id": "t-1"}), timeout=10,
                    metadata=[("a2a-extensions", _Broken.uri)])
    error = raised.value
    assert error.code() == grpc.StatusCode.INTERNAL  # type: ignore[attr-defined]
    details = error.details()  # type: ignore[attr-defined]
    assert "secret" not in details and "Traceback" not in details
    assert isinstance(status_error(error), InternalError)
