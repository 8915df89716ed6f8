"""A gRPC stream whose server goes away is resubscribed, and follows its task to the end."""

from __future__ import annotations

import threading
import uuid

from grpc_support import TIMEOUT, grpc_app

from a2a_client import A2AClient
from a2a_client._cards import Endpoint
from a2a_client.grpc_binding import GrpcChannel
from a2a_core.models import (
    CancelTaskRequest,
    Message,
    Role,
    SendMessageRequest,
    Task,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_core.optable import Operation
from a2a_wsgi.grpc import serve_grpc


def test_a_stream_cut_by_a_server_restart_resumes_with_subscribe() -> None:
    app = grpc_app()
    first_server = serve_grpc(app, "127.0.0.1:0")
    port = first_server.port
    endpoint = Endpoint(url=f"127.0.0.1:{port}", version="1.0", binding="GRPC")
    channel = GrpcChannel(lambda: endpoint)
    request = SendMessageRequest(message=Message(
        role=Role.USER, parts=[TextPart(text="wait")], message_id=f"m-{uuid.uuid4()}"))
    events = channel.stream(Operation.SEND_STREAMING_MESSAGE, request)
    second_server = None
    try:
        task = next(events)
        assert isinstance(task, Task)
        working = next(events)
        assert isinstance(working, TaskStatusUpdateEvent)
        first_server.stop(0)  # the open stream is cut; the task goes on in the runtime
        second_server = serve_grpc(app, f"127.0.0.1:{port}")
        canceler = threading.Timer(1.0, lambda: channel.call(
            Operation.CANCEL_TASK, CancelTaskRequest(id=task.id), TIMEOUT))
        canceler.start()
        rest = list(events)
        canceler.join()
    finally:
        events.close()
        if second_server is not None:
            second_server.stop(0)
        channel.close()
        app.close()
    assert events.reconnects == 1
    # SubscribeToTask's snapshot (after what the cut stream had already delivered)
    assert [e.id for e in rest if isinstance(e, Task)] == [task.id]
    last = rest[-1]
    assert isinstance(last, TaskStatusUpdateEvent) and last.status.state == TaskState.CANCELED


def test_the_clients_grpc_stream_resumes_after_a_server_restart() -> None:
    """``A2AClient(binding="GRPC")``'s stream is an EventStream: cut, it resubscribes."""
    app = grpc_app()
    first_server = serve_grpc(app, "127.0.0.1:0")
    target = f"127.0.0.1:{first_server.port}"
    client = A2AClient("http://127.0.0.1:9", endpoint=target, binding="GRPC",
                       reconnect_delay=0.2)
    events = client.stream_message("wait")
    second_server = None
    try:
        task = next(events)
        assert isinstance(task, Task)
        assert isinstance(next(events), TaskStatusUpdateEvent)
        first_server.stop(0)  # the open stream is cut; the task goes on in the runtime
        second_server = serve_grpc(app, target)
        canceler = threading.Timer(1.0, client.cancel_task, args=(task.id,))
        canceler.start()
        rest = list(events)
        canceler.join()
    finally:
        events.close()
        if second_server is not None:
            second_server.stop(0)
        client.close()
        app.close()
    assert events.reconnects >= 1
    last = rest[-1]
    assert isinstance(last, TaskStatusUpdateEvent) and last.status.state == TaskState.CANCELED
